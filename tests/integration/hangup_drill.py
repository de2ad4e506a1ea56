"""The closed-terminal drill: a command typed into ``bash -i`` on a pseudo-terminal (as a person
runs it), the window closed at one point of its work, and the outcome judged: exit 129, nothing
left that was not kept, no process of it left, within seconds, the run folder saying what
happened. The points are the signal drill's (create, READY, the bootstrap, the verifier, the
script, the copy back, teardown) for ``launch``, ``up`` and ``run``; and a launch whose stdout
is a pipe nobody reads any more, stopped by SIGHUP during its script."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import tpuwizard_cmd
from tests.integration.drill_backends import BACKENDS, node_state, sandbox_names
from tests.integration.launch_helpers import env, ledger_all_gone, ledger_holds
from tests.integration.shell_terminal import ShellTerminal, typed_command
from tests.integration.signal_drill import FETCHED, LONG, clean_up, up_node
from tpuwizard.core.paths import fetched_files

# Each case is "<command> at <point>"; the closed pipe's is a case of its own.
POINTS: dict[str, tuple[str, ...]] = {
    "launch": ("create", "ready", "bootstrap", "verify", "script", "fetch", "teardown"),
    "up": ("create", "ready", "bootstrap", "verify"),
    "run": ("script", "fetch"),
    "plain": ("create", "verify", "teardown"),  # plain mode, every question's default taken
}
CLOSED_PIPE = "launch with its stdout a closed pipe"
CASES = [f"{c} at {p}" for c, points in POINTS.items() for p in points] + [CLOSED_PIPE]
STOP_S = 60.0  # from the close to the exit: seconds on a quiet machine, a minute on a busy CI
BACKEND = BACKENDS["tpu-api"]
FETCH_MIB = 64


@dataclass
class Outcome:
    case: str
    code: int | None = None
    seconds: float | None = None  # from the close to the exit
    problems: list[str] = field(default_factory=list)


def job_started(home: Path, kind: str) -> bool:
    """A job of ``kind`` (bootstrap, verify, script, run) has started on worker 0."""
    jobs = f"sandbox/{BACKEND.folder}/*/*/*/w0/.tpuwizard/jobs/{kind}-*/pid"
    return any(home.glob(jobs))


def copying_back(root: Path) -> bool:
    """The fetched file has begun to arrive (as a hidden .part) in a run folder."""
    return any(
        part for run in (root / "runs").glob("*") for part in fetched_files(run).glob(".big.*")
    )


def point_reached(command: str, point: str, home: Path, root: Path, term: ShellTerminal) -> bool:
    names = sandbox_names(home)
    if point == "create":
        return ledger_holds(home, "created")
    if point == "ready":
        return any(node_state(home, name) == BACKEND.ready for name in names)
    if point == "teardown":
        return b"and checking that it is gone" in term.seen
    if point == "fetch":
        return copying_back(root)
    return job_started(home, "run" if command == "run" else point)  # a run's script: run-*


def processes_of(root: Path) -> list[str]:
    """Processes that run in, or name, the drill's folder (the command, its workers' jobs)."""
    found, mine = [], _ancestors()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) in mine:
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = os.readlink(proc / "cwd")
            zombie = "State:\tZ" in (proc / "status").read_text()
        except OSError:
            continue
        if not zombie and (str(root) in cmdline or cwd.startswith(str(root))):
            found.append(f"{proc.name}: {cmdline[:120]}")
    return found


def _ancestors() -> set[int]:
    """This process and those above it (the test runner, whatever started it)."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pids


def hang_up_at(case: str, root: Path, delay: float = 0.3) -> Outcome:
    """One case in its own state folder under ``root``; whatever it left is deleted after."""
    command, _, point = case.partition(" at ")
    home = root / "state"
    root.mkdir(parents=True, exist_ok=True)
    environ = env(
        TPUWIZARD_HOME=str(home), TPUWIZARD_SANDBOX_DELAY=str(2.0 if point == "create" else delay)
    )
    node = up_node(root, delay) if command == "run" else None
    try:
        if case == CLOSED_PIPE:
            return _closed_pipe(case, root, home, environ)
        return _in_a_shell(case, command, point, root, home, environ, node)
    finally:
        clean_up(home, root)


def _argv(command: str, point: str, root: Path, node: str | None) -> list[str]:
    script = root / "work" / ("fetched.py" if point == "fetch" else "long.py")
    script.parent.mkdir(exist_ok=True)
    script.write_text(FETCHED.format(size=FETCH_MIB << 20) if point == "fetch" else LONG)
    fetch = ["--fetch", "big.bin"] if point == "fetch" else []
    if command == "run":
        return ["run", "--sandbox", "--node", str(node), *fetch, str(script)]
    if command == "plain":
        return ["--plain", "--sandbox"]
    argv = [command, "--sandbox", *BACKEND.flags]
    if command == "launch" and point in ("script", "fetch"):
        argv += ["--script", str(script), *fetch]
    return argv


