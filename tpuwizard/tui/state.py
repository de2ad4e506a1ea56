"""The wizard's state: one dataclass, owned by the App, read by every screen."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from tpuwizard.core.launch import events as ev
from tpuwizard.core.plan import cost


@dataclass
class Billing:
    """Something this session created that may be billing right now."""

    name: str
    zone: str
    accelerator: str
    route: str
    since: float

    def age_s(self, now: float | None = None) -> float:
        return (now or time.time()) - self.since

    def cost_usd(self, now: float | None = None) -> float | None:
        return cost.estimate(self.accelerator, self.route, self.age_s(now))


@dataclass
class WizardState:
    route: str = "vm"
    practice: bool = False
    project: str | None = None
    zone: str | None = None
    account: str | None = None
    credentials: str | None = None
    state_gib: float = 48.0
    accelerator: str = "v5litepod-4"
    name: str | None = None
    max_run_minutes: float | None = None
    watchdog: bool = False
    deep_checks: bool = False  # the verifier's precision profile and profiler trace
    script: Path | None = None
    fetch: tuple[str, ...] = ()
    run_dir: Path = field(default_factory=lambda: Path.cwd() / "runs")
    billing: Billing | None = None
    total_cost_usd: float | None = None
    receipt_path: str | None = None
    receipt_ok: bool | None = None
    last_failure: dict | None = None
    finished_code: int | None = None

    def apply(self, event: ev.Event) -> None:
        """Fold a lifecycle event into the state (the billing meter lives on this)."""
        match event:
            case ev.Planned():
                self.zone = event.zone
                self.billing = Billing(
                    event.name, event.zone, event.accelerator, event.route, time.time()
                )
            case ev.ZoneFailover():
                self.zone = event.to_zone
                if self.billing:
                    self.billing.zone = event.to_zone
            case ev.ReceiptSaved():
                self.receipt_path, self.receipt_ok = event.path, event.ok
            case ev.TeardownVerified():
                self.total_cost_usd = event.cost_usd
                self.billing = None
            case ev.Failed():
                self.last_failure = event.diagnosis
            case ev.Finished():
                self.finished_code = event.exit_code
                if self.total_cost_usd is None:
                    self.total_cost_usd = event.cost_usd
