"""What every command says about kept nodes after it ends: one line each, from the ledger and
the heartbeat book alone.

Apart from :mod:`~tpuwizard.session.kept.nodes` (which runs scripts on kept nodes and imports the
launch machinery, about 100 ms), so that ``tpuwizard fit 48 --json`` still starts fast: this
imports only the ledger reader and the price catalog, and what decides practice or real only
where a practice ledger is there to decide about.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core import paths
from tpuwizard.core.deadlines import idle_deadline  # not billing_state: every command reads it
from tpuwizard.core.launch.kept.heartbeat_book import HeartbeatBook
from tpuwizard.core.launch.kept.record import KeptRecord
from tpuwizard.core.launch.records.ledger import Entry, Ledger, Resource
from tpuwizard.core.plan import cost


@dataclass(frozen=True)
class KeptInfo:
    """What ``status`` shows for a kept node: cost so far and when it deletes itself."""

    name: str
    zone: str
    accelerator: str
    state: str
    kept_since: float
    cost_usd: float | None
    price_per_hour_usd: float | None
    max_deadline: float | None  # the watchdog's --max-run deadline (epoch seconds)
    idle_s: float | None
    last_heartbeat: float | None
    practice: bool = False
    checked: bool = True  # False: from the ledger alone, the cloud was not asked
    cost_at_most_usd: float | None = None  # where no price is known (Flex-start): the bound

    @property
    def idle_deadline(self) -> float | None:
        return idle_deadline(self.kept_since, self.idle_s, self.last_heartbeat, self.max_deadline)

    def to_dict(self) -> dict[str, object]:
        now = time.time()
        idle = self.idle_deadline
        return {
            "name": self.name,
            "zone": self.zone,
            "accelerator": self.accelerator,
            "state": self.state,
            "cost_usd": self.cost_usd,
            "price_per_hour_usd": self.price_per_hour_usd,
            "deadline": self.max_deadline,
            "idle_minutes": self.idle_s / 60 if self.idle_s else None,
            "idle_deadline": idle,
            "seconds_to_idle_deadline": round(idle - now, 1) if idle else None,
            "last_heartbeat": self.last_heartbeat,
            "practice": self.practice,
        }


def recorded_kept() -> list[KeptInfo]:
    """Every kept node the ledgers know (real, then practice), priced and timed from the ledger
    and the heartbeat book alone: no cloud client, so every command can afford to show them.
    Practice nodes are left out while no practice cloud runs (they went with it)."""
    state, out = paths.state_dir(), []
    for practice, folder in ((False, state), (True, state / "sandbox")):
        path = folder / "ledger.jsonl"
        if not path.exists() or (practice and not _practice_cloud_runs(folder)):
            continue
        beats = HeartbeatBook(folder / "heartbeats.json").read()
        entries = [e for e in Ledger(path).open_entries() if e.op == "kept"]
        out += [kept_info(e, "not checked", beats, practice, checked=False) for e in entries]
    return out


def _practice_cloud_runs(folder: Path) -> bool:
    """Whether a practice cloud runs: this command's, or a lasting one in ``folder``."""
    from tpuwizard.session.practice import sandbox as practice_mode

    return practice_mode.is_practice() or (folder / practice_mode.LASTING_SERVER_FILE).exists()


def kept_info(
    entry: Entry, state: str, beats: dict[str, float], practice: bool, checked: bool = True
) -> KeptInfo:
    """A kept node's line from its ledger entry, in ``state``, priced from its first record."""
    r, record = entry.resource, KeptRecord.of(entry)
    age = time.time() - entry.first_at
    return KeptInfo(
        node_id(r),
        r.zone,
        r.accelerator,
        state,
        record.kept_at,
        cost.estimate(r.slice, r.route, age, r.zone),
        cost.hourly(r.slice, r.route, r.zone),
        record.deadline,
        record.idle_s,
        beats.get(node_id(r)),
        practice,
        checked,
        cost.at_most(r.slice, r.route, age, r.zone),
    )


def node_id(resource: Resource) -> str:
    """A spot node is kept through its queued resource; the node is what runs things."""
    return resource.node_id or resource.name
