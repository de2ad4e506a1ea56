"""The Kaggle stand-in's kernels: each pushed version runs as a local process on JAX's CPU
devices, as Kaggle would run it on its machine, and is ended at its ``session_timeout_seconds``
by a keeper process of its own (keeper.py), so a command killed outright leaves its kernel
running until that limit, as Kaggle would, and no longer; a stand-in that ends (its command
stopped or done) ends its kernels. ``session_on_disk`` says what a later command finds.

Faults (``;``-separated, as the TPU sandbox's): ``queue=S`` keeps a session QUEUED for S
seconds; ``pinned`` gives every kernel a pinned Docker image in its metadata (it runs on CPU,
as every kernel here does: Kaggle/kaggle-cli#1197); ``quota_exhausted`` spends the weekly TPU
quota; ``unverified`` refuses pushes as for an account without a verified phone (the words are
the stand-in's own); ``kernel_error`` ends every session with ERROR as soon as it starts;
``lose_push`` takes the first push and resets the connection instead of answering it;
``newer_client=V`` announces API version V on every answer (kaggle then prints a notice);
``slow_push=S`` answers a push only after S seconds; ``drop_after=N`` resets every request
after the N-th status answer, as a network that dropped while the run was followed;
``hang=M1,M2`` accepts each request for those methods (``hang`` alone: every request) and
never answers it (kaggle's requests have no timeout); ``session_limit=S`` ends every session
S seconds after it starts, whatever limit its push asked for.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpuwizard.core.evidence.verifier import cpu_device_env
from tpuwizard.core.kaggle.records import PracticeSession
from tpuwizard.core.untrusted import MIB, read_json
from tpuwizard.sandbox.kaggle.keeper import LOCK_FILE, OUTPUT_FILE, STATE_FILE

SESSION_STATE_LIMIT = MIB  # the keeper writes a few fields: more is none of its files

KEEPER = str(Path(__file__).with_name("keeper.py"))  # run as a file: see its docstring
STOP_WAIT_S = 10.0  # a keeper asked to end its session is given this long

PINNED_IMAGE = "gcr.io/kaggle-images/python@sha256:0f4e3d2c1b0a"  # the stand-in's pinned image
UNVERIFIED_WORDS = "Phone verification is required to use accelerators (sandbox's words)"
TPU_HOURS_PER_WEEK = 20.0  # the stand-in's weekly allowance
TPU_DEVICES = 8  # TpuV5E8: the CPU devices a practice kernel sees


def parse_kaggle_faults(spec: str | None) -> dict[str, str]:
    faults: dict[str, str] = {}
    for part in (spec or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key:
            faults[key] = value
    return faults


@dataclass
class Session:
    slug: str  # owner/name
    version: int
    folder: Path
    timeout_s: float
    shape: str
    pushed_at: float
    queue_s: float
    fail_at_start: bool
    lines: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None  # the session's keeper
    state: str = "QUEUED"
    failure: str | None = None
    ended: threading.Event = field(default_factory=threading.Event)


class KernelSessions:
    """Every version pushed to the stand-in, by slug; the latest is the kernel's session."""

    def __init__(self, state_dir: Path, faults: dict[str, str]) -> None:
        self.state_dir, self.faults = state_dir, faults
        self.latest: dict[str, Session] = {}
        self.lock = threading.Lock()
        self.stopped = False  # the stand-in ended: a push answered late runs no kernel

    def push(self, slug: str, text: str, timeout_s: float | None, shape: str) -> Session:
        with self.lock:
            previous = self.latest.get(slug)
            version = previous.version + 1 if previous else 1
            folder = self.state_dir / slug.replace("/", "__") / f"v{version}"
            (folder / "working").mkdir(parents=True, exist_ok=True)
            (folder / "kernel.py").write_text(text)
            session = Session(
                slug,
                version,
                folder,
                timeout_s or 12 * 3600.0,
                shape,
                time.monotonic(),
                float(self.faults.get("queue") or 0),
                "kernel_error" in self.faults,
            )
            self.latest[slug] = session
            if self.stopped:
                session.ended.set()
                return session
        threading.Thread(target=self._run, args=(session,), daemon=True).start()
        return session

    def _run(self, session: Session) -> None:
        if session.ended.wait(session.queue_s):
            return  # the stand-in stopped while it was queued
        if session.fail_at_start:
            session.state, session.failure = (
                "ERROR",
                "the sandbox ended this session (kernel_error)",
            )
            session.ended.set()
            return
        env = cpu_device_env(TPU_DEVICES, _kernel_environment())
        limit_s = float(self.faults.get("session_limit") or session.timeout_s)
        with self.lock:  # started, or ended by stop_all, never both: no kernel outlives it
            if session.ended.is_set():
                return
            # The keeper runs the kernel and ends it at its limit, even after this process is
            # gone (a SIGKILL): a session outlives its client, as on Kaggle, but not its limit.
            # Its lock taken here and handed over, so a later command never finds it free
            # while the keeper starts.
            lock = os.open(session.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)
                keeper = [KEEPER, str(session.folder), f"{limit_s:g}", str(lock), "--"]
                kernel = session.folder / "kernel.py"
                with (session.folder / "keeper.log").open("ab") as keeper_log:
                    session.process = subprocess.Popen(
                        [sys.executable, "-I", *keeper, sys.executable, "-u", str(kernel)],
                        env=env,
                        stdin=subprocess.DEVNULL,
                        stdout=keeper_log,
                        stderr=subprocess.STDOUT,
                        pass_fds=(lock,),
                        start_new_session=True,  # no terminal's signal, nor stop of ours
                    )
            finally:
                os.close(lock)  # the keeper's copy holds the lock from now on
        session.state = "RUNNING"
        lines = _LogLines(session.folder / OUTPUT_FILE, session.lines)
        while session.process.poll() is None:
            lines.read()
            with contextlib.suppress(subprocess.TimeoutExpired):
                session.process.wait(timeout=0.1)
        lines.read(final=True)
        ended = _read_state(session.folder)
        if session.state == "RUNNING":
            session.state = str(ended.get("state") or "ERROR")
            session.failure = ended.get("failure") or (
                None if session.state == "COMPLETE" else "the stand-in lost this session"
            )
        (session.folder / "working" / "kernel.log").write_text("\n".join(session.lines) + "\n")
        session.ended.set()

    def stop_all(self) -> None:
        """The stand-in is ending: its kernels' sessions end with it (each keeper asked, and
        waited for; one that does not end is killed with its kernel's whole group)."""
        with self.lock:
            self.stopped = True
            sessions = list(self.latest.values())
            for session in sessions:
                session.ended.set()
        for session in sessions:
            keeper = session.process
            if keeper is None or keeper.poll() is not None:
                continue
            keeper.terminate()
            try:
                keeper.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                keeper.kill()
                keeper.wait()
                group = _read_state(session.folder).get("group")
                if isinstance(group, int) and group > 1:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(group, signal.SIGKILL)
                    # Its processes are no children of ours to wait on: see them go, bounded,
                    # so "the stand-in ended" means its kernels ended too.
                    deadline = time.monotonic() + STOP_WAIT_S
                    while _group_running(group) and time.monotonic() < deadline:
                        time.sleep(0.05)

    def output_files(self, session: Session) -> list[str]:
        working = session.folder / "working"
        if not session.ended.is_set():
            return []
        return sorted(
            p.relative_to(working).as_posix()
            for p in working.rglob("*")
            if p.is_file() and p.name != "kernel.log"
        )


