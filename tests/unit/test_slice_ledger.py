"""Each part of a resource made of parts (a Compute Engine slice: policy, template, MIG) has
its ledger intent before its create: the provisioner hands the cloud a callback, and every
record lists the parts begun so far, saying whether each lives in a region or a zone."""

from __future__ import annotations

import json

import pytest

from tests.fakes import Crash, MemoryCloud
from tests.plans import launch_plan
from tests.unit.test_launch_safety import make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.protocol import Part
from tpuwizard.core.launch.lifecycle.launch import Launch
from tpuwizard.core.launch.lifecycle.launch_state import LaunchState

ZONE = "us-east5-b"
PARTS = [
    Part("workload-policy", "us-east5", "tpu-s-wp"),
    Part("instance-template", "us-east5", "tpu-s-it"),
    Part("mig", ZONE, "tpu-s"),
]


def ledger_lines(rt) -> list[dict]:
    return [json.loads(line) for line in rt.ledger.path.read_text().splitlines()]


@pytest.mark.parametrize("crash_after", [0, 1, 2])
def test_each_part_is_in_the_ledger_before_its_create_even_when_the_process_dies(
    tmp_path, crash_after
):
    cloud = MemoryCloud(backend=Backend.COMPUTE)
    rt = make_runtime(tmp_path, cloud)
    seen: list[list[str]] = []

    def create_node(req, on_part=None):
        for i, part in enumerate(PARTS):
            on_part(part)
            # What the ledger holds as this part's create is sent.
            last = ledger_lines(rt)[-1]
            seen.append([p["name"] for p in last.get("parts", [])])
            if i == crash_after:
                raise Crash("killed after this part's create")
        return None

    cloud.create_node = create_node  # type: ignore[method-assign]
    p = launch_plan(
        accelerator="v6e-16",
        zone=ZONE,
        project="practice-project",
        run_id="r1",
        run_dir=tmp_path / "runs",
        name="tpu-s",
        backend="compute",
    )
    launch = Launch(p, rt, lambda e: None, CancelToken())
    with pytest.raises(Crash):
        launch.provisioner.create_in(ZONE, LaunchState(ZONE))
    names = [part.name for part in PARTS]
    assert seen == [names[: i + 1] for i in range(crash_after + 1)]
    last = ledger_lines(rt)[-1]
    assert last["op"] == "intent" and last["name"] == "tpu-s" and last["zone"] == ZONE
    # The ledger says which parts are regional and which zonal.
    where = [("region" in q, "zone" in q) for q in last["parts"]]
    assert where == [(True, False), (True, False), (False, True)][: crash_after + 1]
    # The slice's record stays open: status and teardown --all go after it.
    assert [e.resource.name for e in rt.ledger.open_entries()] == ["tpu-s"]
