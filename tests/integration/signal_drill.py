"""The signal drill: a real `tpuwizard` command against the sandbox, stopped by a real signal at
one point of its work, then judged by what is left billing and by its exit code.

The rules judged (README, "Exit codes everywhere"): a stop signal (SIGINT, SIGTERM, SIGHUP)
before a node is handed over as kept deletes it, verifies it gone and exits 128 + N (130, 143,
129); `run` on a kept node stops the script, never the node, and exits 128 + N; SIGKILL leaves
what exists, and the next `status` must list it and `teardown --all` delete it (the ledger's crash
recovery). Each command runs on both backends (tests/integration/drill_backends.py), the wizard
on the TPU API's only. `benchmarks/signal_drill.py` runs every case; test_signal_drill.py a
rotation of them.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import tpuwizard_cmd
from tests.integration.drill_backends import BACKENDS, node_state, sandbox_names
from tests.integration.iterate_helpers import end_practice, up
from tests.integration.launch_helpers import (
    env,
    ledger_all_gone,
    sandbox_is_empty,
    status,
    teardown_all,
)
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.paths import fetched_files

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL)
STOP_SIGNALS = SIGNALS[:3]
# Where each command can be stopped. `launch --keep` and `up` never tear down unless stopped (up
# runs no script of yours: its "verify" is the verifier); `run` has a node already, so its points
# are its own: copying the folder, your script, copying files back. The wizard walks as launch.
POINTS: dict[str, tuple[str, ...]] = {
    "launch": ("create", "ready", "bootstrap", "script", "teardown"),
    # "receipt": just after "Receipt ... saved", the node kept but not yet handed over.
    "launch --keep": ("create", "ready", "bootstrap", "script", "receipt"),
    "up": ("create", "ready", "bootstrap", "verify"),
    "run": ("sync", "script", "fetch"),
    "wizard": ("create", "ready", "bootstrap", "script", "teardown"),  # signal_drill_wizard.py
    # The wizard opened beside a node `up` kept: stopped on its first screen, or while its own
    # launch makes a node; what it made goes, the kept node stays (issue 39, item 1).
    "wizard+kept": ("route", "create"),
}
# `launch --json`'s event lines that mark each point (the names the CLI writes).
LAUNCH_EVENTS: dict[str, Callable[[dict], bool]] = {
    "create": lambda e: (
        e["event"] == ev.Provisioning.event_name()
        and e["state"] in {b.creating for b in BACKENDS.values()}
    ),
    "ready": lambda e: e["event"] == ev.Ready.event_name(),
    "bootstrap": lambda e: e["event"] == ev.BootstrapLine.event_name(),
    "script": lambda e: e["event"] == ev.ScriptLine.event_name(),
    "teardown": lambda e: e["event"] == ev.TeardownStarted.event_name(),
    "receipt": lambda e: e["event"] == ev.ReceiptSaved.event_name(),
}
LONG = "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.2)\n"
# Writes a file to fetch, then ends: the signal comes once its exit is on the worker's disk.
FETCHED = (
    "import os\nwith open('big.bin', 'wb') as f:\n    f.write(os.urandom({size}))\n"
    "print('written', flush=True)\n"
)

WORKER0 = "sandbox/{folder}/*/*/{node}/w0/.tpuwizard/jobs"  # under TPUWIZARD_HOME
Trigger = Callable[[str, str], bool]  # (stream "out" or "err", line) -> send the signal now


@dataclass(frozen=True)
class Case:
    command: str
    point: str
    sig: signal.Signals
    backend: str = "tpu-api"

    @property
    def expected_code(self) -> int:
        return 128 + self.sig  # what a shell shows, for SIGKILL too (137)

    @property
    def label(self) -> str:
        return f"{self.command} at {self.point} with {self.sig.name} on {self.backend}"


@dataclass
class Outcome:
    case: Case
    code: int | None = None  # None: it did not end by itself (killed at the drill's timeout)
    reached: bool = False
    left: int = 0  # resources in the sandbox after the command
    left_expected: int = 0
    listed_ok: bool | None = None  # SIGKILL: did `status` list every one of them?
    left_after_followup: int | None = None  # SIGKILL: after `teardown --all`
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems


@dataclass
class Stopped:
    code: int | None
    reached: bool
    lines: list[tuple[str, str]]


def all_cases(commands: tuple[str, ...] = tuple(POINTS), backend: str = "tpu-api") -> list[Case]:
    """Every signal at every point of each command."""
    return [Case(c, p, s, backend) for c in commands for p in POINTS[c] for s in SIGNALS]


def rotated_cases(
    commands: tuple[str, ...] = tuple(POINTS), backend: str = "tpu-api", offset: int = 0
) -> list[Case]:
    """One signal per point per command, rotated so each command meets several signals and,
    over the commands, every signal meets every point; ``offset`` turns the rotation on (so
    another backend meets each point with another signal)."""
    return [
        Case(c, p, SIGNALS[(i + j + offset) % len(SIGNALS)], backend)
        for i, c in enumerate(commands)
        for j, p in enumerate(POINTS[c])
    ]


def shell_code(returncode: int | None) -> int | None:
    """A process killed by signal N reads -N in Python and 128 + N in a shell: say the shell's."""
    return None if returncode is None else 128 - returncode if returncode < 0 else returncode


