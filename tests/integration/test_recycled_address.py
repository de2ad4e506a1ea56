"""google-behaviour.md:57-59: Google recycles external addresses, so a re-created worker can
answer on an address a previous worker used, with a new host key. Two real sshds, one after the
other on the same address and port, stand for the old VM and the new one."""

import pytest

from tests.integration.sshd import sshd_binary, start_sshd
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.errors import RemoteError
from tpuwizard.core.remote.ssh_keys import ensure_key, host_key_aliases
from tpuwizard.core.remote.transports import SshTransport

pytestmark = pytest.mark.skipif(sshd_binary() is None, reason="openssh-server is not installed")


def vm_on_the_same_address(tmp_path, name, port=None):
    server = start_sshd(tmp_path / name, port)
    _, pub = ensure_key(tmp_path / "state")
    server.authorized_keys.write_text(pub + "\n")
    return server


def stop(server):
    server.process.terminate()
    server.process.wait(timeout=60)


def transport(tmp_path, server, aliases):
    key, _ = ensure_key(tmp_path / "state")
    known = tmp_path / "known_hosts"
    return SshTransport(["127.0.0.1"], server.user, key, known, server.port, None, aliases)


@pytest.mark.parametrize("keyed_by", ["node id", "address"])
def test_a_new_vm_on_a_recycled_address(tmp_path, keyed_by):
    old = vm_on_the_same_address(tmp_path, "old-vm")
    first = host_key_aliases("7000000000000000001", 1) if keyed_by == "node id" else None
    try:
        assert transport(tmp_path, old, first).run(0, "true").code == 0
    finally:
        stop(old)
    new = vm_on_the_same_address(tmp_path, "new-vm", old.port)  # same address, new host key
    second = host_key_aliases("7000000000000000002", 1) if keyed_by == "node id" else None
    try:
        result = transport(tmp_path, new, second).run(0, "true")
    finally:
        stop(new)
    if keyed_by == "node id":  # as gcloud does: HostKeyAlias=tpu.<node id>-<worker>
        assert result.code == 0, result.stderr
    else:  # keyed by address alone, OpenSSH refuses; tpuwizard explains why
        assert result.code != 0 and "REMOTE HOST IDENTIFICATION HAS CHANGED" in result.stderr
        assert diagnose(RemoteError(result.stderr)).kind == "host_key_changed"
