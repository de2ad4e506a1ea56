"""tpuwizard's own SSH identity and how host keys are filed."""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

from tpuwizard.core import untrusted


def host_key_aliases(uid: str, workers: int) -> list[str] | None:
    """gcloud's per-worker host key names, ``tpu.<node's numeric id>-<worker>``."""
    return [f"tpu.{uid}-{w}" for w in range(workers)] if uid else None


def ensure_key(state_dir: Path) -> tuple[Path, str]:
    """tpuwizard's own ed25519 key pair (0600), made once with ssh-keygen; returns (key, pub).

    Made under a lock and moved into place whole (the public half first), so two first launches
    at once agree on one key and neither ever reads half of one.
    """
    folder = state_dir / "ssh"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = folder / "id_ed25519"
    if not key.exists():
        fd = os.open(folder / "keygen.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not key.exists():  # another process may have made it while we waited
                part = folder / f"id_ed25519.{os.getpid()}.part"
                for stale in (part, part.with_suffix(".part.pub")):
                    stale.unlink(missing_ok=True)
                keygen = ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "tpuwizard"]
                subprocess.run(
                    [*keygen, "-f", str(part)],
                    check=True,
                    capture_output=True,
                )
                os.replace(part.with_name(part.name + ".pub"), key.with_suffix(".pub"))
                os.replace(part, key)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
    key.chmod(0o600)
    public = untrusted.read_text(key.with_suffix(".pub"), 64 * untrusted.KIB)  # never a FIFO
    return key, public.strip()
