"""A held chip, found before a run starts on a kept node (issue 54, item 3).

Only one process at a time may use a TPU. A run whose script cannot open the chip fails at JAX's
start ("TPU is already in use by process with pid N", ``/dev/vfio/0: Device or resource busy``),
after the folder was copied and the packages installed. So before anything is copied, every
worker is asked which processes hold the chip's device files:

* one that tpuwizard started for an earlier run of this node (a job its laptop lost, a child
  the script left) is ended: SIGTERM, then SIGKILL after a grace, and said;
* any other is named, with the command that would end it, and the run is refused unless the
  user asks to go on (``--even-if-held``).

How a process is known to be tpuwizard's: every job on a worker is started by
:func:`~tpuwizard.core.remote.jobs.start_job` under ``setsid``, so it leads its own session, and
its id is written to the job's ``pid`` file under ``.tpuwizard/jobs/``. A holder whose session
(or process group) is one of those ids was started by one of tpuwizard's jobs. A process the
script detached into a session of its own cannot be told from another's: it is named, never
ended.

The same check comes before a spot run's script runs again on its node after a SIGTERM (the
chain's next attempt there, a launch's or a kept node's): what the last attempt left holding the
chip is ended; another's ends the chain (:func:`held_before_rerun`), as the script would fail to
start JAX there.

What this cannot know: a process that opens the chip after the check; another user's process
where the worker's user may not read it (the listing runs as root where ``sudo -n`` lets it, as
Google's TPU VM images do).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.remote.jobs import Job, fan_out, stop_job
from tpuwizard.core.remote.transports import REMOTE_DIR, Transport

# The chip's device files on a TPU VM: /dev/accelN (v2-v4, v6e) or VFIO's /dev/vfio/N (v5e, v5p).
TPU_DEVICE_FILES = ("/dev/accel*", "/dev/vfio/*")
# SIGTERM first, so a script that saves on it may; SIGKILL once this many seconds have passed.
END_GRACE_S = 10.0
_JOB_NAME = re.compile(r"[A-Za-z0-9_-]+")
_HOLDS = re.compile(r"/proc/([0-9]+)/fd (.+)")


@dataclass(frozen=True)
class Holder:
    """A process holding the chip's device files on one worker."""

    worker: int
    pid: int
    command: str  # its command line, arguments joined by spaces ("" where it had none)
    devices: tuple[str, ...]
    job: str | None = None  # the tpuwizard job it belongs to: an earlier run's; None: not ours

    @property
    def ours(self) -> bool:
        return self.job is not None


@dataclass(frozen=True)
class Listing:
    """What one worker said: the holders, or why it could not list them."""

    worker: int
    holders: tuple[Holder, ...] = ()
    unlisted: str | None = None  # why nothing could be listed (no /proc there)


@dataclass(frozen=True)
class Decision:
    """What to do about the holders found: end ``end`` (ours), then go on unless ``refuse``."""

    end: tuple[Holder, ...]
    others: tuple[Holder, ...]
    refuse: bool


class ChipHeld(Exception):
    """The run was refused: ``holders`` hold the chip of ``node``: none of them tpuwizard's, or
    (``unended``) tpuwizard's that SIGKILL did not end. Nothing was copied or started; each front
    end words it (words/held_chip_text.py)."""

    def __init__(self, node: str, holders: Sequence[Holder], unended: bool = False) -> None:
        self.node, self.holders, self.unended = node, tuple(holders), unended
        named = ", ".join(f"worker {h.worker} process {h.pid}" for h in self.holders)
        super().__init__(f"{node}'s TPU is held by another process ({named})")

    def refusal(self) -> ev.ChipHeldRefusal:
        """This refusal as an event states it (a rerun's ScriptDone: the launch goes on)."""
        held = tuple(ev.ChipHolding(h.worker, h.pid, h.command) for h in self.holders)
        return ev.ChipHeldRefusal(self.node, held, self.unended)


def _pattern(device_file: str) -> str:
    """A ``find -lname`` pattern: an absolute one as it is, ``~/...`` under the worker's home as
    the kernel names it (``$home``: resolved, as a process's fd links are)."""
    if device_file.startswith("~/"):
        return '"$home"/' + shlex.quote(device_file[2:])
    return shlex.quote(device_file)


