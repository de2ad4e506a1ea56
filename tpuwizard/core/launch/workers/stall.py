"""The stall guard: a slice whose script hangs is ended, not left billing until its deadline.
It watches the verifier's job (before the script, the join included) and the script's alike:
both start through the launcher.

A worker counts as stalled when it has printed nothing and the processes of its script's job
(the job's process group, read from ``/proc/<pid>/stat`` on the worker: utime + stime) have used
no CPU time for the stall timeout. One stalled worker stalls the slice (the others wait for it in
every collective), so the guard then asks each worker that can give one for its Python stack (the
launcher, verify/tpu_launch.py, registers ``faulthandler`` on SIGUSR1), says which cannot
(suspended, ended), names the workers that never reached ``jax.distributed.initialize``, ends the
job on every worker and raises :class:`~tpuwizard.core.errors.WorkersStalled`; the run then ends
by its rule (a launch deletes its node; a kept node is kept).

What it cannot know: a script that sleeps quietly for longer than the timeout looks stalled, and a
worker spinning in a busy loop without printing never does.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from tpuwizard.core.deadlines import STALL_TIMEOUT_MIN
from tpuwizard.core.errors import RemoteError, StalledIn, WorkersStalled
from tpuwizard.core.remote.jobs import Job, fan_out, stop_job
from tpuwizard.core.remote.transports import Transport, shell


def stall_seconds(minutes: float | None) -> float | None:
    """The guard's timeout in seconds: --stall-timeout's minutes, else its default; None for 0
    (no guard)."""
    chosen = STALL_TIMEOUT_MIN if minutes is None else minutes
    return chosen * 60 if chosen > 0 else None


LAST_LINES = 5

# Run with the worker's python3 (Google's image has one): the job's group's CPU time, the states
# of its launcher processes, whether it reached the join; with "stack", SIGUSR1 to each launcher
# that can answer, then the stack file faulthandler wrote. Prints one JSON line.
PROBE = r"""
import json, os, signal, sys, time
folder, mode = os.path.expanduser("~/" + sys.argv[1]), sys.argv[2]
out = {"cpu": None, "launchers": {}, "group": {}, "ended": os.path.exists(folder + "/exit")}
out["joining"] = os.path.exists(folder + "/joining")
out["joined"] = os.path.exists(folder + "/joined")
try:
    pgid = int(open(folder + "/pid").read().strip())
except (OSError, ValueError):
    pgid = None
if pgid is not None:
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open("/proc/%s/stat" % pid).read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) != pgid:
                continue
            total += int(fields[11]) + int(fields[12])
            out["group"][pid] = fields[0]
            cmd = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
            if any(part.endswith(b"tpu_launch.py") for part in cmd):
                out["launchers"][pid] = fields[0]
        except (OSError, ValueError, IndexError):
            continue
    out["cpu"] = total
if mode == "stack":
    stack = folder + "/stack"
    before = os.path.getsize(stack) if os.path.exists(stack) else 0
    asked = [p for p, s in out["launchers"].items() if s not in "TtZX"]
    for pid in asked:
        try:
            os.kill(int(pid), signal.SIGUSR1)
        except OSError:
            pass
    text = ""
    for _ in range(30):
        time.sleep(0.1)
        if asked and os.path.exists(stack) and os.path.getsize(stack) > before:
            time.sleep(0.3)
            with open(stack, errors="replace") as f:
                f.seek(before)
                text = f.read()[-6000:]
            break
    out["stack"] = text
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Probe:
    """One look at a worker's job."""

    cpu: int | None  # clock ticks used by the job's process group; None: no group found
    launchers: dict[str, str]  # the launcher's pids and their states (R, S, T stopped, Z...)
    ended: bool
    joining: bool  # the script called jax.distributed.initialize
    joined: bool  # ... and it returned
    stack: str = ""
    # every process of the job's group and its state: a job suspended before its launcher
    # started (the wrapper stopped as it forks) has no launcher, only stopped processes
    group: dict[str, str] = field(default_factory=dict)


