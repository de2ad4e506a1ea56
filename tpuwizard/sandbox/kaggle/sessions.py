"""The Kaggle stand-in's kernels: each pushed version runs as a local process on JAX's CPU
devices, as Kaggle would run it on its machine, and is ended at its ``session_timeout_seconds``.

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
never answers it (kaggle's requests have no timeout).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tpuwizard.core.evidence.verifier import cpu_device_env

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
    process: subprocess.Popen[str] | None = None
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
        with self.lock:  # started, or ended by stop_all, never both: no kernel outlives it
            if session.ended.is_set():
                return
            session.process = subprocess.Popen(
                [sys.executable, "-u", str(session.folder / "kernel.py")],
                cwd=session.folder / "working",
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                start_new_session=True,
            )
        session.state = "RUNNING"
        timer = threading.Timer(session.timeout_s, self._time_out, args=(session,))
        timer.daemon = True
        timer.start()
        assert session.process.stdout is not None
        for line in session.process.stdout:
            session.lines.append(line.rstrip("\n"))
        code = session.process.wait()
        timer.cancel()
        if session.state == "RUNNING":
            session.state = "COMPLETE" if code == 0 else "ERROR"
            if code:
                session.failure = f"the kernel's script exited {code}"
        (session.folder / "working" / "kernel.log").write_text("\n".join(session.lines) + "\n")
        session.ended.set()

    def _time_out(self, session: Session) -> None:
        if session.process is not None and session.process.poll() is None:
            session.state = "ERROR"
            session.failure = f"the session reached its limit of {session.timeout_s:.0f} s"
            session.process.kill()

    def stop_all(self) -> None:
        """The stand-in is ending: its kernels' processes end with it."""
        with self.lock:
            self.stopped = True
            sessions = list(self.latest.values())
            for session in sessions:
                session.ended.set()
        for session in sessions:
            if session.process is not None and session.process.poll() is None:
                session.process.kill()
                session.process.wait()

    def output_files(self, session: Session) -> list[str]:
        working = session.folder / "working"
        if not session.ended.is_set():
            return []
        return sorted(
            p.relative_to(working).as_posix()
            for p in working.rglob("*")
            if p.is_file() and p.name != "kernel.log"
        )


def _kernel_environment() -> dict[str, str]:
    """What a kernel gets: nothing of this computer's Kaggle settings, proxy or credentials."""
    dropped = ("KAGGLE_", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "TPUWIZARD_")
    return {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
