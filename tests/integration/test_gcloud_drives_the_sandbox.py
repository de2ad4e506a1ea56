"""Google's own client, gcloud, against the sandbox: what it creates, reads and deletes works
as it does at Google, and tpuwizard leaves what gcloud made alone.

Everything runs inside `unshare -rn` with only loopback up, with a fake token and gcloud's
update checks and usage reporting off, so nothing can leave this machine.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import clean_env

ZONE = "us-central1-a"

SCRIPT = textwrap.dedent(
    """
    set -eu
    ip link set lo up
    "$PY" -m tpuwizard sandbox serve --delay 0.2 > serve.out 2>serve.err &
    trap 'kill $! 2>/dev/null; wait' EXIT
    for i in $(seq 100); do grep -q TOKEN serve.out 2>/dev/null && break; sleep 0.1; done
    export $(grep -E '^TPUWIZARD_(TPU_ENDPOINT|SANDBOX_TOKEN)=' serve.out | xargs)
    printf %s "$TPUWIZARD_SANDBOX_TOKEN" > token
    export CLOUDSDK_AUTH_ACCESS_TOKEN_FILE="$PWD/token"
    export CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU="$TPUWIZARD_TPU_ENDPOINT/"
    g() { gcloud "$@" --zone {zone} --quiet; }
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


def test_gcloud_creates_reads_and_deletes_in_the_sandbox_and_tpuwizard_leaves_its_node(tmp_path):
    if shutil.which("gcloud") is None or shutil.which("unshare") is None:
        pytest.skip("gcloud or unshare is not installed")
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn is not permitted here")
    env = clean_env(
        PY=sys.executable,
        TPUWIZARD_HOME=str(tmp_path / "state"),
        CLOUDSDK_CONFIG=str(tmp_path / "gcloud"),
        CLOUDSDK_CORE_PROJECT="tpuwizard-practice",
        CLOUDSDK_CORE_DISABLE_USAGE_REPORTING="true",
        CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK="true",
        CLOUDSDK_CORE_DISABLE_PROMPTS="1",
    )
    for key in ("TPUWIZARD_TPU_ENDPOINT", "TPUWIZARD_SANDBOX_TOKEN"):
        env.pop(key, None)
    (tmp_path / "drive.sh").write_text(SCRIPT)
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
    sections = dict(part.split("\n", 1) for part in out.split("== ")[1:])
    assert sections["describe"].split() == ["READY"]  # gcloud waited on the operation itself
    assert sections["queued"].split()[-1] == "ACTIVE"
    refused = sections["tpuwizard teardown"]
    assert "exit 2" in refused  # not made by tpuwizard: nothing is deleted
    assert sections["after"].split() == ["READY"]  # still there, still gcloud's
    assert sections["list"].split() == []  # gcloud's own deletes, verified by its own list
    ledger = tmp_path / "state" / "sandbox" / "ledger.jsonl"
    assert not ledger.exists() or "by-hand" not in ledger.read_text()  # never recorded as ours