def stop_at(
    argv: list[str],
    cwd: Path,
    environ: dict[str, str],
    trigger: Trigger,
    sig: signal.Signals,
    on_disk: Callable[[], bool] | None = None,
    timeout: float = 180,
) -> Stopped:
    """Start ``argv``; send ``sig`` at the first line (or disk state) ``trigger`` (``on_disk``)
    holds for; wait for the exit (SIGKILL at ``timeout``: then the code is None)."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=environ,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[tuple[str, str] | None] = queue.Queue()

    def read(name: str, stream) -> None:
        for line in stream:
            lines.put((name, line.rstrip("\n")))
        lines.put(None)

    readers = [
        threading.Thread(target=read, args=(name, stream), daemon=True)
        for name, stream in (("out", proc.stdout), ("err", proc.stderr))
    ]
    for reader in readers:
        reader.start()
    seen: list[tuple[str, str]] = []
    sent, ended, deadline = False, 0, time.monotonic() + timeout
    while ended < 2 and time.monotonic() < deadline:
        try:
            item = lines.get(timeout=0.02)
        except queue.Empty:
            item = ("", "")
        if item is None:
            ended += 1
            continue
        if item[0]:
            seen.append(item)
        fire = trigger(*item) if item[0] else on_disk is not None and on_disk()
        if not sent and fire and proc.poll() is None:
            proc.send_signal(sig)
            sent = True
    try:
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None
    for reader in readers:
        reader.join(timeout=60)
    return Stopped(shell_code(code), sent, seen)


def launch_trigger(point: str) -> Trigger:
    wanted = LAUNCH_EVENTS[point]
    return lambda stream, line: stream == "out" and wanted(json.loads(line))


def up_trigger(point: str, creating: str) -> Trigger:
    """`up` says on stderr what the launch's events are (the wizard's and plain mode's words)."""
    if point == "bootstrap":  # the first line after every worker answered: the bootstrap's
        connected: list[bool] = []

        def after_connected(stream: str, line: str) -> bool:
            if connected:
                return True
            connected.extend([True] if "Connected to every worker" in line else [])
            return False

        return after_connected
    marker = {"create": f"state {creating}", "ready": "Ready:", "verify": "tpu_verify:"}[point]
    return lambda stream, line: stream == "err" and marker in line


