"""After a preemption the new node is made in the zone the old one was in, then in the zones of
``--zones`` after it, going round (the zones before it had no capacity when it was made): the
chain's real provisioner against the in-memory cloud, the attempts' work on the node stood in
for (the first attempt's node is preempted once it is READY)."""

from __future__ import annotations

from tests.fakes import MemoryCloud
from tests.plans import launch_plan
from tests.unit.test_launch_safety import make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.errors import NodeGone
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_OK
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle import launch as lifecycle
from tpuwizard.core.launch.plan.parts import Resume, Workload
from tpuwizard.core.launch.plan.zone_rules import zones_from

A, B, C = "us-central1-b", "us-east1-d", "us-east5-a"  # each offers v6e-4


def test_zones_from_starts_at_the_zone_and_goes_round():
    assert zones_from((A, B, C), B) == (B, C, A)
    assert zones_from((A, B, C), A) == (A, B, C)
    assert zones_from((A, B), C) == (C, A, B)


def test_a_stockout_on_recreate_moves_to_the_zone_after_the_preempted_ones(tmp_path, monkeypatch):
    cloud = MemoryCloud.faulty(f"stockout={A}", backend="compute")
    zones: list[str] = []

    def attempt(self: lifecycle.Launch, quiet_gone: bool = False, again: bool = False) -> int:
        node = self.provisioner.provision()
        zones.append(node.zone)
        self.gone = None
        if len(zones) == 1:  # preempted once READY; then its zone has no capacity either
            cloud.faults.stockout.add(node.zone)
            self.gone = NodeGone(node.name, "PREEMPTED", "running", "preempted")
            return EXIT_CLOUD
        return EXIT_OK

    monkeypatch.setattr(lifecycle.Launch, "attempt", attempt)
    script = tmp_path / "job" / "train.py"
    script.parent.mkdir()
    script.write_text("print('hi')\n")
    plan = launch_plan(
        accelerator="v6e-4",
        zone=A,
        project="practice-project",
        run_id="r1",
        run_dir=tmp_path / "runs" / "r1",
        route="spot",
        name="tpu-z",
        workload=Workload(script=script),
        resume=Resume("ckpt"),
        zones=(A, B, C),
        failover=True,
        backend="compute",
    )
    events: list[ev.Event] = []
    code = lifecycle.run_launch(plan, make_runtime(tmp_path, cloud), events.append, CancelToken())
    assert code == EXIT_OK, [e for e in events if isinstance(e, ev.Failed)]
    # A had no capacity: B; B preempted, then out of capacity: C, the zone after it (not A).
    assert zones == [B, C]
    moves = [(e.from_zone, e.to_zone) for e in events if isinstance(e, ev.ZoneFailover)]
    assert moves == [(A, B), (B, C)]
    recreating = next(e for e in events if isinstance(e, ev.Recreating))
    assert recreating.zone == B  # the same zone first
    assert not cloud.nodes  # every node verified gone
