"""The property behind "ours only, never forgotten", over interleavings of foreign resources,
name collisions, failed reads, lost create answers and crashes:

* tpuwizard never deletes a resource it did not create;
* every resource it created ends in the ledger as ``gone`` (and is gone) or ``kept`` (and
  exists), once a later process has reconciled and torn down what was not kept.

It drives the real lifecycle, ledger, teardown and reconciliation against an in-memory cloud.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fakes import Crash, MemoryCloud, foreign_node, foreign_queued, same_instance
from tests.plans import launch_plan
from tpuwizard.core.cloud.types import OWNER_LABEL, RUN_LABEL, NodeInfo, QueuedInfo
from tpuwizard.core.errors import RemoteError
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.lifecycle.runtime import Runtime
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.launch.teardown.verified import delete_and_verify, reconcile
from tpuwizard.core.remote.bootstrap import BootstrapPlan
from tpuwizard.core.remote.transports import Transport
from tpuwizard.sandbox.faults import Faults

ZONE, PROJECT, OURS, THEIRS = "us-central1-a", "my-project", "0123456789abcdef", "fedcba9876543210"
NAMES = ("node-a", "node-b")


def unreachable(node: NodeInfo) -> Transport:
    raise RemoteError("the workers cannot be reached (the test stops here)")


def runtime(cloud: MemoryCloud, ledger: Ledger) -> Runtime:
    return Runtime(cloud, ledger, unreachable, BootstrapPlan(), poll=0.0, owner=OURS)


@dataclass
class ChanceFaults(Faults):
    """The sandbox's faults, each named one firing by chance at any call rather than the next N
    times: failed reads and lost create answers scattered through a launch."""

    chance: dict[str, float] = field(default_factory=dict)
    rng: random.Random = field(default_factory=random.Random)

    def take(self, name: str) -> bool:
        return self.rng.random() < self.chance.get(name, 0.0) or super().take(name)


def kind_of(resource: NodeInfo | QueuedInfo) -> str:
    return "node" if isinstance(resource, NodeInfo) else "queued"


def live(cloud: MemoryCloud, resource: NodeInfo | QueuedInfo) -> NodeInfo | QueuedInfo | None:
    table: dict = cloud.nodes if isinstance(resource, NodeInfo) else cloud.queued
    return table.get((resource.zone, resource.name))


foreign = st.lists(
    st.tuples(
        st.sampled_from(["node", "queued"]),
        st.sampled_from(NAMES),
        st.sampled_from(["unlabelled", "other owner"]),
    ),
    max_size=3,
)
launches = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.sampled_from(NAMES),
            "route": st.sampled_from(["vm", "spot"]),
            "keep": st.booleans(),
            "read_error": st.sampled_from([0.0, 0.0, 0.3, 0.7]),
            "lost_create": st.sampled_from([0.0, 0.5]),
            "crash_after": st.one_of(st.none(), st.integers(1, 12)),
        }
    ),
    min_size=1,
    max_size=5,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(foreign=foreign, launches=launches, seed=st.integers(0, 2**16))
def test_never_deletes_what_it_did_not_create_and_never_forgets_what_it_did(
    tmp_path, foreign, launches, seed
):
    faults = ChanceFaults(rng=random.Random(seed))
    cloud = MemoryCloud(project=PROJECT, faults=faults)
    for kind, name, who in foreign:
        labels = (
            {}
            if who == "unlabelled"
            else {"managed-by": "tpuwizard", RUN_LABEL: "theirs-1", OWNER_LABEL: THEIRS}
        )
        if kind == "queued":
            cloud.add(foreign_queued(ZONE, f"{name}-qr", name, labels))
        else:
            cloud.add(foreign_node(ZONE, name, labels))
    theirs: list[NodeInfo | QueuedInfo] = [*cloud.nodes.values(), *cloud.queued.values()]
    ledger = Ledger(tmp_path / f"ledger-{seed}-{len(launches)}.jsonl")
    ledger.path.unlink(missing_ok=True)

    for i, spec in enumerate(launches):
        faults.chance = {"read_error": spec["read_error"], "lost_create": spec["lost_create"]}
        after = spec["crash_after"]
        cloud.crash_at = None if after is None else len(cloud.calls) + after
        plan = launch_plan(
            "v5litepod-4",
            ZONE,
            PROJECT,
            f"run-{i}",
            tmp_path / f"runs-{seed}" / str(i),
            route=spec["route"],
            name=spec["name"],
            deadline=Deadline(keep=spec["keep"]),
        )
        with contextlib.suppress(Crash):  # the process died; the next launch is a new process
            run_launch(plan, runtime(cloud, ledger), lambda e: None)
        cloud.crash_at = None

    # A later, healthy process: status, then teardown of everything of ours not kept.
    faults.chance = {}
    kept = {e.resource.key for e in ledger.entries() if e.op == "kept"}
    found = reconcile(cloud, ledger, [ZONE], owner=OURS)
    for billable in found:
        if billable.resource.key not in kept:
            assert delete_and_verify(cloud, ledger, billable.resource, pause=0).verified

    # 1. Nothing that is not ours was deleted; every foreign resource still exists as it was.
    for item in cloud.deleted:
        assert item.labels.get(OWNER_LABEL) == OURS, f"deleted a foreign {item}"
    for item in theirs:
        assert live(cloud, item) is item, f"foreign {item.name} is gone"
    assert all(b.resource.owner != OURS for b in found.others)

    # 2. Everything ours ends in the ledger as gone (and is gone) or kept (and exists).
    last = {e.resource.key: e for e in ledger.entries()}
    for item in cloud.created:
        key = (kind_of(item), PROJECT, ZONE, item.name, item.labels[RUN_LABEL])
        assert key in last, f"{item.name} of {item.labels[RUN_LABEL]} is not in the ledger"
        if last[key].op == "kept":
            assert same_instance(live(cloud, item), item), f"kept {item.name} does not exist"
        else:
            assert last[key].op == "gone", f"{item.name}: {last[key].op}"
            assert not same_instance(live(cloud, item), item), f"{item.name} is gone but exists"
    # 3. Nothing of ours exists that the ledger does not say was kept (a queued resource's node
    #    is recorded as its request).
    existing: list[NodeInfo | QueuedInfo] = [*cloud.nodes.values(), *cloud.queued.values()]
    for item in existing:
        if item.labels.get(OWNER_LABEL) != OURS:
            continue
        if isinstance(item, NodeInfo) and item.queued_resource:
            item = cloud.queued[(ZONE, item.queued_resource)]
        key = (kind_of(item), PROJECT, ZONE, item.name, item.labels[RUN_LABEL])
        assert last[key].op == "kept", f"{item.name} exists and is not kept"
