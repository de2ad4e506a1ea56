"""Detached jobs on a worker: started with ``nohup``, followed with ``tail -F``, reconnecting.

A job keeps running when the connection drops; its follower reconnects from the first line it
has not seen, so no line is lost or shown twice.
"""

from __future__ import annotations

import contextlib
import shlex
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tpuwizard.core.cancel import CancelToken, kill_tree
from tpuwizard.core.errors import RemoteError
from tpuwizard.core.remote.line_pieces import LinePieces
from tpuwizard.core.remote.transports import REMOTE_DIR, Transport, safe_relative, shell

# In a job's folder once its wrapper passed a SIGTERM on to the command.
SIGTERM_MARK = "sigterm"


@dataclass(frozen=True)
class Job:
    name: str  # validated: letters, digits, '-' and '_'

    @property
    def folder(self) -> str:
        return f"{REMOTE_DIR}/jobs/{self.name}"

    @property
    def log(self) -> str:
        return f"{self.folder}/log"


def start_job(
    transport: Transport, worker: int, job: Job, command: str, env: dict[str, str] | None = None
) -> None:
    """Start ``command`` detached on ``worker``; it survives the connection."""
    safe_relative(job.folder)
    exports = " ".join(shell("export", f"{k}={v}") + " &&" for k, v in (env or {}).items())
    # The command runs in the background of its wrapper, which passes a SIGTERM on to it (a
    # shell waiting on a foreground child would die of it and leave the child running): a
    # maintenance warning or a stop reaches the script, which may save, and the wrapper still
    # writes the script's own exit code. The marker file says a SIGTERM came this way.
    # A ``wait`` the trap interrupted returns 143, not the child's status: while the trap ran
    # (``got``) and the child lives, wait again; once it is gone, one more ``wait`` gives its
    # stored status, unless that wait already came (bash then answers 127 or -1: keep 143).
    inner = (
        "child=; got=; on_term() { got=1; "
        f": > {shlex.quote(job.folder + '/' + SIGTERM_MARK)}; "
        '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; }; trap on_term TERM; '
        f"( {exports} {command} ) > {shlex.quote(job.log)} 2>&1 & child=$!; "
        'while :; do got=; wait "$child"; code=$?; [ -z "$got" ] && break; '
        'kill -0 "$child" 2>/dev/null && continue; wait "$child"; again=$?; '
        '[ "$again" -ge 0 ] && [ "$again" -lt 127 ] && code=$again; break; done; '
        f"echo $code > {shlex.quote(job.folder + '/exit.part')} && "
        f"mv {shlex.quote(job.folder + '/exit.part')} {shlex.quote(job.folder + '/exit')}"
    )
    # Prepare first (and stop if that fails), then background only the job itself.
    launcher = (
        shell("mkdir", "-p", job.folder)
        + " && "
        + shell("rm", "-f", job.folder + "/exit", job.folder + "/" + SIGTERM_MARK)
        + " && : > "
        + shlex.quote(job.log)
        # setsid: the job leads its own process group, so stop_job can end all of it.
        + " || exit 1; nohup setsid bash -c "
        + shlex.quote(inner)
        + " > /dev/null 2>&1 < /dev/null & echo $! > "
        + shlex.quote(job.folder + "/pid")
    )
    result = transport.run(worker, launcher, timeout=60)
    if result.code != 0:
        raise RemoteError(f"worker {worker}: could not start {job.name}: {result.stderr.strip()}")


