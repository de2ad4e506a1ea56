"""What the session's parts use of the :class:`~tpuwizard.session.session.Session` that made
them: a launch's handle, the kept nodes, a resumed run on a kept node, the preflight and the
pipeline before create.

The Session builds these parts and hands itself to them; typed by this Protocol, they depend on
what they use, not on the facade, so no file imports its own maker.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tpuwizard.core.cloud.backends import Backend
    from tpuwizard.core.cloud.iam import WatchdogCheck
    from tpuwizard.core.cloud.protocol import Cloud
    from tpuwizard.core.cloud.tpu.client import TpuCloud
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.core.launch.records.billing_state import BillingState
    from tpuwizard.core.launch.records.ledger import Ledger, Resource
    from tpuwizard.core.launch.teardown.verified import TeardownResult


class SessionServices(Protocol):
    """Practice or real, the billing state every front end reads, the ledger, the clouds, the
    run folders, and the verified delete."""

    @property
    def practice(self) -> bool: ...

    @property
    def billing(self) -> BillingState: ...

    @property
    def ledger(self) -> Ledger: ...

    def cloud_for(self, backend: str) -> Cloud: ...

    def run_folder(self, run_id: str) -> Path: ...

    def new_run(self) -> tuple[str, Path]: ...

    def plan_launch(
        self,
        answers: LaunchAnswers,
        backend: Backend,
    ) -> LaunchPlan: ...

    def delete(
        self, resources: Sequence[Resource], others_confirmed: bool = False
    ) -> list[TeardownResult]: ...


class Reaches(Protocol):
    """What the preflight reads through: the project, practice or real, and the clouds."""

    @property
    def project(self) -> str | None: ...

    @property
    def practice(self) -> bool: ...

    @property
    def cloud(self) -> TpuCloud: ...

    def cloud_for(self, backend: str) -> Cloud: ...


class Settles(Protocol):
    """The kept nodes, as a launch that keeps one asks them first (a name used again)."""

    def settle(self, name: str) -> None: ...


class PreparesLaunches(Reaches, Protocol):
    """What the pipeline before create calls of the session: its reads, a new run, the check
    before create, and a kept node's readiness (the practice sandbox outlives the command)."""

    def new_run(self) -> tuple[str, Path]: ...

    def watchdog_check(self, service_account: str | None = None) -> WatchdogCheck: ...

    def prepare_to_keep(self) -> None: ...

    @property
    def kept(self) -> Settles: ...
