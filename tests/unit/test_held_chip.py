"""A held chip, found before a run on a kept node (issue 54, item 3): the listing's parse, the
decision, the words, and the listing and ending run for real against processes on this computer
(a worker of the local transport is a folder here, its chip a file, as in practice)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.workers.held_chip import (
    TPU_DEVICE_FILES,
    ChipHeld,
    Holder,
    check_chip,
    decide,
    listing_command,
    parse_listing,
)
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.sandbox.faults import parse_faults
from tpuwizard.sandbox.workers.chip import STAND_IN_FILES, HeldChip, hold_chip, hold_chips
from tpuwizard.words.event_text import describe
from tpuwizard.words.held_chip_text import chip_held_lines

JOB = "J .tpuwizard/jobs/run-20240101-a 500"


def stat(pid: int, group: int, session: int, comm: str = "python3") -> str:
    return f"S {pid} {pid} ({comm}) S 1 {group} {session} 0 -1 4194560 2 0 0 0"


@pytest.mark.parametrize(
    "lines, expected",
    [
        ([], []),
        # an earlier run's script: its session is the job's leader (start_job's setsid)
        (
            ["H /proc/501/fd /dev/vfio/0", stat(501, 500, 500), "C 501 python train.py", JOB],
            [Holder(0, 501, "python train.py", ("/dev/vfio/0",), "run-20240101-a")],
        ),
        # a child that made its own group stays in the job's session: still ours
        (
            ["H /proc/502/fd /dev/accel0", stat(502, 502, 500), "C 502 loader", JOB],
            [Holder(0, 502, "loader", ("/dev/accel0",), "run-20240101-a")],
        ),
        # a process in no job's session or group: not ours
        (
            ["H /proc/77/fd /dev/accel0", stat(77, 77, 70), "C 77 jupyter kernel", JOB],
            [Holder(0, 77, "jupyter kernel", ("/dev/accel0",))],
        ),
        # two device files on one process, said once, sorted; a name with spaces and ") ("
        (
            [
                "H /proc/9/fd /dev/vfio/vfio",
                "H /proc/9/fd /dev/vfio/0",
                "H /proc/9/fd /dev/vfio/0",
                stat(9, 9, 9, comm="a ) (b"),
                "C 9 python -c x",
            ],
            [Holder(0, 9, "python -c x", ("/dev/vfio/0", "/dev/vfio/vfio"))],
        ),
        # gone before its stat was read: left out
        (["H /proc/8/fd /dev/accel0", "S 8 ", "C 8 "], []),
        # lines of another shape, and a job whose name or pid is not one start_job writes
        (
            [
                "garbage",
                "H /proc/x/fd /dev/accel0",
                "S y 1",
                "J .tpuwizard/jobs/a;rm 5",
                "J .tpuwizard/jobs/ok notanumber",
                "J .tpuwizard/jobs/init 1",
                "H /proc/5/fd /dev/accel0",
                stat(5, 5, 1),
            ],
            [Holder(0, 5, "", ("/dev/accel0",))],
        ),
    ],
)
def test_the_listing_is_read_with_whose_each_holder_is(lines, expected):
    assert list(parse_listing(0, "\n".join(lines)).holders) == expected


def test_the_listing_a_v5e_chip_gave_names_its_holder_and_job():
    """The listing's whole output on a TPU v5e VM (the device machine, issue 54) while a JAX
    process held the chip, its session's id in a job's pid file: VFIO's two files, one holder."""
    text = (Path(__file__).parent / "data" / "held_chip" / "v5e_listing.txt").read_text()
    (holder,) = parse_listing(0, text).holders
    assert holder.pid == 2157 and holder.devices == ("/dev/vfio/1", "/dev/vfio/vfio")
    assert holder.job == "run-x" and holder.command.startswith("/root/.pyenv/versions/3.11.7/")


def test_a_worker_without_proc_says_so_instead_of_finding_nothing():
    listing = parse_listing(1, "X\n")
    assert listing.holders == () and listing.unlisted and "/proc" in listing.unlisted


OURS = Holder(0, 501, "python train.py", ("/dev/vfio/0",), "run-a")
OTHER = Holder(1, 77, "jupyter", ("/dev/vfio/0",))


@pytest.mark.parametrize(
    "holders, even_if_held, end, refuse",
    [
        ([], False, (), False),  # none: go on
        ([OURS], False, (OURS,), False),  # ours: ended, then go on
        ([OTHER], False, (), True),  # another's: refused
        ([OURS, OTHER], False, (), True),  # refused: nothing ended before the user decides
        ([OTHER], True, (), False),  # asked to go on: go on (said by check_chip)
        ([OURS, OTHER], True, (OURS,), False),  # ... and ours is ended still
    ],
)
def test_ours_is_ended_another_refuses_unless_asked(holders, even_if_held, end, refuse):
    decision = decide(holders, even_if_held)
    assert decision.end == end and decision.refuse is refuse
    assert decision.others == tuple(h for h in holders if not h.ours)