def listing_command(device_files: Sequence[str]) -> str:
    """The shell command that lists, on one worker, who holds ``device_files`` (constants of
    tpuwizard's, quoted; nothing a user typed). It reads ``/proc/<pid>/fd``'s links with the
    worker's own ``find`` (as root where ``sudo -n`` may: another user's process is seen too),
    then each holder's ``stat`` (its session and group) and command line, and the ``pid`` files
    of tpuwizard's jobs there. One line each: ``H /proc/PID/fd TARGET``, ``S PID STAT``,
    ``C PID COMMAND``, ``J FOLDER PID``; ``X`` alone where there is no ``/proc``."""
    tests = " -o ".join(f"-lname {_pattern(f)}" for f in device_files)
    jobs = shlex.quote(REMOTE_DIR + "/jobs") + "/*/pid"
    return (
        "[ -d /proc/self/fd ] || { echo X; exit 0; }; "
        "home=$(cd && pwd -P); as=; sudo -n true 2>/dev/null && as='sudo -n'; "
        f"held=$($as find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 \\( {tests} \\) "
        "-printf '%h %l\\n' 2>/dev/null); "
        "[ -n \"$held\" ] && printf '%s\\n' \"$held\" | sed 's/^/H /'; "
        "for p in $(printf '%s\\n' \"$held\" | sed -n 's|^/proc/\\([0-9][0-9]*\\)/fd .*|\\1|p' "
        "| sort -u); do "
        "printf 'S %s %s\\n' \"$p\" \"$(tr '\\n' ' ' < /proc/$p/stat 2>/dev/null)\"; "
        "printf 'C %s %s\\n' \"$p\" \"$(tr '\\0\\n' '  ' < /proc/$p/cmdline 2>/dev/null)\"; "
        "done; "
        f'for f in {jobs}; do [ -f "$f" ] && '
        'printf \'J %s %s\\n\' "${f%/pid}" "$(head -c 20 "$f" | tr -d \'\\n\')"; done; exit 0'
    )


def parse_listing(worker: int, text: str) -> Listing:
    """``listing_command``'s output on ``worker``, read: each holder with its command and, where
    its session or group is one of tpuwizard's jobs there, that job. A holder that was gone by
    the time its ``stat`` was read is left out. The text comes from the worker: a line that is
    not of the listing's shape is ignored."""
    devices: dict[int, list[str]] = {}
    groups: dict[int, tuple[int, int]] = {}  # pid -> (process group, session)
    commands: dict[int, str] = {}
    jobs: dict[int, str] = {}  # a job's leader (its session and group) -> the job's name
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag == "X" and not rest:
            return Listing(worker, unlisted="the worker has no /proc to list processes from")
        if tag == "H" and (held := _HOLDS.fullmatch(rest)):
            devices.setdefault(int(held.group(1)), []).append(held.group(2))
        elif tag in ("S", "C"):
            number, _, value = rest.partition(" ")
            if not number.isdigit():
                continue
            if tag == "C":
                commands[int(number)] = value.strip()
            elif (read := _group_and_session(value)) is not None:
                groups[int(number)] = read
        elif tag == "J":
            folder, _, leader = rest.rpartition(" ")
            name = folder.rsplit("/", 1)[-1]
            if leader.isdigit() and int(leader) > 1 and _JOB_NAME.fullmatch(name):
                jobs[int(leader)] = name
    holders = []
    for pid in sorted(devices):
        if pid not in groups:
            continue  # gone since the listing
        group, session = groups[pid]
        job = jobs.get(session) or jobs.get(group) or jobs.get(pid)
        found = tuple(sorted(set(devices[pid])))
        holders.append(Holder(worker, pid, commands.get(pid, ""), found, job))
    return Listing(worker, tuple(holders))


def _group_and_session(stat: str) -> tuple[int, int] | None:
    """``/proc/PID/stat``'s process group and session: the 3rd and 4th fields after the command
    name, which is in parentheses and may itself hold spaces or parentheses."""
    fields = stat.rpartition(")")[2].split()
    if len(fields) < 4 or not (fields[2].isdigit() and fields[3].isdigit()):
        return None
    return int(fields[2]), int(fields[3])


def decide(holders: Sequence[Holder], even_if_held: bool) -> Decision:
    """Ours are ended; another's refuses the run unless ``even_if_held``. A refused run ends
    nothing: the user decides about the node first."""
    ours = tuple(h for h in holders if h.ours)
    others = tuple(h for h in holders if not h.ours)
    refuse = bool(others) and not even_if_held
    return Decision(() if refuse else ours, others, refuse)


