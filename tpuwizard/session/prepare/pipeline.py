"""The pipeline before create, run three ways over the same stages (stages.py), so that the
same answers get the same backend, refusals and questions everywhere:

- :func:`prepare` (``Session.prepare``): every stage, in order; its end a :class:`Ready` holding
  the only thing a launch starts from, a :class:`CheckedPlan`, or a refusal, or a question.
- :func:`look_ahead` (``Session.look_ahead``): what a walk needs before its last questions: the
  backend (auto's quota read where it decides), the watchdog's check and default.
- :func:`preview`: every stage without a call, from what a look ahead found (Review, as the
  user types; plain mode before it asks to create).
- :func:`preflight_only` (``Session.preflight_only``): the stages up to the checks before
  create and the checks, nothing made (``tpuwizard preflight``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from tpuwizard.session.prepare.outcomes import (
    GoOn,
    Outcome,
    Outlook,
    Prepared,
    Ready,
    Refusal,
    Stage,
)
from tpuwizard.session.prepare.stages import Pipeline, Priced

if TYPE_CHECKING:
    from tpuwizard.core.cloud.iam import WatchdogCheck
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.session.services import PreparesLaunches


def prepare(
    session: PreparesLaunches,
    answers: LaunchAnswers,
    *,
    preflight: bool = True,
    prices: Priced | None = None,
    found: Outlook | None = None,
) -> Prepared:
    """Every stage for a new run of ``answers`` (``preflight`` False: ``--no-preflight``, no
    checks and no quota read; ``prices``: the command's, started once the rules pass;
    ``found``: a walk's look ahead, whose quota reading stands)."""
    pipe = Pipeline(
        answers,
        session.new_run(),
        session.project or "",
        session.practice,
        session,
        preflight,
        prices,
        found,
    )
    outcome = pipe.run_stages()
    if isinstance(outcome, GoOn):
        outcome = Ready(pipe.checked())
    return _prepared(pipe, outcome)


def preview(
    answers: LaunchAnswers, found: Outlook | None, runs: Path, practice: bool = False
) -> Prepared:
    """Every stage, calling nothing: what a look ahead ``found`` stands in for the calls (its
    quota reading, its watchdog check). Its end is a :class:`GoOn` where nothing stands in the
    way. Its plan is there even where the backend stage refused (on the backend asked), so a
    screen can show it beside the reasons."""
    pipe = Pipeline(
        answers, ("preview", runs / "preview"), answers.where.project, practice, known=found
    )
    outcome = pipe.run_stages()
    if pipe.plan is None and isinstance(outcome, Refusal) and outcome.stage is Stage.BACKEND:
        from tpuwizard.core.cloud.backend_choice import BackendChoice
        from tpuwizard.core.cloud.backends import TPU_API, Backend

        asked = answers.where.backend
        pipe.choice = BackendChoice(asked if asked != Backend.AUTO else TPU_API, "", "")
        pipe.stage_defaults()
    return _prepared(pipe, outcome)


def preflight_only(session: PreparesLaunches, answers: LaunchAnswers) -> Prepared:
    """``tpuwizard preflight``: the stages a launch runs up to its checks before create (the
    backend, auto's quota read where it waits on it; the zone, gcloud's where none is given)
    and the checks, with nothing made. Its ``preflight`` is None where a stage refused first;
    a zone no API accepts is BadInput before any call."""
    from tpuwizard.core.cloud import gcloud_config

    pipe = Pipeline(
        answers,
        ("preflight", Path("preflight")),
        session.project or "",
        session.practice,
        session,
        takes_zones=False,
    )
    outcome = pipe.run_stages((Stage.BACKEND, Stage.DEFAULTS))
    if isinstance(outcome, GoOn):
        assert pipe.plan is not None
        gcloud_config.validate_zone(pipe.plan.zone)  # gcloud's as well as one typed
        outcome = pipe.run_stages((Stage.PREFLIGHT,))
    return _prepared(pipe, outcome)


def look_ahead(
    answers: LaunchAnswers,
    session: PreparesLaunches | None = None,
    check: WatchdogCheck | None = None,
) -> Outlook:
    """The backend for ``answers`` (with Compute Engine's quota read where auto waits on it),
    and the watchdog's check (asked of ``session`` on the routes with a watchdog; ``check``
    where there is no session, as a screen shown on its own has). The walk's watchdog answer
    is not asked yet: auto is decided as if none was given."""
    from tpuwizard.core.launch.plan.route_offers import WATCHDOG_ROUTES
    from tpuwizard.session.preflight import by_quota, compute_quota
    from tpuwizard.session.prepare.stages import serving
    from tpuwizard.session.watchdog import default_watchdog

    answers = dataclasses.replace(
        answers, deadline=dataclasses.replace(answers.deadline, watchdog=None)
    )
    project = session.project or "" if session is not None else answers.where.project
    practice = session.practice if session is not None else False
    pipe = Pipeline(answers, ("look", Path("look")), project, practice, session)
    outcome = pipe.run_stages((Stage.BACKEND,))
    route, served = answers.where.route, serving(answers)
    if isinstance(outcome, Refusal) or pipe.choice is None:
        refusal = outcome if isinstance(outcome, Refusal) else None
        return Outlook(route, None, refusal, serves=served)
    choice, reading = pipe.choice, None
    if pipe.pending and session is not None and answers.where.zone:
        reading = compute_quota(session, answers.where.slice, answers.where.zone, route)
        choice = by_quota(answers.where.slice, answers.where.zone, route, reading)
    if route in WATCHDOG_ROUTES and session is not None:
        # A check that cannot be made answers "not known" (the VM checks after create).
        check = session.watchdog_check(answers.reach.service_account)
    elif route not in WATCHDOG_ROUTES:
        check = None
    return Outlook(
        route,
        choice,
        None,
        reading,
        check,
        default_watchdog(route, check) if route in WATCHDOG_ROUTES else False,
        answers.where.resumes,
        served,
    )


def _prepared(pipe: Pipeline, outcome: Outcome) -> Prepared:
    return Prepared(
        pipe.answers,
        outcome,
        pipe.choice,
        pipe.quota,
        pipe.plan,
        pipe.result,
        pipe.watchdog_choice,
        pipe.notes(),
    )
