"""What the session decides once for every front end: practice or real (and so the project and
the ledger), and where a zone survey comes from.

The wizard, plain mode and the commands ask these; none of them decides for itself, so the same
environment gives the same answer whichever one the user started.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV
from tpuwizard.session.practice import sandbox as practice_mode

if TYPE_CHECKING:
    from tpuwizard.core.cloud.gcloud_config import GcloudContext
    from tpuwizard.core.cloud.zones import RouteZone, ZoneSurvey
    from tpuwizard.core.launch.records.attempts import Attempt
    from tpuwizard.core.plan.catalog import Slice

# Why practice: asked for (--sandbox), already pointed at a sandbox (TPUWIZARD_TPU_ENDPOINT, as
# `tpuwizard sandbox serve` says to export), or no Google credentials; "real" otherwise.
Why = Literal["asked", "endpoint", "no credentials", "real"]


@dataclass(frozen=True)
class Mode:
    """Practice or real, decided from the flag and the environment as they were at start."""

    practice: bool
    project: str | None  # practice: the flag's project, else tpuwizard-practice; real: gcloud's
    why: Why
    endpoint: str | None = None  # the TPU endpoint the user's environment names, if any
    credentials: bool = False  # Google credentials were found
    # gcloud is signed in, yet no Application Default Credentials: the line that says so
    # (gcloud_config.signed_in_without_adc), or None.
    adc_missing: str | None = None

    @property
    def real_refusal(self) -> str | None:
        """Why real mode cannot be chosen now (the wizard's Practice switch), or None."""
        if self.why == "endpoint":
            return (
                f"{ENDPOINT_ENV} points at {self.endpoint}, not at Google: unset it to use "
                "Google Cloud"
            )
        if self.adc_missing:
            return self.adc_missing
        if not self.credentials:
            return "No credentials: run  gcloud auth application-default login"
        return None


def decide(sandbox: bool, ctx: GcloudContext) -> Mode:
    """The one rule: practice when asked, when the TPU client is already pointed away from Google
    (a real project over a sandbox would write the real ledger for practice nodes), or when no
    Google credentials exist; else real, in the configured project."""
    endpoint = os.environ.get(ENDPOINT_ENV) or None
    credentials = ctx.credentials is not None
    why: Why
    if sandbox:
        why = "asked"
    elif practice_mode.is_practice():
        why = "endpoint"
    elif not credentials:
        why = "no credentials"
    else:
        return Mode(False, ctx.project, "real", endpoint, credentials)
    from tpuwizard.core.cloud.gcloud_config import signed_in_without_adc

    # In practice only a project the user named (--project) stands; gcloud's is a real one.
    project = ctx.project if ctx.project_source == "flag" else practice_mode.PRACTICE_PROJECT
    return Mode(True, project, why, endpoint, credentials, signed_in_without_adc(ctx))


def zone_history(practice: bool) -> tuple[Attempt, ...]:
    """What each create attempt found, from the history kept beside that mode's ledger
    (session/ledgers.py's ledger_for): practice attempts never order real zones."""
    from tpuwizard.core import paths
    from tpuwizard.core.launch.records.attempts import AttemptHistory

    state = paths.state_dir()
    folder = state / "sandbox" if practice else state
    return tuple(AttemptHistory(folder / "attempts.jsonl").attempts())


@dataclass(frozen=True)
class ZoneAnswer:
    """A zone survey and what it is: live (from Google or the practice sandbox) or documented,
    and, when a live survey failed and the documented catalog stands in, why."""

    survey: ZoneSurvey
    practice: bool
    failure: str | None = None  # the diagnosis' title of the failed live survey
    # What earlier launches found in each zone (attempts.py), practice and real apart.
    attempts: tuple[Attempt, ...] = ()

    @property
    def live(self) -> bool:
        return self.survey.source == "live"

    def by_recent_success(self, accelerator: str, zones: list[str]) -> list[str]:
        """``zones`` with those that lately had capacity for ``accelerator`` first."""
        from tpuwizard.core.launch.records.attempts import order_zones

        return order_zones(zones, [a for a in self.attempts if a.accelerator == accelerator])

    def route_rows(
        self, slice_: Slice, route: str, zones: list[str] | None = None
    ) -> list[RouteZone]:
        """The zones offering ``slice_`` (or ``zones``, already narrowed) in the one order every
        front end shows: those that lately had capacity first, then ``route``'s usable ones, the
        cheapest first, the unconfirmed ones after the rest; those it cannot use last, with why."""
        from tpuwizard.core.cloud.zones import route_zones, unconfirmed_zones

        offering = self.survey.offering(slice_.name) if zones is None else zones
        offering = self.by_recent_success(slice_.name, offering)
        unconfirmed = unconfirmed_zones(self.survey, slice_)
        return route_zones(slice_, route, offering, unconfirmed)

    def last_tried(self, accelerator: str) -> dict[str, str]:
        """Per zone tried lately: "no capacity 12 min ago", "ready 3 h ago"."""
        from tpuwizard.core.launch.records.attempts import last_tried_words, latest_by_zone

        mine = [a for a in self.attempts if a.accelerator == accelerator]
        return {z: last_tried_words(a) for z, a in latest_by_zone(mine).items()}
