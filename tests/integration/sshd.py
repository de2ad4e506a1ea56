"""A real OpenSSH server on 127.0.0.1, run as the current user, for the SSH tests."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.waiting import wait_until


def sshd_binary() -> str | None:
    return shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Sshd:
    port: int
    authorized_keys: Path
    user: str
    process: subprocess.Popen


def start_sshd(folder: Path, port: int | None = None) -> Sshd:
    """An sshd with a new host key; ``port`` reuses an address another one had."""
    binary = sshd_binary()
    assert binary is not None
    folder.mkdir(parents=True, exist_ok=True)
    host_key = folder / "host_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)], check=True)
    keys = folder / "authorized_keys"
    keys.touch(mode=0o600)
    port = port or free_port()
    config = folder / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\n"
        f"AuthorizedKeysFile {keys}\nPidFile {folder / 'sshd.pid'}\n"
        "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nX11Forwarding no\n"
        "PrintMotd no\nAllowTcpForwarding no\n"
    )
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
    process = subprocess.Popen(
        [binary, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError as err:
            if process.poll() is not None:
                reason = process.stderr.read().decode()  # type: ignore[union-attr]
                raise RuntimeError(f"sshd exited: {reason}") from err
            return False

    wait_until(listening, 30, "sshd to listen")
    return Sshd(port, keys, getpass.getuser(), process)
