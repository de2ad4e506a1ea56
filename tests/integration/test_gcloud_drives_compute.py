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
from tests.rotation import rotating

ZONE = "us-east5-a"
UNREACHABLE = "asia-northeast1-b"

SCRIPT = textwrap.dedent(
    """
    set -eu
    ip link set lo up
    "$PY" -m tpuwizard sandbox serve --delay 0.2 > serve.out 2>serve.err &
    trap 'kill $! 2>/dev/null; wait' EXIT
    for i in $(seq 600); do grep -q TOKEN serve.out 2>/dev/null && break; sleep 0.1; done
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
        # A zone the aggregated list cannot reach: gcloud must read its warning as Google's.
        TPUWIZARD_SANDBOX_FAULTS=f"unreachable={UNREACHABLE}",
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
    # gcloud's own words for an aggregated list's UNREACHABLE scope (stderr): the sandbox's
    # aggregated list is in Google's shape, warnings included.
    assert f"Scope 'zones/{UNREACHABLE}' is unreachable" in done.stderr, done.stderr
    status, started, ends = sections["describe"].split()
    assert status == "RUNNING"
    # Google's deadline, read back: one hour from when it entered RUNNING.
    assert datetime.fromisoformat(ends) - datetime.fromisoformat(started) == timedelta(hours=1)
    assert sections["after"].split() == []  # gcloud's own delete, verified by its own list


# The course's Route 2B (shared/seeds, "Route 2B"), verbatim but for its machine type: v5e
# (ct5lp-hightpu-4t) is not served on Compute Engine (compute-engine.md, "Why it matters"), so
# v6e-4 (ct6e-standard-4t), with --maintenance-policy=TERMINATE added (what Google does for a TPU
# VM without it is on no page the reference has: the sandbox refuses it, as MIGRATE). Then the
# MIG's resize request as the course asks for it, gcloud's reads, and its deletes.
ROUTE_2B = textwrap.dedent(
    """
    T=tpu-course-flex-tmpl; M=tpu-course-mig; Z={zone}
    flex="--provisioning-model=FLEX_START --max-run-duration=4h \\
        --instance-termination-action=DELETE --reservation-affinity=none"
    echo "== v5e"
    gcloud beta compute instance-templates create $T --machine-type=ct5lp-hightpu-4t $flex \\
        2>&1 || echo "exit $?"
    echo "== template"
    gcloud beta compute instance-templates create $T --machine-type=ct6e-standard-4t $flex \\
        --maintenance-policy=TERMINATE --format 'value(name)'
    echo "== mig"
    gcloud beta compute instance-groups managed create $M --zone="$Z" --template=$T --size=0 \\
        --format 'value(name,targetSize)'
    echo "== request"
    gcloud beta compute instance-groups managed resize-requests create $M \\
        --zone="$Z" --resize-request=req-tpu-1 --resize-by=1 --format 'value(name)'
    echo "== describe"
    for i in $(seq 20); do
        state=$(gcloud beta compute instance-groups managed resize-requests describe $M \\
            --zone="$Z" --resize-request=req-tpu-1 --format 'value(state)')
        [ "$state" = SUCCEEDED ] && break
    done
    echo "$state"
    echo "== list"
    gcloud beta compute instance-groups managed resize-requests list $M --zone="$Z" \\
        --format 'value(name,state)'
    echo "== instances"
    gcloud compute instance-groups managed list-instances $M --zone="$Z" \\
        --format 'value(instanceStatus)'
    echo "== deletes"
    gcloud compute instance-groups managed delete $M --zone="$Z" --quiet
    gcloud compute instance-templates delete $T --quiet
    echo "== after"
    gcloud compute instance-templates list --format 'value(name)'
    echo "== end"
    """
).replace("{zone}", ZONE)

# A multi-host slice's parts by hand, as tpuwizard makes them (compute-engine.md, "Multi-host
# slices"): a workload policy, a regional Flex-start template ("Bulk mode in MIGs is only
# supported with instance templates that specify either a reservation-bound or flex-start
# provisioning model", bulk-create-instances-in-mig), a BULK MIG of size 0 bound to the policy,
# its resize, reads, and the deletes.
SLICE = textwrap.dedent(
    """
    R=us-east5; Z={zone}; P=projects/tpuwizard-practice/regions/us-east5
    echo "== policy"
    gcloud beta compute resource-policies create workload-policy wp --type=HIGH_THROUGHPUT \\
        --accelerator-topology=4x4 --region=$R --format 'value(name)'
    echo "== template"
    gcloud beta compute instance-templates create st --instance-template-region=$R \\
        --machine-type=ct6e-standard-4t --maintenance-policy=TERMINATE \\
        --provisioning-model=FLEX_START --max-run-duration=1h \\
        --instance-termination-action=DELETE --reservation-affinity=none \\
        --image-family=ubuntu-accel-2204-amd64-tpu-v5e-v5p-v6e \\
        --image-project=ubuntu-os-accelerator-images --format 'value(name)'
    echo "== mig"
    gcloud alpha compute instance-groups managed create sm --zone="$Z" --size=0 \\
        --template=$P/instanceTemplates/st --target-size-policy-mode=bulk \\
        --workload-policy=$P/resourcePolicies/wp --default-action-on-vm-failure=do-nothing \\
        --format 'value(name)'
    echo "== resize"
    gcloud compute instance-groups managed resize sm --size=4 --zone="$Z" \\
        --format 'value(targetSize)'
    echo "== describe"
    for i in $(seq 20); do
        seen=$(gcloud alpha compute instance-groups managed describe sm --zone="$Z" \\
            --format 'value(status.appliedAcceleratorTopologies[0].state,targetSizePolicy.mode)')
        case "$seen" in ACTIVE*) break;; esac
    done
    echo "$seen"
    echo "== instances"
    gcloud compute instance-groups managed list-instances sm --zone="$Z" \\
        --format 'value(instanceStatus)'
    echo "== groups"
    gcloud compute instance-groups managed list --format 'value(name,size)'
    echo "== deletes"
    gcloud compute instance-groups managed delete sm --zone="$Z" --quiet
    gcloud compute instance-templates delete st --region=$R --quiet
    gcloud compute resource-policies delete wp --region=$R --quiet
    echo "== after"
    gcloud compute resource-policies list --format 'value(name)'
    gcloud compute instance-templates list --format 'value(name)'
    echo "== end"
    """
).replace("{zone}", ZONE)

# One command naming several resources: gcloud sends it to /batch/compute/v1.
MULTI_DELETE = textwrap.dedent(
    """
    echo "== templates"
    for name in a-tmpl b-tmpl; do
        gcloud compute instance-templates create $name --machine-type=ct6e-standard-4t \\
            --maintenance-policy=TERMINATE --format 'value(name)'
    done
    echo "== deletes"
    gcloud compute instance-templates delete a-tmpl b-tmpl --quiet
    echo "== after"
    gcloud compute instance-templates list --format 'value(name)'
    echo "== operations"
    gcloud compute operations list --format 'value(operationType)'
    echo "== end"
    """
)


def check_route_2b(sections: dict[str, str]) -> None:
    # Compute Engine's own words for v5e (compute-engine.md:14-16), and nothing made.
    assert (
        "This user agent is not allowed to use the machine type [ct5lp-hightpu-4t]"
        in (sections["v5e"])
    )
    assert sections["template"].split() == ["tpu-course-flex-tmpl"]
    assert sections["mig"].split() == ["tpu-course-mig", "0"]
    assert sections["request"].split() == ["req-tpu-1"]
    assert sections["describe"].split() == ["SUCCEEDED"]
    assert sections["list"].split() == ["req-tpu-1", "SUCCEEDED"]
    assert sections["instances"].split() == ["RUNNING"]
    assert sections["after"].split() == []  # every delete, verified by gcloud's own lists


def check_slice(sections: dict[str, str]) -> None:
    assert sections["policy"].split() == ["wp"] and sections["template"].split() == ["st"]
    assert sections["mig"].split() == ["sm"] and sections["resize"].split() == ["4"]
    assert sections["describe"].split() == ["ACTIVE", "BULK"]
    assert sections["instances"].split() == ["RUNNING"] * 4
    assert sections["groups"].split() == ["sm", "4"]
    assert sections["after"].split() == []


def check_multi_delete(sections: dict[str, str]) -> None:
    assert sections["templates"].split() == ["a-tmpl", "b-tmpl"]
    assert sections["after"].split() == []  # both gone, from one command
    assert sorted(sections["operations"].split()) == ["delete"] * 2 + ["insert"] * 2


# Route 2B in every run; the slice's parts and the multi-name delete take turns (gcloud starts
# slowly: each command is seconds).
DRILLS = {
    "route 2B": (ROUTE_2B, check_route_2b),
    "slice": (SLICE, check_slice),
    "multi-name delete": (MULTI_DELETE, check_multi_delete),
}


@pytest.mark.parametrize("drill", rotating(list(DRILLS), per_run=1, always=("route 2B",)))
def test_gcloud_runs_the_course_route_2b_and_a_slice_s_parts_in_the_sandbox(tmp_path, drill):
    from tests.integration.test_gcloud_drives_the_sandbox import SERVE, drive

    script, check = DRILLS[drill]
    check(drive(tmp_path, SERVE + script))