class _LogLines:
    """The kernel's output file, read as bytes as it grows and cut into lines; a byte that is
    not UTF-8 is replaced, never the end of the reading (as Kaggle's log keeps a line)."""

    def __init__(self, path: Path, lines: list[str]) -> None:
        self.path, self.lines = path, lines
        self.offset, self.pending = 0, b""

    def read(self, final: bool = False) -> None:
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            data = b""
        self.offset += len(data)
        *whole, self.pending = (self.pending + data).split(b"\n")
        if final and self.pending:
            whole, self.pending = [*whole, self.pending], b""
        self.lines.extend(line.decode("utf-8", "replace") for line in whole)


def _read_state(folder: Path) -> dict[str, Any]:
    """The keeper's ``session.json``; {} where there is none (it never started), it is torn, or
    it is no small file (a FIFO would hang the read, ``/dev/zero`` never end it)."""
    try:
        data = read_json(folder / STATE_FILE, SESSION_STATE_LIMIT, max_depth=None)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _lock_held(path: Path) -> bool:
    """Whether a keeper holds the session's lock: its session may still run. Opened for
    reading: flock needs no write, and a read-only home (``status`` and ``teardown`` work
    from one) refuses a file opened for writing."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing it lets go of a lock this took
    return False


def _group_running(group: int) -> bool:
    """Whether a process of ``group`` is left that is not a zombie (a zombie nothing reaps, as
    in a container whose first process does not, runs nothing)."""
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(group) and fields[0] != "Z":
            return True
    return False if Path("/proc").is_dir() else _group_alive(group)


def _group_alive(group: object) -> bool:
    if not isinstance(group, int) or group <= 1:
        return False
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def latest_folder(state_dir: Path, slug: str) -> Path | None:
    """The folder of a kernel's latest pushed version; None where it was never pushed here."""
    versions = [
        (int(p.name[1:]), p)
        for p in (state_dir / slug.replace("/", "__")).glob("v*")
        if p.name[1:].isdigit()
    ]
    return max(versions)[1] if versions else None


def session_on_disk(state_dir: Path, slug: str) -> PracticeSession:
    """What the stand-in's files say of a kernel's session, whether or not the command whose
    stand-in ran it still runs: it runs while its keeper holds its lock (or, the keeper gone,
    while any process of its group is left)."""
    folder = latest_folder(state_dir, slug)
    if folder is None:
        return PracticeSession(runs=False, state=None, ends_by=None, group=None)
    state = _read_state(folder)
    group = state.get("group")
    ends_at = state.get("ends_at")
    runs = _lock_held(folder / LOCK_FILE) or _group_alive(group)
    return PracticeSession(
        runs=runs,
        state=str(state["state"]) if state.get("state") else None,
        ends_by=float(ends_at) if isinstance(ends_at, int | float) else None,
        group=group if isinstance(group, int) else None,
    )


def _kernel_environment() -> dict[str, str]:
    """What a kernel gets: nothing of this computer's Kaggle settings, proxy or credentials."""
    dropped = ("KAGGLE_", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "TPUWIZARD_")
    return {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
