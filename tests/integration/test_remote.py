"""Transports for real: a local shell and OpenSSH against a real sshd on loopback."""

import os
import shlex
import subprocess
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.integration.launch_helpers import launch, ledger_all_gone, sandbox_is_empty
from tpuwizard.core.errors import BadInput, RemoteError
from tpuwizard.core.remote.jobs import Job, follow_job, start_job
from tpuwizard.core.remote.ssh_keys import ensure_key
from tpuwizard.core.remote.transports import (
    LocalTransport,
    Raw,
    SshTransport,
    Transport,
    safe_relative,
    shell,
)

COUNT = 40
NUMBERED = f"for i in $(seq 1 {COUNT}); do echo line $i; sleep 0.05; done"


def ssh_transport(sshd, tmp_path, home=None):
    key, pub = ensure_key(tmp_path / "state")
    sshd.authorized_keys.write_text(pub + "\n")
    return SshTransport(
        ["127.0.0.1"],
        sshd.user,
        key,
        tmp_path / "known_hosts",
        sshd.port,
        homes=[str(home)] if home else None,
    )


class DroppingTransport(Transport):
    """Wraps a transport and kills the follower's connection after a few lines, twice."""

    def __init__(self, inner: Transport, drops: tuple[int, ...] = (5, 17)) -> None:
        self.inner, self.drops = inner, list(drops)
        self.current: subprocess.Popen[bytes] | None = None
        self.workers = inner.workers

    def argv(self, worker: int, command: str) -> list[str]:
        return self.inner.argv(worker, command)

    def env(self, worker: int) -> dict[str, str] | None:
        return self.inner.env(worker)

    def cwd(self, worker: int) -> str | None:
        return self.inner.cwd(worker)

    def popen(self, worker: int, command: str) -> subprocess.Popen[bytes]:
        self.current = self.inner.popen(worker, command)
        return self.current

    def on_line(self, seen: list[str]) -> None:
        if self.drops and len(seen) == self.drops[0]:
            self.drops.pop(0)
            assert self.current is not None
            self.current.kill()  # the connection drops; the job goes on


def follow_with_drops(transport, tmp_path):
    dropping = DroppingTransport(transport)
    job = Job("numbered")
    start_job(transport, 0, job, NUMBERED)
    seen = []

    def on_line(text):
        seen.append(text)
        dropping.on_line(seen)

    code = follow_job(dropping, 0, job, on_line, poll=0.2)
    return code, seen


def test_local_follower_reconnects_without_losing_or_repeating_lines(tmp_path):
    (tmp_path / "w0").mkdir()
    code, seen = follow_with_drops(LocalTransport([tmp_path / "w0"]), tmp_path)
    assert code == 0
    assert seen == [f"line {i}" for i in range(1, COUNT + 1)]


def test_ssh_follower_reconnects_without_losing_or_repeating_lines(sshd, tmp_path):
    transport = ssh_transport(sshd, tmp_path, home=tmp_path / "w0")
    (tmp_path / "w0").mkdir()
    code, seen = follow_with_drops(transport, tmp_path)
    assert code == 0
    assert seen == [f"line {i}" for i in range(1, COUNT + 1)]


def test_ssh_runs_uploads_and_fetches_with_our_own_key_and_known_hosts(sshd, tmp_path):
    home = tmp_path / "w0"
    home.mkdir()
    transport = ssh_transport(sshd, tmp_path, home=home)
    key = tmp_path / "state" / "ssh" / "id_ed25519"
    assert key.stat().st_mode & 0o777 == 0o600
    result = transport.run(0, shell("echo", "it's $HOME; rm -rf /"))
    assert result.code == 0 and result.stdout == "it's $HOME; rm -rf /\n"
    transport.upload(0, b"payload\n", "sub/dir/file.txt")
    assert (home / "sub" / "dir" / "file.txt").read_bytes() == b"payload\n"
    assert transport.fetch(0, "sub/dir/file.txt") == b"payload\n"
    host_key = (tmp_path / "sshd" / "host_ed25519.pub").read_text().split()[1]
    assert host_key in (tmp_path / "known_hosts").read_text()  # accept-new recorded it
    exit_code = transport.run(0, "exit 3").code
    assert exit_code == 3