def parse_probe(text: str) -> Probe | None:
    for line in reversed(text.splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return Probe(
                data.get("cpu"),
                {str(k): str(v) for k, v in (data.get("launchers") or {}).items()},
                bool(data.get("ended")),
                bool(data.get("joining")),
                bool(data.get("joined")),
                str(data.get("stack") or ""),
                {str(k): str(v) for k, v in (data.get("group") or {}).items()},
            )
    return None


def probe(transport: Transport, worker: int, job: Job, stack: bool = False) -> Probe | None:
    """Look at ``job`` on ``worker``; None when the worker did not answer."""
    command = shell("python3", "-c", PROBE, job.folder, "stack" if stack else "cpu")
    try:
        result = transport.run(worker, command, timeout=60, cancellable=False)
    except RemoteError:
        return None
    return parse_probe(result.stdout) if result.code == 0 else None


class StallClock:
    """When each worker last printed or used CPU time; which have done neither for too long."""

    def __init__(self, workers: int, timeout_s: float, now: float) -> None:
        self.timeout_s = timeout_s
        self.active = [now] * workers  # when each last printed or used CPU
        self.cpu: list[int | None] = [None] * workers

    def line(self, worker: int, t: float) -> None:
        self.active[worker] = max(self.active[worker], t)

    def reading(self, worker: int, cpu: int | None, t: float) -> None:
        """A CPU reading; one that changed, or the first, is activity. None (no process left,
        or no answer) is not."""
        if cpu is not None and cpu != self.cpu[worker]:
            self.cpu[worker] = cpu
            self.active[worker] = max(self.active[worker], t)

    def stalled(self, t: float) -> list[int]:
        return [w for w, at in enumerate(self.active) if t - at >= self.timeout_s]


@dataclass
class StallReport:
    """What the guard found when it ended the run."""

    timeout_s: float
    stalled: list[int]
    last_lines: dict[int, list[str]]
    stacks: dict[int, str]  # the stack each worker gave, or why it could not
    not_joined: list[int]  # workers that never called jax.distributed.initialize
    joined: list[int] = field(default_factory=list)
    phase: StalledIn = StalledIn.SCRIPT  # whose job it watched
    in_join: list[int] = field(default_factory=list)  # called initialize, not yet returned

    @property
    def waiting(self) -> list[int]:
        """Stalled workers waiting in jax.distributed.initialize for one that never reached it:
        they are silent because of it. Empty when every stalled worker waits (the one they wait
        for is busy elsewhere): then all of them are named."""
        if not self.not_joined:
            return []
        waiting = [w for w in self.stalled if w in self.in_join]
        return waiting if len(waiting) < len(self.stalled) else []

    @property
    def blamed(self) -> list[int]:
        """The stalled workers the headline names: those not waiting for another."""
        return [w for w in self.stalled if w not in self.waiting]

    def headline(self) -> list[str]:
        minutes = f"{self.timeout_s / 60:g}"
        names = ", ".join(f"w{w}" for w in self.blamed)
        where = " in the verifier" if self.phase is StalledIn.VERIFIER else ""
        before = ", before your script started" if self.phase is StalledIn.VERIFIER else ""
        lines = [
            f"stalled{where}: {names} printed nothing and used no CPU time for {minutes} "
            f"minutes (--stall-timeout); the run was ended by the stall guard{before}"
        ]
        if self.not_joined:
            never = ", ".join(f"w{w}" for w in self.not_joined)
            lines.append(f"never reached jax.distributed.initialize: {never}")
        if self.waiting:
            waiting = ", ".join(f"w{w}" for w in self.waiting)
            lines.append(f"silent too, waiting in jax.distributed.initialize for them: {waiting}")
        return lines

    def lines(self) -> list[str]:
        """The report in one line per fact (front ends show each on its own line): the stall,
        each worker's last lines, each worker's stack innermost frame first."""
        lines = self.headline()
        for worker in sorted(self.last_lines):
            last = self.last_lines[worker]
            lines.append(
                f"w{worker}'s last lines: " + " | ".join(last)
                if last
                else f"w{worker} printed nothing"
            )
        for worker in sorted(self.stacks):
            lines.append(f"w{worker}'s stack: {short_stack(self.stacks[worker])}")
        return lines

    def text(self) -> str:
        """The whole report, every frame of every stack (kept with the script's output)."""
        lines = self.headline()
        for worker in sorted(self.last_lines):
            last = self.last_lines[worker]
            lines.append(f"w{worker}'s last lines:" if last else f"w{worker} printed nothing")
            lines += [f"  {text}" for text in last]
        for worker in sorted(self.stacks):
            lines.append(f"w{worker}'s Python stack:")
            lines += [f"  {text}" for text in self.stacks[worker].splitlines()]
        return "\n".join(lines)


FRAME = re.compile(r'File "(?P<path>[^"]*)", line (?P<line>\d+) in (?P<func>\S+)')
# The launcher's own frames and runpy's, between the script and Python: not the script's.
PLUMBING = (
    "<frozen runpy>",
    "tpu_launch.py:main",
    "tpu_launch.py:<module>",
    "tpu_launch.py:wrapped",
)


def short_stack(stack: str) -> str:
    """faulthandler's stack of the first thread (the main one, innermost frame first) as
    ``file:line in function < ...``; a line that is no stack (why there is none) unchanged."""
    frames: list[str] = []
    for line in stack.splitlines():
        if frames and not line.strip():
            break  # the next thread's stack
        found = FRAME.search(line)
        if found is None:
            continue
        name = found["path"].rsplit("/", 1)[-1]
        where = f"{name}:{found['func']}"
        if found["path"] in PLUMBING or where in PLUMBING:
            continue
        frames.append(f"{name}:{found['line']} in {found['func']}")
    return " < ".join(frames) if frames else stack.strip()


def why_no_stack(found: Probe | None, phase: StalledIn = StalledIn.SCRIPT) -> str | None:
    """Why a worker cannot give a stack, or None when it can be asked."""
    if found is None:
        return "no stack: the worker did not answer"
    its = f"its {phase.value}"
    states = set(found.launchers.values())
    if not found.launchers:
        if found.ended or found.cpu is None:
            return f"no stack: {its}'s process has ended"
        if found.group and set(found.group.values()) <= {"T", "t"}:
            return f"no stack: {its} is suspended (stopped), so it cannot answer"
        return f"no stack: {its} did not start through tpuwizard's launcher"
    if states <= {"T", "t"}:
        return f"no stack: {its} is suspended (stopped), so it cannot answer"
    if states <= {"Z", "X"}:
        return f"no stack: {its}'s process is dead"
    return None


class StallGuard:
    """Watches a job on every worker while it runs (:meth:`watch`), fed each line it prints."""

    def __init__(
        self,
        transport: Transport,
        job: Job,
        timeout_s: float,
        poll_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        phase: StalledIn = StalledIn.SCRIPT,
    ) -> None:
        self.transport, self.job, self.clock = transport, job, clock
        self.phase = phase
        self.workers = transport.workers
        self.timeout_s = timeout_s
        self.poll_s = poll_s if poll_s is not None else max(1.0, min(30.0, timeout_s / 6))
        self.times = StallClock(self.workers, timeout_s, clock())
        self.lines: dict[int, deque[str]] = {
            w: deque(maxlen=LAST_LINES) for w in range(self.workers)
        }
        self.report: StallReport | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def line(self, worker: int, text: str) -> None:
        with self._lock:
            self.lines[worker].append(text)
            self.times.line(worker, self.clock())

    def __enter__(self) -> StallGuard:
        self._thread = threading.Thread(target=self._watch, name="tpuwizard-stall", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def check(self) -> None:
        """Raise :class:`WorkersStalled` when the guard ended the run."""
        if self.report is not None:
            report = self.report
            raise WorkersStalled(report.blamed, report.text(), report.lines(), report.phase)

    def _watch(self) -> None:
        while not self._done.wait(self.poll_s):
            try:
                readings = fan_out(self.transport, lambda w: probe(self.transport, w, self.job))
            except Exception:  # a look that failed is no activity; the next one may answer
                readings = [None] * self.workers
            now = self.clock()
            with self._lock:
                for worker, found in enumerate(readings):
                    cpu = found.cpu if isinstance(found, Probe) else None
                    self.times.reading(worker, cpu, now)
                stalled = self.times.stalled(now)
            if stalled:
                self._end(stalled)
                return

    def _end(self, stalled: list[int]) -> None:
        looks = fan_out(self.transport, lambda w: probe(self.transport, w, self.job, stack=True))
        stacks: dict[int, str] = {}
        not_joined: list[int] = []
        joined: list[int] = []
        in_join: list[int] = []
        for worker, found in enumerate(looks):
            assert found is None or isinstance(found, Probe)
            why = why_no_stack(found, self.phase)
            if why is None and found is not None:
                stacks[worker] = found.stack or "no stack: it did not answer SIGUSR1 in 3 s"
            else:
                stacks[worker] = why or ""
            if found is not None and not found.joining:
                not_joined.append(worker)
            if found is not None and found.joined:
                joined.append(worker)
            elif found is not None and found.joining:
                in_join.append(worker)
        if len(not_joined) == len(looks):
            not_joined = []  # no worker called initialize: the script does not join a slice
        with self._lock:
            last = {w: list(lines) for w, lines in self.lines.items()}
        self.report = StallReport(
            self.timeout_s, stalled, last, stacks, not_joined, joined, self.phase, in_join
        )
        # Ending the jobs ends their followers, so the run returns and raises.
        fan_out(self.transport, lambda w: stop_job(self.transport, w, self.job))