def run_case(case: Case, root: Path, delay: float = 0.3, create_delay: float = 2.0) -> Outcome:
    """One case of ``launch``, ``launch --keep`` or ``up`` in its own state folder under
    ``root``; what is left is deleted afterwards and the practice cloud stopped."""
    home, cwd = root / "state", root
    root.mkdir(parents=True, exist_ok=True)
    wait = create_delay if case.point == "create" else delay
    environ = env(TPUWIZARD_HOME=str(home), TPUWIZARD_SANDBOX_DELAY=str(wait))
    backend = BACKENDS[case.backend]
    if case.command == "up":
        argv = tpuwizard_cmd("up", "--sandbox", *backend.flags)
        trigger = up_trigger(case.point, backend.creating)
    else:
        argv = tpuwizard_cmd("launch", "--sandbox", "--json", *backend.flags)
        argv += ["--keep"] if case.command == "launch --keep" else []
        if case.point == "script":
            (root / "long.py").write_text(LONG)
            argv += ["--script", str(root / "long.py")]
        trigger = launch_trigger(case.point)
    try:
        stopped = stop_at(argv, cwd, environ, trigger, case.sig)
        if handed_over(case, stopped):
            # Said Kept before the signal landed: the node was handed over, so the stop keeps
            # it (said so), and the lasting practice cloud holds it after the command.
            return judge(case, stopped, home, cwd, left_expected=1, kept=True)
        return judge(case, stopped, home, cwd, left_expected=0)
    finally:
        clean_up(home, cwd)


def handed_over(case: Case, stopped: Stopped) -> bool:
    """Whether ``launch --keep`` said Kept (its hand-over) before the signal stopped it.

    The "receipt" point is a line the launch prints and goes on from: on a loaded machine the
    hand-over can come before the signal lands, and a node handed over stays (the user asked
    to keep it). Not said Kept, a stop deletes it: the drill holds both (issue 56 item 5)."""
    if case.command != "launch --keep" or case.sig not in STOP_SIGNALS:
        return False
    kept = ev.Kept.event_name()
    return any(stream == "out" and f'"event": "{kept}"' in text for stream, text in stopped.lines)


def up_node(root: Path, delay: float = 0.3, backend: str = "tpu-api") -> str:
    """`up` a node (an instance) to run cases against (``run_case_on``); returns its name."""
    root.mkdir(parents=True, exist_ok=True)
    home, chosen = root / "state", BACKENDS[backend]
    kept = up(
        root,
        *chosen.keep,
        "--backend",
        backend,
        accelerator=chosen.accelerator,
        zone=chosen.zone,
        TPUWIZARD_HOME=str(home),
        TPUWIZARD_SANDBOX_DELAY=str(delay),
    )
    return str(kept["name"])


