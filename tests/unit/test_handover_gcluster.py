"""``tpuwizard export --to gcluster``: the ``gcluster job submit`` flags per slice, each one that
Cluster Toolkit v1.95.0 defines, and the JobSet beside it against the JobSet CRD's schema."""

from __future__ import annotations

import shlex

import jsonschema
import pytest
import yaml

from tests.unit.test_handover import CRD
from tpuwizard.core.errors import BadInput
from tpuwizard.core.handover import gcluster
from tpuwizard.core.handover.plan import make_plan

# Every flag gcluster job submit takes that tpuwizard may write: cmd/job/submit.go's init() and
# cmd/job/job.go's persistent flags, GoogleCloudPlatform/cluster-toolkit v1.95.0 (commit
# 1047080375afbb44da4b596be314634e7486af4a), copied from the source by hand.
SUBMIT_FLAGS = {
    "--image", "--base-image", "--build-context", "--command", "--compute-type",
    "--dry-run-out", "--platform", "--mount", "--name", "--queue", "--num-nodes",
    "--num-slices", "--restarts", "--gke-ttl-after-finished", "--grace-period",
    "--gke-disable-parallel-containers", "--placement-policy", "--node-constraint",
    "--cpu-affinity", "--restart-on-exit-codes", "--image-pull-secret", "--service-account",
    "--topology", "--gke-scheduler", "--await-job-completion", "--timeout", "--priority",
    "--verbose", "--gke-nap-provisioning", "--gke-nap-reservation", "--pathways",
    "--cluster", "--location", "--project",
}  # fmt: skip
BOOLEAN_FLAGS = {"--gke-disable-parallel-containers", "--await-job-completion", "--verbose"}
POLICY = "cloud.google.com/placement-policy-name"


@pytest.fixture(scope="module")
def jobset_schema() -> jsonschema.Draft7Validator:
    """The JobSet v0.10.1 CRD's v1alpha2 schema, as test_handover.py checks --to jobset's."""
    crd = yaml.safe_load(CRD.read_text("utf-8"))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    return jsonschema.Draft7Validator(version["schema"]["openAPIV3Schema"])


def _flags(words: list[str]) -> dict[str, str | bool]:
    """The words after ``gcluster job submit`` as cobra reads them: flag -> value."""
    assert words[:3] == ["gcluster", "job", "submit"]
    found: dict[str, str | bool] = {}
    rest = iter(words[3:])
    for word in rest:
        assert word in SUBMIT_FLAGS, f"{word} is not a flag Cluster Toolkit defines"
        found[word] = True if word in BOOLEAN_FLAGS else next(rest)
    return found


@pytest.mark.parametrize(
    "accelerator, route, machine, topology, slices, parallel_off, constraint",
    [
        ("v5litepod-16", "vm", "ct5lp-hightpu-4t", "4x4", 1, False, None),
        ("v5p-16", "spot", "ct5p-hightpu-4t", "2x2x2", 2, False, "cloud.google.com/gke-spot=true"),
        ("v6e-16", "flex", "ct6e-standard-4t", "4x4", 1, False, "cloud.google.com/gke-queued=true"),
        ("v6e-8", "vm", "ct6e-standard-4t", "2x4", 1, False, None),
        ("tpu7x-64", "vm", "tpu7x-standard-4t", "2x4x4", 1, True,
         f"{POLICY}=tpu7x-64-2x4x4-placement-policy"),
    ],
)  # fmt: skip
def test_the_submit_flags_per_slice(
    accelerator, route, machine, topology, slices, parallel_off, constraint
) -> None:
    plan = make_plan(accelerator, route=route, slices=slices, max_restarts=3, script="t.py")
    words = gcluster.submit_words(plan, dry_run=False)
    flags = _flags(words)
    assert shlex.split(gcluster.submit(plan, dry_run=False)) == words  # quoted, splits back
    assert flags["--compute-type"] == machine and machine in gcluster.GCLUSTER_MACHINE_TYPES
    assert flags["--topology"] == topology and flags["--num-slices"] == str(slices)
    assert flags["--restarts"] == "3" and flags["--gke-ttl-after-finished"] == "24h"
    assert flags["--base-image"] == "python:3.12" and flags["--build-context"] == "."
    assert flags["--command"] == "cd / && bash tpuwizard_job.sh"
    assert ("--gke-disable-parallel-containers" in flags) is parallel_off
    assert flags.get("--node-constraint") == constraint
    assert "--dry-run-out" not in flags and "--queue" not in flags and "--project" not in flags
    dry = _flags(gcluster.submit_words(plan, dry_run=True))
    assert dry["--dry-run-out"] == "tpuwizard-run-gcluster-dry-run.yaml"
    # gcluster's node count: the topology's chips over the machine type's (-4t), as the JobSet's.
    chips = 1
    for side in topology.split("x"):
        chips *= int(side)
    assert chips // int(machine.rsplit("-", 1)[1][:-1]) == plan.gke.vms


