"""A changed SSH host key (issue 17, item 11): said at once, not retried for the whole
reachability timeout and blamed on OS Login; a torn-down node's host keys are forgotten."""

from __future__ import annotations

import subprocess
import time

import pytest

from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.errors import RemoteError
from tpuwizard.core.remote.transports import Result, SshTransport, Transport

CHANGED = (
    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n"
    "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n"
    "Host key verification failed."
)


class ChangedKey(Transport):
    workers = 2

    def __init__(self) -> None:
        self.calls = 0

    def argv(self, worker: int, command: str) -> list[str]:
        raise AssertionError("not used")

    def run(self, worker, command, timeout=600, stdin=None, cancellable=True) -> Result:
        self.calls += 1
        return Result(255, "", CHANGED)


def test_a_changed_host_key_is_reported_at_once_as_a_changed_key():
    transport = ChangedKey()
    started = time.monotonic()
    with pytest.raises(RemoteError) as caught:
        transport.wait_until_reachable(timeout=300, interval=0.5)
    assert time.monotonic() - started < 2 and transport.calls == 1
    d = diagnose(caught.value)
    assert "host key changed" in d.title and "OS Login" not in d.title


def test_a_verified_teardown_forgets_the_nodes_host_keys(tmp_path):
    known = tmp_path / "known_hosts"
    key = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "hostkey")],
        check=True,
    )
    pub = (tmp_path / "hostkey.pub").read_text().split()[:2]
    lines = [f"tpu.42-{w} {' '.join(pub)}" for w in range(2)] + [f"tpu.7-0 {' '.join(pub)}"]
    known.write_text("\n".join(lines) + "\n")
    transport = SshTransport(
        ["10.0.0.2", "10.0.0.3"],
        "me",
        tmp_path / "key",
        known,
        host_key_aliases=["tpu.42-0", "tpu.42-1"],
    )
    transport.forget_host_keys()
    assert key.returncode == 0
    left = [line.split()[0] for line in known.read_text().splitlines() if line.strip()]
    assert left == ["tpu.7-0"], "only that node's keys go; another node's stay"
