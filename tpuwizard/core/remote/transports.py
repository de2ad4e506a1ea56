"""Running commands on TPU workers: OpenSSH, gcloud, or a local shell (the sandbox).

Every transport takes a remote shell command *string* built only by :func:`shell` from validated
parts, each passed through ``shlex.quote``, so nothing a user typed can change what runs.

Long jobs run detached (``nohup``; output to a log file, exit code to a file) and are followed
with ``tail -n +K -F``; when the connection drops, the follower reconnects from the first
line it has not seen, so no line is lost or shown twice and the job keeps running.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core.cancel import CancelToken, kill_tree
from tpuwizard.core.errors import BadInput, RemoteError
from tpuwizard.core.remote.fed_pipe import communicate

REMOTE_DIR = ".tpuwizard"  # under the worker's home
SSH_OPTIONS = (
    "-o",
    "BatchMode=yes",
    "-o",
    "StrictHostKeyChecking=accept-new",
    "-o",
    "ConnectTimeout=10",
    "-o",
    "ServerAliveInterval=5",
    "-o",
    "ServerAliveCountMax=3",
    "-o",
    "LogLevel=ERROR",
)


def shell(*parts: str | Sequence[str]) -> str:
    """Join command words into one shell string, quoting every word.

    Nested sequences are words too. Operators (``&&``, ``>``) are passed as :class:`Raw`.
    """
    words: list[str] = []
    for part in parts:
        if isinstance(part, Raw):
            words.append(part.text)
        elif isinstance(part, str):
            words.append(shlex.quote(part))
        else:
            words.extend(shlex.quote(p) for p in part)
    return " ".join(words)


class Raw(str):
    """A shell fragment written by tpuwizard itself (an operator or a fixed snippet)."""

    @property
    def text(self) -> str:
        return str(self)


def safe_relative(path: str) -> str:
    """A relative remote path: ASCII letters, digits, '.', '_', '-', '/'; no '..', no part that
    starts with '-', nothing that needs quoting."""
    cleaned = path.strip()
    parts = cleaned.split("/")
    if (
        not cleaned
        or cleaned.startswith("/")
        or any(p in ("", ".", "..") or p.startswith("-") for p in parts)  # '-x' reads as an option
        or not all((c.isascii() and c.isalnum()) or c in "._-/" for c in cleaned)
    ):
        raise BadInput(
            f"'{path}' is not a safe relative path: use letters, digits, '.', '_', "
            "'-' and '/', with no '..'."
        )
    return cleaned


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


class Transport(ABC):
    """Run a command on worker ``w``; subclasses say how to reach it."""

    workers: int

    @abstractmethod
    def argv(self, worker: int, command: str) -> list[str]:
        """The local argv that runs the shell string ``command`` on ``worker``."""

    def env(self, worker: int) -> dict[str, str] | None:
        return None

    def cwd(self, worker: int) -> str | None:
        return None

    def forget_host_keys(self) -> None:  # noqa: B027 (most transports keep no host keys)
        """After a verified teardown: this node's host keys will never be right again."""

    # Set by the launch: a cancel kills every command in flight, so no wait outlives a stop.
    cancel: CancelToken | None = None

    def _exec(
        self,
        worker: int,
        command: str,
        timeout: float,
        stdin: bytes | None = None,
        cancellable: bool = True,
    ) -> tuple[int, bytes, bytes]:
        return run_cancellable(
            self.argv(worker, command),
            stdin,
            timeout,
            self.cancel if cancellable else None,
            f"worker {worker}",
            env=self.env(worker),
            cwd=self.cwd(worker),
        )

    def run(
        self,
        worker: int,
        command: str,
        timeout: float = 600,
        stdin: bytes | None = None,
        cancellable: bool = True,
    ) -> Result:
        code, out, err = self._exec(worker, command, timeout, stdin, cancellable)
        return Result(code, out.decode(errors="replace"), err.decode(errors="replace"))

    def run_bytes(self, worker: int, command: str, timeout: float = 600) -> bytes:
        """Run ``command`` and return its standard output as bytes; non-zero exit raises."""
        code, out, err = self._exec(worker, command, timeout)
        if code != 0:
            raise RemoteError(f"worker {worker}: {err.decode(errors='replace').strip()}")
        return out

    def popen(self, worker: int, command: str) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                self.argv(worker, command),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env(worker),
                cwd=self.cwd(worker),
                start_new_session=True,  # so a cancel can kill it with everything it started
            )
        except OSError as err:  # as run_cancellable: the worker, never "a file on this computer"
            raise RemoteError(f"worker {worker}: cannot start {err.filename}: {err}") from err

    def upload(self, worker: int, data: bytes, remote_path: str, mode: str = "600") -> None:
        path = safe_relative(remote_path)
        parent = path.rsplit("/", 1)[0] if "/" in path else "."
        command = shell(
            "mkdir",
            "-p",
            parent,
            Raw("&&"),
            "cat",
            Raw(">"),
            path + ".part",
            Raw("&&"),
            "chmod",
            mode,
            path + ".part",
            Raw("&&"),
            "mv",
            path + ".part",
            path,
        )
        result = self.run(worker, command, stdin=data)
        if result.code != 0:
            raise RemoteError(f"worker {worker}: upload of {path} failed: {result.stderr.strip()}")

    def fetch(self, worker: int, remote_path: str) -> bytes:
        path = safe_relative(remote_path)
        code, out, err = self._exec(worker, shell("cat", path), timeout=300)
        if code != 0:
            raise RemoteError(
                f"worker {worker}: cannot read {path}: {err.decode(errors='replace').strip()}"
            )
        return out

    def wait_until_reachable(self, timeout: float = 300, interval: float = 2.0) -> None:
        """Retry a trivial command on every worker until it works (keys take time to land)."""
        deadline = time.monotonic() + timeout
        for worker in range(self.workers):
            while True:
                try:
                    result = self.run(worker, "true", timeout=30)
                    if result.code == 0:
                        break
                    last = result.stderr.strip()
                except RemoteError as err:
                    last = str(err)
                if any(sign in last for sign in HOST_KEY_CHANGED):
                    # Not something time fixes (and every retry bills): say it at once.
                    raise RemoteError(
                        f"worker {worker}: REMOTE HOST IDENTIFICATION HAS CHANGED ({last})"
                    )
                if time.monotonic() >= deadline:
                    raise RemoteError(f"worker {worker} is not reachable: {last}")
                if self.cancel is not None:
                    self.cancel.sleep(interval)
                else:
                    time.sleep(interval)