def test_admission_values_go_to_their_own_flags() -> None:
    plan = make_plan(
        "v5p-16", queue="team-a", priority="high", reservation="my-res", project="my-proj-1"
    )
    flags = _flags(gcluster.submit_words(plan, dry_run=False))
    assert (flags["--queue"], flags["--priority"], flags["--project"]) == (
        "team-a",
        "high",
        "my-proj-1",
    )
    assert flags["--node-constraint"] == (
        "cloud.google.com/reservation-name=my-res,cloud.google.com/reservation-affinity=specific"
    )


@pytest.mark.parametrize(
    "accelerator, route, queue", [("v5p-16", "spot", None), ("tpu7x-64", "vm", "team-a")]
)
def test_the_jobset_beside_is_valid_by_the_crd_and_matches_the_command(
    accelerator: str, route: str, queue: str | None, jobset_schema: jsonschema.Draft7Validator
) -> None:
    plan = make_plan(accelerator, route=route, slices=2, max_restarts=2, queue=queue, script="t.py")
    loaded = yaml.safe_load(gcluster.render_manifest(plan))
    assert loaded == gcluster.manifest(plan)  # the YAML writer kept every value
    jobset_schema.validate(loaded)
    flags = _flags(gcluster.submit_words(plan, dry_run=False))
    (job,) = loaded["spec"]["replicatedJobs"]
    assert str(job["replicas"]) == flags["--num-slices"]
    assert str(loaded["spec"]["failurePolicy"]["maxRestarts"]) == flags["--restarts"]
    assert loaded["spec"]["ttlSecondsAfterFinished"] == 24 * 3600
    assert job["template"]["spec"]["parallelism"] == plan.gke.vms
    pod = job["template"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["/bin/bash", "-c", flags["--command"]]
    assert container["resources"]["limits"]["google.com/tpu"] == 4
    assert pod["nodeSelector"]["cloud.google.com/gke-tpu-topology"] == flags["--topology"]
    for pair in str(flags.get("--node-constraint", "")).split(",") if route != "vm" else []:
        key, value = pair.split("=")
        assert pod["nodeSelector"][key] == value
    label = loaded["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    assert label == (queue or "multislice-queue")  # gcluster's own where none is given
    wrong = gcluster.manifest(plan)
    wrong["spec"]["replicatedJobs"][0]["replicas"] = "two"  # type: ignore[index,call-overload]
    with pytest.raises(jsonschema.ValidationError):
        jobset_schema.validate(wrong)


def test_a_name_longer_than_gcluster_takes_is_refused_saying_what_to_give() -> None:
    plan = make_plan("v6e-16", workload="a-workload-name-of-29-letters")
    with pytest.raises(BadInput, match="at most 28"):
        gcluster.render(plan)
    gcluster.render(make_plan("v6e-16", workload="a-workload-name-of-28-letter"))


def test_a_folder_with_spaces_reaches_the_command_whole() -> None:
    import dataclasses

    plan = dataclasses.replace(make_plan("v6e-16"), folder="my export")
    flags = _flags(shlex.split(gcluster.submit(plan, dry_run=True)))
    assert flags["--command"] == "cd / && bash 'my export/tpuwizard_job.sh'"
    assert flags["--dry-run-out"] == "my export/tpuwizard-run-gcluster-dry-run.yaml"