def run_case_on(
    case: Case, root: Path, node: str, fetch_mib: int = 64, more_cases: bool = True
) -> Outcome:
    """One case of ``run`` on the kept ``node`` (made by ``up_node(root)``), which stays; after
    SIGKILL, ``teardown --all`` follows unless ``more_cases`` are to run on the node."""
    home, project = root / "state", root / "project"
    project.mkdir(parents=True, exist_ok=True)
    environ = env(TPUWIZARD_HOME=str(home))
    # New bytes each case, so there is something to copy and the copy takes a moment.
    (project / "payload.bin").write_bytes(os.urandom(8 << 20))
    script = project / ("fetched.py" if case.point == "fetch" else "long.py")
    script.write_text(FETCHED.format(size=fetch_mib << 20) if case.point == "fetch" else LONG)
    fetch = ["--fetch", "big.bin"] if case.point == "fetch" else []  # options before SCRIPT
    argv = tpuwizard_cmd("run", "--sandbox", "--node", node, *fetch, str(script))
    run_id: list[str] = []

    def trigger(stream: str, line: str) -> bool:
        if stream == "err" and line.startswith("run ") and f" on {node} " in line:
            run_id.append(line.split()[1])  # "run <run id> on <node> (N worker(s))"
            return case.point == "sync"
        return case.point == "script" and stream == "out"

    def job_file(name: str) -> Path | None:  # worker 0's record of this run's job
        jobs = WORKER0.format(folder=BACKENDS[case.backend].folder, node=node)
        found = run_id and list(home.glob(f"{jobs}/run-{run_id[0]}/{name}"))
        return found[0] if found else None

    def script_ended() -> bool:  # its exit code is on the worker's disk
        return job_file("exit") is not None

    def copying_back() -> bool:  # the fetched file has begun to arrive (as a hidden .part)
        if not run_id:
            return False
        return any(fetched_files(root / "runs" / run_id[0]).glob(".big.bin.*.part"))

    on_disk = copying_back if case.point == "fetch" else None
    stopped = stop_at(argv, root, environ, trigger, case.sig, on_disk)
    state = node_state(home, node)  # before any follow-up teardown
    out = judge(case, stopped, home, root, left_expected=1, keep_going=more_cases)
    if state != BACKENDS[case.backend].ready:
        out.problems.append(f"the kept node is {state}, not up: a run must never end it")
    if case.sig in STOP_SIGNALS and case.point == "script" and not _soon(script_ended):
        out.problems.append("the script was not stopped on the worker")
    fetched = fetched_files(root / "runs" / (run_id[0] if run_id else "?")) / "big.bin"
    if case.sig in STOP_SIGNALS and case.point == "fetch" and not _whole(fetched, fetch_mib << 20):
        out.problems.append("a stop during the copy-back did not let the file arrive whole")
    return out


def judge(
    case: Case,
    stopped: Stopped,
    home: Path,
    cwd: Path,
    left_expected: int,
    keep_going: bool = False,
    kept: bool = False,
) -> Outcome:
    """Hold the case's outcome against the rules; for SIGKILL, run the follow-up commands
    (``teardown --all`` only when ``keep_going`` is false: the node is not needed again)."""
    out = Outcome(case, stopped.code, stopped.reached, left_expected=left_expected)
    said = "; ".join(text for stream, text in stopped.lines[-3:] if stream == "err")
    if not stopped.reached:
        out.problems.append(f"ended before the point ({stopped.code}): {said}")
    if stopped.code is None:
        out.problems.append("did not end within the drill's timeout")
    elif stopped.code != case.expected_code:
        out.problems.append(f"exit {stopped.code}, expected {case.expected_code}: {said}")
    names = sandbox_names(home)
    out.left = len(names)
    if case.sig in STOP_SIGNALS:
        if out.left != left_expected:
            out.problems.append(f"{out.left} resource(s) left, expected {left_expected}")
        elif left_expected == 0 and not kept and not ledger_all_gone(home):
            out.problems.append("the sandbox is empty but the ledger still holds open entries")
        return out
    listed = {r["name"] for r in status(cwd, TPUWIZARD_HOME=str(home))}
    # What still exists once status has asked: a delete issued before the kill may have ended
    # meanwhile (a lasting sandbox carries on, as Google does).
    present = sandbox_names(home)
    out.listed_ok = present <= listed
    if not out.listed_ok:
        out.problems.append(f"status did not list {sorted(present - listed)}")
    if keep_going:
        return out
    ended = teardown_all(cwd, TPUWIZARD_HOME=str(home))
    out.left_after_followup = len(sandbox_names(home))
    if ended.returncode != 0:
        out.problems.append(f"teardown --all exited {ended.returncode}: {ended.stderr[-300:]}")
    if out.left_after_followup or not sandbox_is_empty(home) or not ledger_all_gone(home):
        out.problems.append("teardown --all left resources or open ledger entries")
    return out


def clean_up(home: Path, cwd: Path) -> None:
    """Delete whatever a case left (so nothing of the drill bills on) and end its processes."""
    if sandbox_names(home):
        teardown_all(cwd, TPUWIZARD_HOME=str(home))
    end_practice(home)


def _whole(path: Path, size: int) -> bool:
    return path.is_file() and path.stat().st_size == size


def _soon(condition: Callable[[], bool], seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