# What OpenSSH says when a known host presents another key (with accept-new, a new host is
# simply added, so a verification failure means a changed key).
HOST_KEY_CHANGED = ("REMOTE HOST IDENTIFICATION HAS CHANGED", "Host key verification failed")

_CREDENTIAL_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "AUTH")
_CREDENTIAL_PREFIXES = ("AWS_", "AZURE_", "CLOUDSDK_AUTH", "GOOGLE_APPLICATION_CREDENTIALS")


def is_credential_variable(name: str) -> bool:
    """Does this environment variable name look like it holds a credential?"""
    upper = name.upper()
    return upper.startswith(_CREDENTIAL_PREFIXES) or any(w in upper for w in _CREDENTIAL_WORDS)


class LocalTransport(Transport):
    """The sandbox: each worker is a folder on this machine, its home for the command."""

    def __init__(self, homes: Sequence[Path], path: str | None = None) -> None:
        self.homes = [Path(h) for h in homes]
        self.workers = len(self.homes)
        self.path = path  # the worker image's PATH, when the sandbox gives one

    def argv(self, worker: int, command: str) -> list[str]:
        return ["bash", "-c", command]

    def env(self, worker: int) -> dict[str, str]:
        # A worker is another machine: it gets none of this computer's credentials (a VM's
        # come from its metadata server), nor its JAX settings.
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("XLA_", "JAX_")) and not is_credential_variable(k)
        }
        env["HOME"] = str(self.homes[worker])
        if self.path is not None:
            env["PATH"] = self.path
        return env

    def cwd(self, worker: int) -> str:
        # Not created here: a worker whose VM is gone (preempted, deleted) must fail like one.
        return str(self.homes[worker])


