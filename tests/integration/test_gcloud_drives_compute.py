"""Google's own client, gcloud, against the sandbox's Compute Engine paths: `gcloud alpha compute
instances create` with Flex-start and a max run duration, `list`, `describe` and `delete` work as
they do at Google.

As in test_gcloud_drives_the_sandbox, everything runs inside `unshare -rn` with only loopback up,
with a fake token and gcloud's update checks and usage reporting off, so nothing can leave this
machine. `api_endpoint_overrides/compute` carries a path (`.../compute/v1/`): gcloud keeps it as
it is, so the alpha command lands on the v1 paths the sandbox serves (compute-engine.md:86-93).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta

import pytest

from tests.conftest import clean_env

ZONE = "us-east5-a"

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
    export CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE="$TPUWIZARD_TPU_ENDPOINT/compute/v1/"
    echo "== create"
    gcloud alpha compute instances create by-hand --zone {zone} --quiet \\
        --machine-type ct6e-standard-1t \\
        --image-family ubuntu-accel-2204-amd64-tpu-v5e-v5p-v6e \\
        --image-project ubuntu-os-accelerator-images \\
        --on-host-maintenance TERMINATE --reservation-affinity none \\
        --provisioning-model=FLEX_START --max-run-duration=1h \\
        --instance-termination-action=DELETE --format 'value(name,status)'
    echo "== list"; gcloud compute instances list --format 'value(name,zone.basename(),status)'
    echo "== describe"
    gcloud compute instances describe by-hand --zone {zone} \\
        --format 'value(status,lastStartTimestamp,resourceStatus.scheduling.terminationTimestamp)'
    echo "== delete"; gcloud compute instances delete by-hand --zone {zone} --quiet
    echo "== after"; gcloud compute instances list --format 'value(name)'
    echo "== end"
    """
).replace("{zone}", ZONE)


def test_gcloud_creates_a_flex_start_vm_lists_describes_and_deletes_it_in_the_sandbox(tmp_path):
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
    assert sections["create"].split() == ["by-hand", "RUNNING"]  # gcloud waited on the operation
    assert sections["list"].split() == ["by-hand", ZONE, "RUNNING"]
    status, started, ends = sections["describe"].split()
    assert status == "RUNNING"
    # Google's deadline, read back: one hour from when it entered RUNNING.
    assert datetime.fromisoformat(ends) - datetime.fromisoformat(started) == timedelta(hours=1)
    assert sections["after"].split() == []  # gcloud's own delete, verified by its own list
