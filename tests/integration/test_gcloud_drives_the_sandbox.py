"""Google's own client, gcloud, against the sandbox: what it creates, reads and deletes works
as it does at Google, and tpuwizard leaves what gcloud made alone.

Everything runs inside `unshare -rn` with only loopback up, with a fake token and gcloud's
update checks and usage reporting off, so nothing can leave this machine.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest

from tests.conftest import clean_env
from tests.integration import loopback_bridge

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("real-tools-e2e")

ZONE = "us-central1-a"

# The sandbox serves in the namespace; gcloud gets its token, and both its TPU and its Compute
# Engine endpoint (an override with a path is kept as it is).
SERVE = textwrap.dedent(
    """
    set -eu
    ip link set lo up
    "$PY" -m tpuwizard sandbox serve --delay 0.2 > serve.out 2>serve.err &
    trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT
    for i in $(seq 600); do grep -q TOKEN serve.out 2>/dev/null && break; sleep 0.1; done
    export $(grep -E '^TPUWIZARD_(TPU_ENDPOINT|SANDBOX_TOKEN)=' serve.out | xargs)
    printf %s "$TPUWIZARD_SANDBOX_TOKEN" > token
    export CLOUDSDK_AUTH_ACCESS_TOKEN_FILE="$PWD/token"
    export CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU="$TPUWIZARD_TPU_ENDPOINT/"
    export CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE="$TPUWIZARD_TPU_ENDPOINT/compute/v1/"
    g() { gcloud "$@" --zone {zone} --quiet; }
    """
).replace("{zone}", ZONE)

SCRIPT = SERVE + textwrap.dedent(
    """
    echo "== create"; g compute tpus tpu-vm create by-hand --accelerator-type v5litepod-1 \\
        --version v2-alpha-tpuv5-lite
    echo "== describe"; g compute tpus tpu-vm describe by-hand --format 'value(state)'
    echo "== queued"; g compute tpus queued-resources create by-hand-qr \\
        --accelerator-type v5litepod-1 --runtime-version v2-alpha-tpuv5-lite \\
        --node-id by-hand-spot --spot
    g compute tpus queued-resources describe by-hand-qr --format 'value(state.state)'
    echo "== tpuwizard teardown"
    "$PY" -m tpuwizard teardown by-hand --sandbox --yes || echo "exit $?"
    echo "== after"; g compute tpus tpu-vm describe by-hand --format 'value(state)'
    g compute tpus queued-resources delete by-hand-qr --force
    g compute tpus tpu-vm delete by-hand
    echo "== list"; g compute tpus tpu-vm list --format 'value(name)'
    echo "== end"
    """
).replace("{zone}", ZONE)


def drive(tmp_path, script: str, **extra_env: str) -> dict[str, str]:
    """Run ``script`` inside ``unshare -rn``; what each ``== NAME`` section printed, by name."""
    if shutil.which("gcloud") is None or shutil.which("unshare") is None:
        pytest.skip("gcloud or unshare is not installed")
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn is not permitted here")
    env = clean_env(
        PY=sys.executable,
        HOME=str(tmp_path / "home"),  # gcloud's ssh key and known hosts, not the user's
        TPUWIZARD_HOME=str(tmp_path / "state"),
        CLOUDSDK_CONFIG=str(tmp_path / "gcloud"),
        CLOUDSDK_CORE_PROJECT="tpuwizard-practice",
        CLOUDSDK_CORE_DISABLE_USAGE_REPORTING="true",
        CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK="true",
        CLOUDSDK_CORE_DISABLE_PROMPTS="1",
        **extra_env,
    )
    for key in ("TPUWIZARD_TPU_ENDPOINT", "TPUWIZARD_SANDBOX_TOKEN"):
        env.pop(key, None)
    (tmp_path / "drive.sh").write_text(script)
    done = subprocess.run(
        ["unshare", "-rn", "bash", "drive.sh"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout
    assert done.returncode == 0 and "== end" in out, done.stdout + done.stderr
    return dict(part.split("\n", 1) for part in out.split("== ")[1:])


def test_gcloud_creates_reads_and_deletes_in_the_sandbox_and_tpuwizard_leaves_its_node(tmp_path):
    sections = drive(tmp_path, SCRIPT)
    assert sections["describe"].split() == ["READY"]  # gcloud waited on the operation itself
    assert sections["queued"].split()[-1] == "ACTIVE"
    refused = sections["tpuwizard teardown"]
    assert "exit 2" in refused  # not made by tpuwizard: nothing is deleted
    assert sections["after"].split() == ["READY"]  # still there, still gcloud's
    assert sections["list"].split() == []  # gcloud's own deletes, verified by its own list
    ledger = tmp_path / "state" / "sandbox" / "ledger.jsonl"
    assert not ledger.exists() or "by-hand" not in ledger.read_text()  # never recorded as ours


# What gcloud 528 asks beyond the test above, each once: the single-item reads, the v1 lists,
# a create by chip topology, guest attributes, and ssh (its project read from Compute Engine,
# its key added with nodes.patch, then OpenSSH itself, reaching the test's sshd through a bridge).
MORE = SERVE + textwrap.dedent(
    """
    "$PY" "$BRIDGE" tcp:127.0.0.1:22 "unix:$SSHD_SOCKET" &
    echo "== type"; g compute tpus tpu-vm accelerator-types describe v5litepod-4 \\
        --format 'value(type)'
    echo "== version"; g compute tpus tpu-vm versions describe v2-alpha-tpuv5-lite \\
        --format 'value(version)'
    echo "== v1 locations"; gcloud compute tpus locations list --quiet --format 'value(locationId)'
    echo "== v1 types"; g compute tpus accelerator-types list --format 'value(type)'
    echo "== topology"; g alpha compute tpus tpu-vm create by-shape --type v5litepod \\
        --topology 2x2 --version v2-alpha-tpuv5-lite
    g compute tpus tpu-vm describe by-shape --format 'value(acceleratorType,state)'
    echo "== guest attributes"
    g compute tpus tpu-vm get-guest-attributes by-shape --format 'value(namespace,key,worker_id)'
    echo "== ssh"; g compute tpus tpu-vm ssh "$SSH_USER@by-shape" --command 'echo hi-from-worker'
    echo "== metadata"; g compute tpus tpu-vm describe by-shape --format 'value(metadata)'
    g compute tpus tpu-vm delete by-shape
    echo "== end"
    """
).replace("{zone}", ZONE)


def test_gcloud_reads_creates_by_topology_and_sshes_as_at_google(tmp_path, sshd):
    folder = Path(tempfile.mkdtemp(prefix="tpuwizard-gcloud-"))  # a Unix socket's path is short
    socket_path = folder / "sshd.sock"
    outside = loopback_bridge.listener(f"unix:{socket_path}")
    bridge = threading.Thread(
        target=loopback_bridge.serve, args=(outside, f"tcp:127.0.0.1:{sshd.port}"), daemon=True
    )
    bridge.start()
    try:
        sections = drive(
            tmp_path,
            MORE,
            BRIDGE=loopback_bridge.__file__,
            SSHD_SOCKET=str(socket_path),
            SSH_USER=sshd.user,
            TPUWIZARD_SANDBOX_AUTHORIZED_KEYS=str(sshd.authorized_keys),
        )
    finally:
        outside.close()
        shutil.rmtree(folder, ignore_errors=True)
    assert sections["type"].split() == ["v5litepod-4"]
    assert sections["version"].split() == ["v2-alpha-tpuv5-lite"]
    assert "us-central1-a" in sections["v1 locations"].split()
    assert "v5litepod-4" in sections["v1 types"].split()
    assert sections["topology"].split()[-2:] == ["v5litepod-4", "READY"]  # 2x2 chips of v5e
    # The VM's sshd host keys, as its guest agent publishes them for gcloud's HostKeyAlias.
    assert ["hostkeys", "ssh-ed25519", "0"] in [
        line.split() for line in sections["guest attributes"].splitlines()
    ]
    # OpenSSH ran on the VM, let in by the key gcloud put in the node's ssh-keys metadata...
    assert "hi-from-worker" in sections["ssh"]
    key = (tmp_path / "home" / ".ssh" / "google_compute_engine.pub").read_text().split()[1]
    assert key in sections["metadata"]
    assert key not in sshd.authorized_keys.read_text()  # ...and it went with the node