class SshTransport(Transport):
    """The system OpenSSH client with tpuwizard's own key and known_hosts file."""

    def __init__(
        self,
        hosts: Sequence[str],
        user: str,
        key: Path,
        known_hosts: Path,
        port: int = 22,
        homes: Sequence[str | None] | None = None,
        host_key_aliases: Sequence[str] | None = None,
        path: str | None = None,
    ) -> None:
        self.path = path  # the sandbox worker image's PATH, exported before each command
        self.hosts, self.user, self.key = list(hosts), user, key
        self.known_hosts, self.port = known_hosts, port
        self.homes = list(homes) if homes else [None] * len(self.hosts)
        # Host keys are filed per node and worker, as gcloud does (HostKeyAlias=tpu.<id>-<w>):
        # Google recycles addresses, and a new VM on an old address must not look like an attack.
        self.aliases = list(host_key_aliases) if host_key_aliases else []
        self.workers = len(self.hosts)

    def argv(self, worker: int, command: str) -> list[str]:
        home = self.homes[worker]
        if home:  # the sandbox's sshd serves every worker from one account: give each its home
            # Parentheses keep the whole command, '&' included, inside the prefix.
            prefix = shell("cd", home, Raw("&&"), "export", f"HOME={home}", Raw("&&"))
            if self.path is not None:
                prefix += " " + shell("export", f"PATH={self.path}", Raw("&&"))
            command = f"{prefix} ( {command}\n)"
        return [*self.ssh_words(worker), self.destination(worker), "--", command]

    def ssh_words(self, worker: int) -> list[str]:
        """ssh and its options for ``worker``, without the address (rsync's ``-e`` is this)."""
        return [
            "ssh",
            "-i",
            str(self.key),
            "-p",
            str(self.port),
            *SSH_OPTIONS,
            "-o",
            f"UserKnownHostsFile={self.known_hosts}",
            "-o",
            "IdentitiesOnly=yes",
            *(["-o", f"HostKeyAlias={self.aliases[worker]}"] if self.aliases else []),
        ]

    def destination(self, worker: int) -> str:
        return f"{self.user}@{self.hosts[worker]}"

    def forget_host_keys(self) -> None:
        """Drop every worker's host key (by alias, else by address) from our known_hosts file,
        so an address Google gives to a new VM later is met afresh, not as an attack."""
        if not self.known_hosts.exists():
            return
        names = self.aliases or [h if self.port == 22 else f"[{h}]:{self.port}" for h in self.hosts]
        for name in names:
            subprocess.run(
                ["ssh-keygen", "-R", name, "-f", str(self.known_hosts)],
                capture_output=True,
                check=False,
            )


class GcloudTransport(Transport):
    """``gcloud compute tpus tpu-vm ssh``, for projects that enforce OS Login."""

    def __init__(
        self, node: str, zone: str, project: str, workers: int, through_iap: bool = False
    ) -> None:
        self.node, self.zone, self.project, self.workers = node, zone, project, workers
        self.through_iap = through_iap  # the workers have no external address

    def argv(self, worker: int, command: str) -> list[str]:
        gcloud = shutil.which("gcloud") or "gcloud"
        return [
            gcloud,
            "compute",
            "tpus",
            "tpu-vm",
            "ssh",
            self.node,
            f"--zone={self.zone}",
            f"--project={self.project}",
            f"--worker={worker}",
            "--quiet",
            *(["--tunnel-through-iap"] if self.through_iap else []),
            f"--command={command}",
        ]


def run_cancellable(
    argv: list[str],
    stdin: bytes | None,
    timeout: float,
    token: CancelToken | None,
    who: str,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    progress: Callable[[int], None] | None = None,  # the bytes of stdin written so far
) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of a local command a cancel kills with all it started."""
    if token is not None:
        token.check()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,  # so a cancel can kill it with everything it started
        )
    except OSError as err:
        raise RemoteError(f"{who}: cannot start {err.filename}: {err}") from err
    if token is not None:
        token.register(proc)
    try:
        out, err_out = communicate(proc, stdin, timeout, progress)
    except subprocess.TimeoutExpired as err:
        kill_tree(proc)
        proc.communicate()
        raise RemoteError(f"{who}: no answer after {timeout:.0f} s") from err
    finally:
        if token is not None:
            token.unregister(proc)
    if token is not None:
        token.check()
    return proc.returncode, out, err_out