def follow_job(
    transport: Transport,
    worker: int,
    job: Job,
    on_line: Callable[[str], None],
    reconnects: int = 20,
    poll: float = 1.0,
    cancel: CancelToken | None = None,
) -> int:
    """Stream the job's log line by line until it exits; returns its exit code.

    A dropped connection is followed by a reconnect from the first unseen line. A set ``cancel``
    token kills the follower (not the job) and raises :class:`Cancelled`.
    """
    lines = LinePieces(on_line)  # linear in a line's length; a huge one comes in pieces
    for attempt in range(reconnects + 1):
        if attempt:
            lines.reconnect()  # what was left of an unfinished line comes again with this tail
        # tail stops once the watcher exits, which it does when the exit file appears; tail
        # --pid on the job itself would wait until init reaps it, seconds later in containers.
        command = (
            # ...or when the job's folder vanishes (the VM was preempted or deleted).
            # ...or when this follower's shell is gone (the follower was stopped). Its output
            # goes nowhere, so it never holds the pipe that the follower reads open.
            f"( while [ ! -e {shlex.quote(job.folder + '/exit')} ] && "
            f"[ -d {shlex.quote(job.folder)} ] && kill -0 $$ 2>/dev/null; do sleep 0.1; done "
            ") >/dev/null 2>&1 & "
            f"tail -n +{lines.seen + 1} -F -s 0.1 --pid=$! {shlex.quote(job.log)} 2>/dev/null"
        )
        proc = transport.popen(worker, command)
        if cancel is not None:
            cancel.register(proc)
        assert proc.stdout is not None
        try:
            while chunk := proc.stdout.read1(65536):  # type: ignore[attr-defined]
                lines.feed(chunk)
        finally:
            kill_tree(proc)
            proc.wait()
            if cancel is not None:
                cancel.unregister(proc)
        if cancel is not None:
            cancel.check()
        code = _exit_code(transport, worker, job)
        # A follower that was cut off may have missed the job's last lines even though the job
        # has ended by now: read on from the first unseen line before returning its code.
        if code is not None and (proc.returncode == 0 or attempt == reconnects):
            lines.finish()  # a last line without its newline is still the job's
            return code
        if attempt < reconnects and code is None:
            time.sleep(poll)
    raise RemoteError(
        f"worker {worker}: lost the connection to {job.name} "
        f"{reconnects} times; it may still be running"
    )


def stop_job(transport: Transport, worker: int, job: Job, grace: float = 1.0) -> None:
    """End the job and everything it started (TERM, then KILL after ``grace`` seconds).

    Writes exit code 143 when the job had not finished, so followers stop too. Never raises:
    stopping is part of cleaning up, and the node's delete follows regardless.
    """
    folder = shlex.quote(job.folder)
    steps = int(max(1, grace * 10))
    # Right after start the job may not lead its group yet (setsid has not run): then the
    # process itself is signalled, before it can start anything.
    signal_all = 'kill -{sig} -- "-$pid" 2>/dev/null || kill -{sig} "$pid" 2>/dev/null'
    command = (
        f"[ -e {folder}/pid ] || exit 0; pid=$(cat {folder}/pid); "
        + signal_all.format(sig="TERM")
        + f"; for i in $(seq {steps}); do "
        + signal_all.format(sig="0")
        + " || break; sleep 0.1; done; "
        + signal_all.format(sig="KILL")
        + f"; [ -e {folder}/exit ] || echo 143 > {folder}/exit"
    )
    with contextlib.suppress(RemoteError):
        transport.run(worker, command, timeout=grace + 10, cancellable=False)


def got_sigterm(transport: Transport, worker: int, job: Job) -> bool:
    """Did the job's wrapper pass a SIGTERM on to it? (Not one sent straight to the script's
    process, as Google's maintenance warning is: only the script's exit code can say that.)"""
    try:
        result = transport.run(worker, shell("test", "-e", job.folder + "/" + SIGTERM_MARK), 30)
    except RemoteError:
        return False
    return result.code == 0


def _exit_code(transport: Transport, worker: int, job: Job) -> int | None:
    try:
        result = transport.run(worker, shell("cat", job.folder + "/exit"), timeout=30)
    except RemoteError:
        return None
    text = result.stdout.strip()
    return int(text) if result.code == 0 and text.lstrip("-").isdigit() else None


def fan_out(transport: Transport, action: Callable[[int], object]) -> list[object]:
    """Run ``action(worker)`` on every worker at once; re-raise the first failure."""
    with ThreadPoolExecutor(max_workers=max(1, transport.workers)) as pool:
        return list(pool.map(action, range(transport.workers)))


def prefix(worker: int, workers: int) -> str:
    return f"[w{worker}] " if workers > 1 else ""
