"""A sandbox VM's processes, and ending them all when the VM goes (deleted, preempted, stopped).

A sandbox node's VMs are folders on this machine (one worker home each), and every command a
worker runs gets its home as ``HOME`` and works in it (the local transport; over the paired sshd,
an exported ``HOME``). A job leads its own process group, its id in the job's pid file, so
killing that group ends the job and what it started. A process the script detached from the
group (``setsid``, a double fork) is still the VM's: it was started with the VM's ``HOME``. On
Linux ``/proc/<pid>/environ`` shows the environment each process was started with (whatever it
set since), so those are ended too, as a VM's delete ends every process on it. Elsewhere only
the job groups can be found. The working folder is not taken as a sign: a person's own shell
may stand in a worker's folder without being the VM's.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

from tpuwizard.core import untrusted

PROC = Path("/proc")
# A process may fork while the others are being ended: look again, this many times at most.
ROUNDS = 5


def end_worker_processes(node_folder: Path) -> None:
    """Kill every process of a sandbox node's (or instance's) VMs, under ``node_folder``."""
    for pid_file in node_folder.glob("w*/.tpuwizard/jobs/*/pid"):
        try:  # written on the VM, where the user's script runs too: a FIFO must not hang this
            pgid = int(untrusted.read_text(pid_file, 64).strip())
        except (OSError, ValueError):
            continue
        if pgid > 1 and _leads_a_vm_group(pgid, node_folder):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
    for _ in range(ROUNDS):
        left = list(vm_processes(node_folder))
        if not left:
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _leads_a_vm_group(pgid: int, node_folder: Path) -> bool:
    """Whether group ``pgid`` is still this VM's job: its leader was started with a ``HOME``
    within ``node_folder``. A pid file outlives its job, and its number comes round again for
    another process (pid_max is 32768 on many machines, used up in minutes under test load):
    killing by the number alone ended other processes' groups, a lasting practice sandbox or
    another node's watchdog among them. Where there is no ``/proc``, the number is all there is.
    A group whose leader is gone is not killed by number: its processes still carry the VM's
    ``HOME`` and are found by :func:`vm_processes`."""
    if not PROC.is_dir():
        return True
    try:
        home = _started_home(PROC / str(pgid))
    except OSError:  # no such process now, or another user's: not this VM's to end
        return False
    if not home:  # a zombie's environment is empty
        return False
    return _within(Path(home).resolve(), node_folder.resolve())


def vm_processes(node_folder: Path) -> Iterator[int]:
    """The live processes (of this user) started with a ``HOME`` under ``node_folder``; none
    where there is no ``/proc``."""
    try:
        folder = node_folder.resolve()
        entries = list(PROC.iterdir())
    except OSError:
        return
    me = os.getpid()
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            home = _started_home(entry)
        except OSError:  # gone meanwhile, or another user's: not ours to end
            continue
        if home and _within(Path(home).resolve(), folder):
            yield int(entry.name)


def _started_home(entry: Path) -> str | None:
    """The ``HOME`` in the environment process ``entry`` was started with (None: none; a zombie
    has an empty environment)."""
    for item in (entry / "environ").read_bytes().split(b"\0"):
        if item.startswith(b"HOME="):
            return os.fsdecode(item[5:])
    return None


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
