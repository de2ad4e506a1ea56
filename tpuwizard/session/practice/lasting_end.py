"""Ending a lasting practice sandbox on purpose: `down --sandbox --all` (or `teardown --sandbox
--all`), once everything is verified gone, ends the practice cloud too. It is the way out the
sandbox's own refusal names (a rehearsal's faults asked while it serves), and a lasting sandbox
that lingers holding nothing would otherwise keep serving what it was started with."""

from __future__ import annotations

import os
import time

from tpuwizard.core import paths
from tpuwizard.session.practice import sandbox as practice
from tpuwizard.session.practice.lasting_info import read_server_info


def end_lasting_sandbox(wait_s: float = 10.0) -> str | None:
    """End the lasting sandbox of this state folder unless another command is using it; what
    happened, in words (None: there was none)."""
    folder = paths.state_dir() / "sandbox"
    info = folder / practice.LASTING_SERVER_FILE
    if not info.exists():
        return None
    mine = practice._ATTACHED.pop(str(folder), None)  # this command's own use of it ends here
    if mine is not None:
        os.close(mine)
    try:
        fd = practice.lasting_lock(folder, exclusive=True)
    except BlockingIOError:
        return (
            "The lasting practice sandbox stays up: another tpuwizard command is using it. "
            "It ends by itself once it has held nothing for a while."
        )
    try:
        try:  # untrusted input: a pid of 1 or below is no server's (it would wait on no one)
            pid = read_server_info(info)["pid"]
        except (OSError, ValueError, KeyError, TypeError):
            pid = None
        info.unlink(missing_ok=True)  # it watches for this, and ends (practice/lasting.py)
    finally:
        os.close(fd)
    deadline = time.monotonic() + wait_s
    while pid is not None and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            break
        time.sleep(0.1)
    return "The lasting practice sandbox has ended: the next practice command starts a fresh one."