def list_holders(transport: Transport, device_files: Sequence[str]) -> list[Listing]:
    """Every worker's listing, at once."""
    command = listing_command(device_files)

    def one(worker: int) -> Listing:
        result = transport.run(worker, command, timeout=60)
        return parse_listing(worker, result.stdout)

    return [listing for listing in fan_out(transport, one) if isinstance(listing, Listing)]


def end_processes(transport: Transport, worker: int, pids: Sequence[int], grace: float) -> None:
    """SIGTERM to ``pids`` on ``worker``, SIGKILL to those alive after ``grace`` seconds. Only
    numbers reach the shell."""
    listed = " ".join(str(int(p)) for p in pids)
    steps = int(max(1, grace * 10))
    command = (
        f"pids='{listed}'; kill -TERM $pids 2>/dev/null; for i in $(seq {steps}); do alive=; "
        'for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done; '
        '[ -z "$alive" ] && break; sleep 0.1; done; kill -KILL $pids 2>/dev/null; exit 0'
    )
    transport.run(worker, command, timeout=grace + 30, cancellable=False)


def check_chip(
    transport: Transport,
    node: str,
    device_files: Sequence[str],
    even_if_held: bool,
    emit: Callable[[ev.Event], None],
    grace: float = END_GRACE_S,
) -> None:
    """Before a run on ``node``: list who holds its chip on every worker; end what an earlier run
    of tpuwizard's left holding it (:class:`ChipHolderEnded` each); raise :class:`ChipHeld` for
    another's, unless ``even_if_held`` (then :class:`ChipHeldGoingOn` each). What was ended is
    listed again: one of ours still there refuses the run too."""
    listings = list_holders(transport, device_files)
    for listing in listings:
        if listing.unlisted is not None:
            emit(ev.ChipNotChecked(node, listing.worker, listing.unlisted))
    decision = decide([h for listing in listings for h in listing.holders], even_if_held)
    if decision.refuse:
        raise ChipHeld(node, decision.others)
    for worker in sorted({h.worker for h in decision.end}):
        mine = [h for h in decision.end if h.worker == worker]
        for job in sorted({h.job for h in mine if h.job is not None}):
            stop_job(transport, worker, Job(job), grace)  # the earlier run's job, all of it
        end_processes(transport, worker, [h.pid for h in mine], grace)  # one in a group of its own
    if decision.end:
        again = list_holders(transport, device_files)
        left = {(h.worker, h.pid) for listing in again for h in listing.holders}
        unended = [h for h in decision.end if (h.worker, h.pid) in left]
        if unended:
            raise ChipHeld(node, unended, unended=True)
    for h in decision.end:
        emit(ev.ChipHolderEnded(node, h.worker, h.pid, h.command, h.job or "", grace))
    for h in decision.others:
        emit(ev.ChipHeldGoingOn(node, h.worker, h.pid, h.command))


def held_before_rerun(err: ChipHeld, kept: bool) -> Diagnosis:
    """A spot run's script was to run again on its node (its last run got SIGTERM and the node
    stayed READY), and the chip was held there: by another's process, or (``err.unended``) by
    one of ours SIGKILL did not end. The script did not run again; a launch's node is then
    deleted, a kept node kept (``kept``)."""
    held = ", ".join(f"process {h.pid} on worker {h.worker}" for h in err.holders)
    if err.unended:
        who = f"{held}, left by your script's last run, which SIGTERM and SIGKILL did not end"
    else:
        who = f"{held}, which tpuwizard did not start"
    steps: list[str] = [
        f"worker {h.worker}: process {h.pid}" + (f" ({h.command})" if h.command else "")
        for h in err.holders
    ]
    if kept and not err.unended:
        steps += [
            f"End it: tpuwizard ssh --node {err.node} --worker {h.worker}, then kill {h.pid}."
            for h in err.holders
        ]
        steps.append(
            "Then tpuwizard run it again with --checkpoints (what it saved is still in its "
            "folder on the node); or tpuwizard down, then tpuwizard up, for a fresh node."
        )
    elif kept:
        steps.append("tpuwizard down, then tpuwizard up, for a fresh node.")
    else:
        steps.append(
            "This node is deleted. Launch again with --checkpoints and --resume-from this "
            "run's id (its folder's name): the new node starts from its last complete "
            "checkpoint set that came home."
        )
    return Diagnosis(
        "tpu_held",
        "Another process holds the TPU",
        f"Your script got SIGTERM and was to run again on {err.node}, but its TPU was held by "
        f"{who}, and only one process at a time may use a TPU: it would have failed to start "
        "JAX there, so it did not run again.",
        list(steps),
    )