def test_a_file_comes_back_through_openssh_streamed_and_verified(sshd, tmp_path):
    import sys

    from tpuwizard.core.remote.fetch import FetchLimits, fetch_file

    home = tmp_path / "w0"
    (home / "run").mkdir(parents=True)
    data = os.urandom(2_000_000)
    (home / "run" / "model.bin").write_bytes(data)
    transport = ssh_transport(sshd, tmp_path, home=home)
    target = tmp_path / "dest" / "model.bin"
    limits = FetchLimits(chunk=65536, max_write=10_000)  # short writes on both ends
    assert fetch_file(transport, 0, "run", sys.executable, "model.bin", target, limits) == len(data)
    assert target.read_bytes() == data


def test_reachability_waits_for_the_key_to_arrive(sshd, tmp_path):
    key, pub = ensure_key(tmp_path / "state")
    transport = SshTransport(["127.0.0.1"], sshd.user, key, tmp_path / "kh", sshd.port)
    with pytest.raises(RemoteError, match="not reachable"):
        transport.wait_until_reachable(timeout=1, interval=0.2)
    threading.Timer(1.0, lambda: sshd.authorized_keys.write_text(pub + "\n")).start()
    start = time.monotonic()
    transport.wait_until_reachable(timeout=20, interval=0.3)
    assert time.monotonic() - start >= 0.9


def test_launch_over_a_real_sshd(sshd, tmp_path):
    home = Path(os.environ["TPUWIZARD_HOME"])
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-4",
        TPUWIZARD_SANDBOX_SSH_PORT=str(sshd.port),
        TPUWIZARD_SANDBOX_AUTHORIZED_KEYS=str(sshd.authorized_keys),
    )
    assert code == 0, stderr
    assert any(e["event"] == "receipt_saved" and e["ok"] for e in events)
    assert sandbox_is_empty(home) and ledger_all_gone(home)
    assert sshd.authorized_keys.read_text() == ""  # the node's key left with the node


# -- quoting: nothing a user types can change the meaning of a remote command ------------------
words = st.text(
    alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"]), max_size=40
)


@settings(max_examples=200, deadline=None)
@given(st.lists(words, min_size=1, max_size=5))
def test_shell_words_survive_a_real_shell_unchanged(parts):
    command = shell("printf", "%s\\0", parts)
    out = subprocess.run(["bash", "-c", command], capture_output=True, check=True).stdout
    assert out.decode("utf-8", "surrogateescape").split("\0")[:-1] == parts
    assert shlex.split(command)[2:] == parts


@given(words)
def test_safe_relative_accepts_only_plain_relative_paths(path):
    try:
        cleaned = safe_relative(path)
    except BadInput:
        return
    assert not cleaned.startswith("/") and ".." not in cleaned.split("/")
    assert shlex.quote(cleaned) == cleaned  # nothing in it needs quoting at all


def test_raw_fragments_are_the_only_unquoted_text():
    assert shell("cd", "a b", Raw("&&"), "ls") == "cd 'a b' && ls"


def test_a_huge_line_comes_in_pieces_once_each_across_a_drop_and_a_last_line_is_kept(tmp_path):
    # issue 39, item 11: one 150 MB line took minutes and 755 MB; here 3 MB, cut mid-line.
    from tpuwizard.core.remote.line_pieces import MAX_LINE_BYTES

    (tmp_path / "w0").mkdir()
    transport = LocalTransport([tmp_path / "w0"])
    dropping = DroppingTransport(transport, drops=(3,))
    job = Job("huge")
    size = 3 * 1024 * 1024
    start_job(transport, 0, job, f"head -c {size} /dev/zero | tr '\\0' x; echo; printf last")
    seen: list[str] = []

    def on_line(text):
        seen.append(text)
        dropping.on_line(seen)

    assert follow_job(dropping, 0, job, on_line, poll=0.2) == 0
    *pieces, last = seen
    assert last == "last" and not dropping.drops  # the drop came mid-line
    assert "".join(pieces) == "x" * size and max(map(len, pieces)) == MAX_LINE_BYTES
