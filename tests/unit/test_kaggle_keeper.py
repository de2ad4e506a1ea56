"""The Kaggle stand-in's kernels end at their session limit as Kaggle's do, even when the
command whose stand-in started them was killed outright (SIGKILL): its keeper ends the whole
process group then, and the stand-in's files say so to a later command (``status``)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap

from tests.waiting import wait_until
from tpuwizard.sandbox.kaggle.sessions import KernelSessions, _read_state, session_on_disk

SLUG = "ada/tpuwizard-r1"
LIMIT_S = 12  # seconds
# A kernel that would run for ever, with a child of its own (the user's script).
FOREVER = textwrap.dedent(
    """\
    import subprocess, sys, time
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    print("started", flush=True)
    time.sleep(600)
    """
)


def _group_gone(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False


def _kill_group(group: object) -> None:
    if isinstance(group, int) and group > 1:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)


def test_a_kernel_outlives_its_killed_command_until_its_session_limit_then_ends_whole(tmp_path):
    # The command (here a child process) pushes a kernel with a short session limit, waits for
    # it to start, and is killed outright: no stop of its own runs. The limit leaves room for a
    # loaded machine's slow starts: the kernel must still run when the command has died.
    command = textwrap.dedent(
        f"""\
        import os, signal, sys, time
        from pathlib import Path
        from tpuwizard.sandbox.kaggle.sessions import KernelSessions
        sessions = KernelSessions(Path({str(tmp_path)!r}), {{}})
        session = sessions.push({SLUG!r}, {FOREVER!r}, {LIMIT_S}, "TpuV5E8")
        while "started" not in session.lines:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    done = subprocess.run([sys.executable, "-c", command], timeout=60, check=False)
    assert done.returncode == -signal.SIGKILL
    folder = tmp_path / "ada__tpuwizard-r1" / "v1"
    group = _read_state(folder).get("group")
    try:
        assert isinstance(group, int) and not _group_gone(group)
        seen = session_on_disk(tmp_path, SLUG)
        assert seen.runs and seen.state == "RUNNING" and seen.group == group
        assert seen.ends_by is not None
        # Its limit reached: the kernel and the child it started are ended, as Kaggle would.
        wait_until(
            lambda: _group_gone(group), LIMIT_S + 60, "the session's group to end at its limit"
        )
        wait_until(lambda: not session_on_disk(tmp_path, SLUG).runs, 30, "its keeper's end")
        ended = session_on_disk(tmp_path, SLUG)
        assert ended.state == "ERROR"
        assert _read_state(folder)["failure"] == f"the session reached its limit of {LIMIT_S} s"
    finally:
        _kill_group(group)


def test_a_stand_in_that_ends_ends_its_kernels_and_says_so_on_disk(tmp_path):
    sessions = KernelSessions(tmp_path, {})
    session = sessions.push(SLUG, FOREVER, 600, "TpuV5E8")
    wait_until(lambda: "started" in session.lines, 60, "the kernel to start")
    group = _read_state(session.folder)["group"]
    try:
        sessions.stop_all()
        assert _group_gone(group)  # ended whole, before stop_all returns
        seen = session_on_disk(tmp_path, SLUG)
        assert not seen.runs and seen.state == "ERROR"
    finally:
        _kill_group(group)


def test_a_kernel_that_ends_is_complete_and_its_lines_survive_bytes_that_are_not_utf8(tmp_path):
    sessions = KernelSessions(tmp_path, {})
    kernel = 'import sys\nsys.stdout.buffer.write(b"caf\\xe9 latin-1\\nnext\\n")\n'
    session = sessions.push(SLUG, kernel, 600, "TpuV5E8")
    wait_until(session.ended.is_set, 60, "the kernel's end")
    assert session.state == "COMPLETE" and session.failure is None
    assert session.lines == ["caf\ufffd latin-1", "next"]
    assert not session_on_disk(tmp_path, SLUG).runs


def test_a_kernel_never_pushed_here_runs_nothing(tmp_path):
    seen = session_on_disk(tmp_path, "ada/tpuwizard-none")
    assert (seen.runs, seen.state, seen.group) == (False, None, None)


def test_the_session_limit_fault_ends_a_session_sooner_than_its_push_asked(tmp_path):
    sessions = KernelSessions(tmp_path, {"session_limit": "1"})
    session = sessions.push(SLUG, FOREVER, 600, "TpuV5E8")
    try:
        wait_until(session.ended.is_set, 60, "the session's end at 1 s")
        assert session.state == "ERROR"
        assert session.failure == "the session reached its limit of 1 s"
    finally:
        _kill_group(_read_state(session.folder).get("group"))
