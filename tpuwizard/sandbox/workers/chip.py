"""A practice worker's chip: the stand-in for a TPU VM's device files, and the fault that leaves a
process holding it.

A TPU VM's chip is a device file (``/dev/accel0``, or VFIO's ``/dev/vfio/0`` on v5e and v5p) that
one process at a time holds open. A practice worker is a folder on this computer, so its chip is
a plain file in its home, ``dev/accel0``: tpuwizard lists who holds it as it lists who holds the
real ones (core/launch/workers/held_chip.py), from ``/proc/<pid>/fd``. Practice scripts run
on CPU devices and never open it; only the fault's process does.

Fault ``held_chip=other``: a process tpuwizard did not start (as one a user started by hand over
SSH) holds worker 0's chip. ``held_chip=ours``: a process of an earlier tpuwizard run holds it
(a job whose laptop lost its connection: it leads its own session, its id in the job's ``pid``
file, as :func:`~tpuwizard.core.remote.jobs.start_job` records every job). Either is started
once per VM, and is the VM's: started with its ``HOME``, it ends with the VM (processes.py).
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import threading
from enum import Enum
from pathlib import Path

STAND_IN = "dev/accel0"  # under the worker's home
# What tpuwizard lists on a practice worker (``~/``: under its home) in place of TPU_DEVICE_FILES.
STAND_IN_FILES = ("~/dev/accel*",)
LEFT_JOB = "run-practice-left-behind"  # the earlier run's job, as start_job names a run's
_HOLDER = (
    "import sys, time; chip = open(sys.argv[1], 'rb'); print('holding', flush=True); "
    "time.sleep(3600)"
)
_STARTED_S = 30.0  # Python starts in well under this on a loaded machine


class HeldChip(Enum):
    OURS = "ours"  # an earlier tpuwizard run's process
    OTHER = "other"  # a process tpuwizard did not start


def make_stand_in(home: Path) -> Path:
    """The worker's chip: an empty file, as a device file's contents are nothing to read."""
    chip = home / STAND_IN
    chip.parent.mkdir(parents=True, exist_ok=True)
    chip.touch()
    return chip


def hold_chip(home: Path, held: HeldChip) -> int | None:
    """Start a process holding ``home``'s chip (the VM's: its ``HOME``, its own session); return
    its pid once it holds it, or None when it did not start."""
    chip = make_stand_in(home).resolve()
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(chip)],
        cwd=home,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert proc.stdout is not None
    with proc.stdout:
        ready, _, _ = select.select([proc.stdout], [], [], _STARTED_S)
        if not ready or not proc.stdout.readline().startswith(b"holding"):
            proc.kill()
            proc.wait()
            return None
    # Reaped as soon as it ends, so that an ended holder is gone, not a zombie that kill -0 finds.
    threading.Thread(target=proc.wait, name="held-chip-reaper", daemon=True).start()
    if held is HeldChip.OURS:
        job = home / ".tpuwizard" / "jobs" / LEFT_JOB
        job.mkdir(parents=True, exist_ok=True)
        (job / "log").touch()
        (job / "pid").write_text(f"{proc.pid}\n")
    return proc.pid


def hold_chips(vm_homes: list[Path], held: HeldChip) -> None:
    """Worker 0 of each VM in ``vm_homes`` (each VM's ``w0``) gets a holder, once per VM (a mark
    beside its home; a VM made again under the name gets its own)."""
    for home in vm_homes:
        mark = home.parent / f".held-chip-{home.name}"
        if mark.exists() or not home.is_dir():
            continue
        with contextlib.suppress(OSError):  # the VM is being deleted: nothing to hold then
            mark.touch()
            hold_chip(home, held)