def test_the_listing_command_holds_no_text_but_tpuwizards_and_quotes_it():
    real = listing_command(TPU_DEVICE_FILES)
    assert "-lname '/dev/accel*'" in real and "-lname '/dev/vfio/*'" in real
    practice = listing_command(STAND_IN_FILES)
    assert "-lname \"$home\"/'dev/accel*'" in practice
    assert "for f in .tpuwizard/jobs/*/pid;" in real


def test_the_refusal_names_each_holder_and_what_would_end_it():
    lines = "\n".join(chip_held_lines(ChipHeld("tpuwizard-k", [OTHER])))
    assert "held by a process tpuwizard did not start" in lines
    assert "worker 1: process 77 (jupyter)" in lines
    assert "tpuwizard ssh --node tpuwizard-k --worker 1, then kill 77" in lines
    assert "--even-if-held" in lines and "Nothing was copied or started" in lines
    stuck = "\n".join(chip_held_lines(ChipHeld("tpuwizard-k", [OURS], unended=True)))
    assert "SIGTERM and SIGKILL did not end" in stuck and "tpuwizard down" in stuck


def test_each_event_is_said():
    ended = describe(ev.ChipHolderEnded("k", 0, 501, "python train.py", "run-a", 10.0))
    assert ended == [
        "worker 0: ended process 501 (python train.py), which an earlier run of tpuwizard's on "
        "k left holding the TPU (its job run-a): SIGTERM, then SIGKILL after 10 s."
    ]
    going = describe(ev.ChipHeldGoingOn("k", 1, 77, "jupyter"))[0]
    assert "process 77 (jupyter)" in going and "going on as you asked" in going
    assert "could not be listed (no /proc)" in describe(ev.ChipNotChecked("k", 0, "no /proc"))[0]


@pytest.mark.parametrize("value, held", [("ours", HeldChip.OURS), ("other", HeldChip.OTHER)])
def test_the_fault_names_who_holds_the_chip(value, held):
    assert parse_faults(f"held_chip={value}").held_chip is held


def test_a_fault_naming_no_holder_is_refused():
    with pytest.raises(BadInput, match=r"held_chip=mine.*ours or other"):
        parse_faults("held_chip=mine")


needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists from /proc")
STUBBORN = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "chip = open(sys.argv[1], 'rb'); print('holding', flush=True); time.sleep(60)"
)


def stubborn_job(home: Path, name: str) -> subprocess.Popen[bytes]:
    """An earlier run's job that ignores SIGTERM, holding the worker's chip: its own session,
    its id in the job's pid file, as start_job records it."""
    chip = home / "dev" / "accel0"
    proc = subprocess.Popen(
        [sys.executable, "-c", STUBBORN, str(chip.resolve())],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().startswith(b"holding")
    job = home / ".tpuwizard" / "jobs" / name
    job.mkdir(parents=True)
    (job / "pid").write_text(f"{proc.pid}\n")
    return proc


@needs_proc
def test_an_earlier_runs_holder_is_ended_with_sigkill_when_sigterm_is_not_enough(tmp_path):
    home = tmp_path / "w0"
    hold_chips([home], HeldChip.OTHER)  # a VM not booted yet: nothing is started
    assert not (home / "dev").exists()
    home.mkdir()
    hold_chips([home], HeldChip.OTHER)  # the VM's "other" holder...
    proc = stubborn_job(home, "run-earlier")  # ... and an earlier run's, which ignores SIGTERM
    transport = LocalTransport([home])
    events: list[ev.Event] = []
    with pytest.raises(ChipHeld) as refused:
        check_chip(transport, "k", STAND_IN_FILES, False, events.append, grace=0.3)
    assert [h.ours for h in refused.value.holders] == [False] and proc.poll() is None
    started = time.monotonic()
    check_chip(transport, "k", STAND_IN_FILES, True, events.append, grace=0.3)
    assert proc.wait(timeout=10) == -signal.SIGKILL and time.monotonic() - started < 10
    ended = [e for e in events if isinstance(e, ev.ChipHolderEnded)]
    assert [(e.pid, e.job) for e in ended] == [(proc.pid, "run-earlier")]
    going = [e for e in events if isinstance(e, ev.ChipHeldGoingOn)]
    assert len(going) == 1 and going[0].pid != proc.pid  # the other's is left, and said
    os.kill(going[0].pid, signal.SIGKILL)


@needs_proc
def test_the_faults_holders_are_found_as_theirs(tmp_path):
    homes = [tmp_path / "ours" / "w0", tmp_path / "other" / "w0"]
    pids = []
    for home, held in zip(homes, HeldChip, strict=True):
        home.mkdir(parents=True)
        pids.append(hold_chip(home, held))
    try:
        for home, pid, ours in zip(homes, pids, (True, False), strict=True):
            transport = LocalTransport([home])
            listing = parse_listing(0, transport.run(0, listing_command(STAND_IN_FILES)).stdout)
            assert [(h.pid, h.ours) for h in listing.holders] == [(pid, ours)]
            assert listing.holders[0].devices == (str((home / "dev/accel0").resolve()),)
    finally:
        for pid in pids:
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