def _in_a_shell(
    case: str,
    command: str,
    point: str,
    root: Path,
    home: Path,
    environ: dict[str, str],
    node: str | None,
) -> Outcome:
    out = Outcome(case)
    code_file = root / "code.json"
    term = ShellTerminal(root, environ)
    try:
        term.type(typed_command(code_file, *_argv(command, point, root, node)))
        answer = _defaults(term, home) if command == "plain" else term.read
        if not _wait(lambda: point_reached(command, point, home, root, term), 180, answer):
            out.problems.append(
                f"never reached {point}: {term.seen.decode(errors='replace')[-600:]}"
            )
            return out
        term.close()
        _judge_exit(out, code_file, root, time.monotonic())
    finally:
        term.end()
    if command == "run":
        if node_state(home, str(node)) != BACKEND.ready:
            out.problems.append(f"the kept node is {node_state(home, str(node))}: a run ended it")
        if not job_started(home, "run") or not any(
            home.glob(f"sandbox/{BACKEND.folder}/*/*/*/w0/.tpuwizard/jobs/run-*/exit")
        ):
            out.problems.append("the script was not stopped on the worker")
        return out
    _judge_nothing_left(out, home, root)
    return out


def _defaults(term: ShellTerminal, home: Path) -> Callable[[], None]:
    """Plain mode's questions answered with Enter (each one's default) until it creates."""
    asked = [0.0]

    def answer() -> None:
        term.read(0.1)
        if not ledger_holds(home, "created") and time.monotonic() - asked[0] > 0.7:
            os.write(term.fd, b"\r")
            asked[0] = time.monotonic()

    return answer


def _closed_pipe(case: str, root: Path, home: Path, environ: dict[str, str]) -> Outcome:
    """``launch ... | head -1``, head long gone when the launch is stopped by SIGHUP."""
    out = Outcome(case)
    argv = tpuwizard_cmd(*_argv("launch", "script", root, None))
    with open(root / "stderr.txt", "w") as stderr:
        proc = subprocess.Popen(
            argv, cwd=root, env=environ, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=stderr,
        )  # fmt: skip
    assert proc.stdout is not None
    proc.stdout.readline()  # its first line read...
    proc.stdout.close()  # ...and the reader gone
    try:
        if not _wait(lambda: job_started(home, "script"), 180):
            out.problems.append(f"never reached the script: {(root / 'stderr.txt').read_text()}")
            return out
        closed = time.monotonic()
        proc.send_signal(signal.SIGHUP)
        try:
            out.code = proc.wait(timeout=STOP_S)
            out.seconds = time.monotonic() - closed
        except subprocess.TimeoutExpired:
            out.problems.append(f"still running {STOP_S:g} s after SIGHUP")
        if out.code != 129:
            out.problems.append(f"exit {out.code}, not 129: {(root / 'stderr.txt').read_text()}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _judge_nothing_left(out, home, root)
    return out


def _judge_exit(out: Outcome, code_file: Path, root: Path, closed: float) -> None:
    if not _wait(code_file.exists, STOP_S):
        pid = (root / "code.json.pid").read_text()
        out.problems.append(f"still running {STOP_S:g} s after the terminal closed")
        os.kill(int(pid), signal.SIGKILL)
        return
    out.seconds = time.monotonic() - closed
    out.code = json.loads(code_file.read_text())["code"]
    if out.code != 129:
        out.problems.append(f"exit {out.code}, not 129")


def _judge_nothing_left(out: Outcome, home: Path, root: Path) -> None:
    left = sandbox_names(home)
    if left:
        out.problems.append(f"left billing: {sorted(left)}")
    elif not ledger_all_gone(home):
        out.problems.append("nothing is left, but the ledger still holds open entries")
    if not _wait(lambda: not processes_of(root), 30):
        out.problems.append(f"processes left: {processes_of(root)}")
    outcomes = [json.loads(p.read_text()) for p in (root / "runs").glob("*/outcome.json")]
    if not any(o["exit_code"] == 129 and o["stopped_by"] == "SIGHUP" for o in outcomes):
        out.problems.append(f"no run folder says it was stopped by SIGHUP: {outcomes}")


def _wait(
    condition: Callable[[], bool], seconds: float, between: Callable[[], None] | None = None
) -> bool:
    """Poll ``condition``; ``between`` polls (the terminal read, so its writers never block)."""
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        (between or (lambda: time.sleep(0.05)))()
    return True
