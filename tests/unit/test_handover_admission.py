"""A hand-over GKE admits (issue 47, item 4): ``export --queue/--priority/--reservation`` reach the
JobSet where Kueue and GKE read them, xpk where it has a flag, and are refused (exit 2, naming the
format) where the format has no place; every Pod carries the autoscaler's safe-to-evict
annotation; a TPU7x multi-host slice selects the workload policy its node pool is made with.
Every JobSet is checked against the JobSet v0.10.1 CRD's schema; nothing here was applied to a
cluster."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from tests.unit.test_handover import CRD
from tpuwizard.cli import main
from tpuwizard.core.errors import BadInput
from tpuwizard.core.handover import jobset, skypilot, workload_policy, xpk
from tpuwizard.core.handover.export import render
from tpuwizard.core.handover.plan import make_plan

ADMITTED: dict[str, Any] = dict(queue="team-a", priority="high", reservation="my-reservation")


@pytest.fixture(scope="module")
def jobset_schema() -> jsonschema.Draft7Validator:
    crd = yaml.load(CRD.read_text("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    return jsonschema.Draft7Validator(version["schema"]["openAPIV3Schema"])


def _pod(document: dict[str, Any]) -> dict[str, Any]:
    template = document["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    return template  # type: ignore[no-any-return]


def _words(line: str) -> list[str]:
    return shlex.split(line)


def _after(words: list[str], flag: str) -> str:
    return words[words.index(flag) + 1]


def test_the_jobset_carries_the_queue_the_priority_class_and_the_reservation(
    jobset_schema: jsonschema.Draft7Validator,
) -> None:
    plan = make_plan("v5p-16", **ADMITTED)
    document = yaml.safe_load(jobset.render(plan))
    jobset_schema.validate(document)
    assert document == jobset.manifest(plan)
    # Kueue's JobSet page: the queue in metadata.labels, the priority as priorityClassName.
    assert document["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "team-a"}
    template = _pod(document)
    assert template["spec"]["priorityClassName"] == "high"
    selector = template["spec"]["nodeSelector"]
    assert selector["cloud.google.com/reservation-name"] == "my-reservation"
    assert selector["cloud.google.com/reservation-affinity"] == "specific"
    assert selector["cloud.google.com/gke-tpu-accelerator"] == "tpu-v5p-slice"


def test_without_them_the_jobset_has_no_label_class_or_reservation_and_says_what_that_means(
    jobset_schema: jsonschema.Draft7Validator,
) -> None:
    plan = make_plan("v5p-16")
    text = jobset.render(plan)
    document = yaml.safe_load(text)
    jobset_schema.validate(document)
    assert "labels" not in document["metadata"]
    spec = _pod(document)["spec"]
    assert "priorityClassName" not in spec
    assert not [k for k in spec["nodeSelector"] if k.startswith("cloud.google.com/reservation")]
    assert "# No --queue: the JobSet has no kueue.x-k8s.io/queue-name label." in text
    assert "manageJobsWithoutQueueName: true" in text
    assert "# No --priority:" in text


@pytest.mark.parametrize("accelerator, route", [("v5litepod-16", "spot"), ("v6e-16", "flex"),
                                                ("tpu7x-16", "vm"), ("v5p-8", "vm")])  # fmt: skip
def test_every_pod_carries_safe_to_evict_false_and_the_header_the_install_order(
    accelerator: str, route: str, jobset_schema: jsonschema.Draft7Validator
) -> None:
    plan = make_plan(accelerator, route=route)
    text = jobset.render(plan)
    document = yaml.safe_load(text)
    jobset_schema.validate(document)
    annotations = _pod(document)["metadata"]["annotations"]
    assert annotations == {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
    assert isinstance(annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"], str)
    header = [line for line in text.splitlines() if line.startswith("#")]
    (order,) = [line for line in header if "install JobSet (its CRDs) BEFORE Kueue" in line]
    assert "integrations.frameworks" in order


@pytest.mark.parametrize("accelerator, slices", [("tpu7x-16", 1), ("tpu7x-32", 2)])
def test_a_tpu7x_multi_host_slice_selects_the_policy_its_node_pools_are_made_with(
    accelerator: str, slices: int, jobset_schema: jsonschema.Draft7Validator
) -> None:
    plan = make_plan(accelerator, slices=slices, project="my-project-1", route="spot")
    text = jobset.render(plan)
    document = yaml.safe_load(text)
    jobset_schema.validate(document)
    selector = _pod(document)["spec"]["nodeSelector"]
    policy = selector["cloud.google.com/placement-policy-name"]
    assert policy == f"{accelerator}-{plan.gke.topology}-placement-policy"  # xpk's name
    assert selector["cloud.google.com/gke-tpu-accelerator"] == "tpu7x"
    assert selector["cloud.google.com/gke-tpu-topology"] == plan.gke.topology
    commands = [line[3:] for line in text.splitlines() if line.startswith("#   gcloud ")]
    creates = [_words(c) for c in commands if " create " in c]
    (made,) = [w for w in creates if w[:5] == ["gcloud", "compute", "resource-policies",
                                                 "create", "workload-policy"]]  # fmt: skip
    assert made[5] == policy and _after(made, "--type") == "HIGH_THROUGHPUT"
    assert _after(made, "--accelerator-topology") == plan.gke.topology
    assert _after(made, "--region") == "us-central1" and _after(made, "--project") == "my-project-1"
    pools = [w for w in creates if w[:4] == ["gcloud", "container", "node-pools", "create"]]
    assert len(pools) == slices  # one node pool per slice: the JobSet puts a slice on a pool
    for pool in pools:
        assert _after(pool, "--placement-policy") == policy
        assert "--tpu-topology" not in pool  # the policy replaces it (GKE's Ironwood page)
        assert _after(pool, "--machine-type") == "tpu7x-standard-4t"
        assert _after(pool, "--num-nodes") == str(plan.gke.vms) and "--spot" in pool
    # The teardown deletes the pools, then the policy.
    deletes = [line for line in text.splitlines() if " delete " in line and "gcloud" in line]
    assert [d.split()[3] for d in deletes] == ["node-pools"] * slices + ["resource-policies"]


@pytest.mark.parametrize("accelerator", ["tpu7x-8", "v5p-16", "v6e-16"])
def test_other_slices_select_no_policy_and_make_no_node_pool(accelerator: str) -> None:
    plan = make_plan(accelerator)
    assert not workload_policy.needed(plan)
    text = jobset.render(plan)
    assert "placement-policy" not in text and "node-pools create" not in text


def test_xpk_takes_a_priority_of_its_own_and_a_reservation_as_the_clusters_capacity() -> None:
    plan = make_plan("v6e-16", priority="very-high", reservation="my-res")
    create = _words(xpk.cluster_create(plan))
    assert _after(create, "--reservation") == "my-res" and "--on-demand" not in create
    assert _after(_words(xpk.cluster_adapt(plan)), "--reservation") == "my-res"
    for dry in (True, False):
        assert _after(_words(xpk.workload_create(plan, dry_run=dry)), "--priority") == "very-high"
    plain = make_plan("v6e-16")
    assert "--priority" not in xpk.workload_create(plain, dry_run=False)  # xpk's own default
    assert "--on-demand" in _words(xpk.cluster_create(plain))


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(queue="team-a"), "--queue has no place in --to xpk"),
        (dict(priority="urgent"), "--priority urgent has no place in --to xpk"),
    ],
)
def test_xpk_refuses_what_it_has_no_place_for(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(BadInput) as err:
        render("xpk", make_plan("v5p-16", **kwargs))
    assert words in str(err.value)


@pytest.mark.parametrize("option", ["queue", "priority", "reservation"])
def test_skypilot_refuses_each_naming_the_format(option: str) -> None:
    with pytest.raises(BadInput) as err:
        skypilot.render(make_plan("v5p-8", **{option: ADMITTED[option]}))
    assert f"--{option} has no place in --to skypilot" in str(err.value)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(queue="Team-A"), "is not a Kueue queue name"),
        (dict(queue="team_a"), "is not a Kueue queue name"),  # a label value, not an object name
        (dict(queue="q" * 64), "is not a Kueue queue name"),
        (dict(queue="-a"), "is not a Kueue queue name"),
        (dict(queue=""), "is not a Kueue queue name"),
        (dict(priority="High"), "is not a priority class name"),
        (dict(priority="a..b"), "is not a priority class name"),
        (dict(priority="a." * 126 + "ab"), "is not a priority class name"),  # 254 characters
        (dict(priority=""), "is not a priority class name"),
        (dict(reservation="1res"), "is not a reservation name"),
        (dict(reservation="r" * 64), "is not a reservation name"),
        (dict(reservation="projects/p/reservations/r"), "is not a reservation name"),
        (dict(reservation="res-"), "is not a reservation name"),
        (dict(reservation="my-res", route="spot"), "Spot VMs cannot consume a reservation"),
        (dict(reservation="my-res", route="flex", zone="us-east5-a"), "Use --route vm with"),
    ],
)
def test_bad_values_are_refused_at_the_edge_with_what_to_type(
    kwargs: dict[str, str], words: str
) -> None:
    with pytest.raises(BadInput) as err:
        make_plan("v5p-16", **kwargs)  # type: ignore[arg-type]
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_names_at_the_edge_of_each_rule_reach_the_jobset_unchanged(
    jobset_schema: jsonschema.Draft7Validator,
) -> None:
    queue = "a." + "q" * 59 + ".z"  # 63 characters, dots inside
    priority = ".".join(["p" * 63] * 3) + "." + "x" * 61  # 253 characters
    reservation = "r" + "-9" * 31  # 63 characters
    plan = make_plan("v5p-16", queue=queue, priority=priority, reservation=reservation)
    document = yaml.safe_load(jobset.render(plan))
    jobset_schema.validate(document)
    assert document["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == queue
    spec = _pod(document)["spec"]
    assert spec["priorityClassName"] == priority
    assert spec["nodeSelector"]["cloud.google.com/reservation-name"] == reservation


def test_the_cli_writes_them_and_its_json_says_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    args = ["export", "--to", "jobset", "--accelerator", "v5p-16", "--script", "train.py",
            "--queue", "team-a", "--priority", "high", "--reservation", "my-reservation",
            "--out", "run", "--json"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)["plan"]
    assert (plan["queue"], plan["priority"], plan["reservation"]) == (
        "team-a",
        "high",
        "my-reservation",
    )
    document = yaml.safe_load((tmp_path / "run" / "tpuwizard-run.jobset.yaml").read_text())
    assert document["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"


@pytest.mark.parametrize(
    "target, option, value, words",
    [
        ("xpk", "--queue", "team-a", "--queue has no place in --to xpk"),
        ("xpk", "--priority", "team-high", "has no place in --to xpk"),
        ("skypilot", "--reservation", "my-res", "--reservation has no place in --to skypilot"),
        ("jobset", "--queue", "Team A", "is not a Kueue queue name"),
    ],
)
def test_the_cli_refuses_with_exit_2_naming_the_format_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, option: str, value: str,
    words: str,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    args = ["export", "--to", target, "--accelerator", "v5p-8", "--script", "train.py",
            option, value, "--out", "plan.out"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert words in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]
