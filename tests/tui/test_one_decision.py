"""The session decides, once, what the three front ends used to decide each for itself: practice or
real (so the project and the ledger), the run folder, the zone survey and its words, the
watchdog's default, the exit codes and the deadline's bounds (issue 23, item 1).

Each test drives the CLI (click's runner), plain mode (prompt_toolkit's pipe) and the wizard
(Textual's Pilot) through the same case and asserts they agree. Where a launch would start, the
session's ``start_launch`` records the plan it was given and stops: nothing is created.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from textual.widgets import Input, Static

from tests.tui.pilot_helpers import (
    next_step,
    on_screen,
    press,
    screen_as,
    until,
    walk_to_capacity,
    walk_to_review,
)
from tpuwizard.cli import main
from tpuwizard.core import exit_codes
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV, TOKEN_ENV
from tpuwizard.core.deadlines import deadline_problem
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.checked import CheckedPlan
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.plain.prompt import validator as _validator
from tpuwizard.plain.walk import PlainWizard, _minutes
from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT
from tpuwizard.session.prepare.outcomes import Prepared, Ready
from tpuwizard.session.session import Session
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.screens.review import ReviewScreen

ACCELERATOR, ZONE = "v5litepod-4", "us-central1-a"
REAL_PROJECT = "my-real-project-1"  # gcloud's project: practice must not take it
# Plain mode's questions with every default, then "yes, create": route (4 + the route), size or
# parameters, size, slice, zone, name, deadline, watchdog, deeper checks, script, create.
PLAIN_DEFAULTS = "\r" * 15


class Stopped(Exception):
    """start_launch was reached: the plan is recorded and nothing is created."""


@dataclass
class Reached:
    session: Session
    checked: CheckedPlan

    @property
    def plan(self) -> LaunchPlan:
        return self.checked.plan


@pytest.fixture
def launches(monkeypatch) -> list[Reached]:
    reached: list[Reached] = []

    def start_launch(self: Session, checked: CheckedPlan, *args: object, **kwargs: object) -> None:
        reached.append(Reached(self, checked))
        raise Stopped

    monkeypatch.setattr(Session, "start_launch", start_launch)
    return reached


@contextmanager
def own_environment() -> Iterator[None]:
    """One front end's run: the address an in-process sandbox exports is not the next one's."""
    saved = {k: os.environ.get(k) for k in (ENDPOINT_ENV, TOKEN_ENV)}
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def credentials(tmp_path: Path, monkeypatch) -> None:
    """Application Default Credentials as `gcloud auth application-default login` leaves them
    (dummy values: nothing here may reach Google), and a gcloud project."""
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "dummy.apps.googleusercontent.com",
                "client_secret": "dummy",
                "refresh_token": "dummy",
            }
        )
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv("CLOUDSDK_CORE_PROJECT", REAL_PROJECT)


@pytest.fixture
def served_sandbox(monkeypatch) -> Iterator[str]:
    """A `tpuwizard sandbox serve`, with the two lines it says to export exported."""
    from tpuwizard.sandbox.serving import start_in_thread
    from tpuwizard.session.practice.sandbox import make_foreground_sandbox

    server = make_foreground_sandbox(0, None, 0.1)
    start_in_thread(server)
    monkeypatch.setenv(ENDPOINT_ENV, server.endpoint)
    monkeypatch.setenv(TOKEN_ENV, server.token)
    yield server.endpoint
    server.shutdown()
    server.server_close()


# -- the three front ends ----------------------------------------------------------------------
def cli(*args: str):
    with own_environment():
        return CliRunner().invoke(main, list(args))


def cli_launch(launches: list[Reached], *flags: str) -> Reached:
    before = len(launches)
    result = cli("launch", "--accelerator", ACCELERATOR, "--zone", ZONE, *flags)
    assert len(launches) == before + 1, result.output
    return launches[-1]


def plain(keys: str, sandbox: bool = False, run_dir: Path | None = None) -> tuple[int, str]:
    """Plain mode answering ``keys``; its exit code (-1: it reached start_launch, or its
    questions ran out) and everything it said."""
    lines: list[str] = []
    with own_environment(), create_pipe_input() as inp:
        inp.send_text(keys)
        inp.close()  # where the keys run out, the next question meets the end of input
        wizard = PlainWizard(sandbox, run_dir, input=inp, output=DummyOutput(), echo=lines.append)
        try:
            code = wizard.run()
        except (Stopped, EOFError):
            code = -1
    return code, "\n".join(lines)


def plain_launch(
    launches: list[Reached], keys: str = PLAIN_DEFAULTS, **options: object
) -> tuple[Reached, str]:
    before = len(launches)
    _, said = plain(keys, **options)  # type: ignore[arg-type]
    assert len(launches) == before + 1, said
    return launches[-1], said


@dataclass
class WizardWalk:
    zones_source: str = ""  # the Zones step's "Source: ..." line
    reached: Reached | None = None
    review_problem: str | None = None  # what Review said stood in the way, if Create was off


async def wizard(
    launches: list[Reached],
    sandbox: bool = False,
    run_dir: Path | None = None,
    deadline: str | None = None,
    to_review: bool = True,
) -> WizardWalk:
    """The wizard with its defaults (``deadline`` typed on Review), up to Create."""
    walk = WizardWalk()
    before = len(launches)
    with own_environment():
        app = WizardApp(sandbox=sandbox, run_dir=run_dir, check_leftovers=False)
        async with app.run_test(size=(100, 32)) as pilot:
            await walk_to_capacity(pilot)
            await next_step(pilot)
            await on_screen(pilot, "ZonesScreen")
            await until(pilot, lambda: "Looking" not in source(app), what="the zone survey")
            walk.zones_source = source(app)
            if not to_review:
                return walk
            await next_step(pilot)
            await on_screen(pilot, "ReviewScreen")
            if deadline is not None:
                app.screen.query_one("#max-run", Input).value = deadline
                await pilot.pause()
            problems = screen_as(app, ReviewScreen).problems()
            if problems:
                walk.review_problem = problems[0]
                return walk
            await press(pilot, "#create")
            await until(pilot, lambda: len(launches) > before, what="start_launch")
            walk.reached = launches[-1]
    return walk


def in_wizard(launches: list[Reached], **options: object) -> WizardWalk:
    """The wizard's walk on its own event loop: plain mode and the CLI run theirs outside one."""
    return asyncio.run(wizard(launches, **options))  # type: ignore[arg-type]


def source(app: WizardApp) -> str:
    return str(app.screen.query_one("#source", Static).render())


def zones_line(said: str) -> str:
    return next(line for line in said.splitlines() if line.startswith("Zones offering"))


# -- practice or real: the project and the ledger ----------------------------------------------
def sandbox_ledger(home: Path) -> Path:
    return home / "sandbox" / "ledger.jsonl"


@pytest.mark.parametrize("case", ["endpoint and credentials", "sandbox flag", "no credentials"])
def test_practice_or_real_project_and_ledger_agree(
    case, request, tmp_path, home, monkeypatch, launches
):
    flag = case == "sandbox flag"
    if case != "no credentials":
        credentials(tmp_path, monkeypatch)
    if case == "endpoint and credentials":
        request.getfixturevalue("served_sandbox")
    by_cli = cli_launch(launches, *(["--sandbox"] if flag else []))
    by_plain, plain_said = plain_launch(launches, sandbox=flag)
    by_wizard = in_wizard(launches, sandbox=flag).reached
    assert by_wizard is not None
    for reached in (by_cli, by_plain, by_wizard):
        assert reached.session.practice is True
        assert reached.plan.project == PRACTICE_PROJECT  # not gcloud's real project
        assert reached.session.ledger.path == sandbox_ledger(home)
    assert "[practice]" in plain_said
    assert {r.session.mode.why for r in (by_cli, by_plain, by_wizard)} == {
        {"endpoint and credentials": "endpoint", "sandbox flag": "asked"}.get(
            case, "no credentials"
        )
    }


# -- the zone survey and its words -------------------------------------------------------------
@pytest.mark.parametrize("case", ["endpoint and credentials", "no credentials"])
def test_the_zone_survey_and_its_words_agree(case, request, tmp_path, monkeypatch, launches):
    if case == "endpoint and credentials":
        credentials(tmp_path, monkeypatch)
        request.getfixturevalue("served_sandbox")
    by_cli = cli("zones", "--accelerator", ACCELERATOR)
    assert by_cli.exit_code == 0, by_cli.output
    _, plain_said = plain("\r" * 9)  # up to the Zone question, then its input ends
    walk = in_wizard(launches, to_review=False)
    words = "from the practice sandbox"
    assert words in by_cli.output and words in zones_line(plain_said) and words in walk.zones_source


def test_a_failed_live_survey_is_the_catalog_said_so_in_the_walks(monkeypatch, launches):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "forbidden=50")
    walk = in_wizard(launches, to_review=False)
    _, plain_said = plain("\r" * 9)
    by_cli = cli("zones", "--accelerator", ACCELERATOR)
    assert walk.zones_source.startswith("Source: documented, not live (")
    why = walk.zones_source.removeprefix("Source: documented, not live (").rstrip(")")
    assert f"(documented, not live ({why}))" in zones_line(plain_said)
    # The zones command's answer is the survey: it fails with the same diagnosis, exit 3.
    assert by_cli.exit_code == exit_codes.EXIT_CLOUD and why in by_cli.output


# -- the run folder ----------------------------------------------------------------------------
@pytest.mark.parametrize("asked", [False, True])
def test_the_run_folder_agrees(asked, tmp_path, monkeypatch, launches):
    monkeypatch.chdir(tmp_path)
    base = tmp_path / "elsewhere" if asked else None
    by_cli = cli_launch(launches, *(["--run-dir", str(base)] if base else []))
    by_plain, _ = plain_launch(launches, run_dir=base)
    by_wizard = in_wizard(launches, run_dir=base).reached
    assert by_wizard is not None
    for reached in (by_cli, by_plain, by_wizard):
        expected = (base or tmp_path / "runs") / reached.plan.run_id
        assert reached.plan.run_dir == expected == reached.session.run_folder(reached.plan.run_id)


# -- the watchdog's default --------------------------------------------------------------------
def test_the_watchdog_is_on_everywhere_when_the_check_cannot_be_made(monkeypatch, launches):
    from tpuwizard.core.cloud import iam

    def unreachable(*args: object, **kwargs: object) -> None:
        raise ConnectionError("the IAM API did not answer")

    monkeypatch.setattr(iam, "check_watchdog", unreachable)
    by_cli = cli_launch(launches)
    by_plain, plain_said = plain_launch(launches)
    by_wizard = in_wizard(launches).reached
    assert by_wizard is not None
    for reached in (by_cli, by_plain, by_wizard):
        check = reached.checked.watchdog_check
        assert check is not None and check.can_arm is None  # not known: the VM checks again
        assert reached.plan.watchdog is True
        assert reached.session.default_watchdog(reached.plan.route, check) is True
    assert "Not known whether the watchdog can run: the check before create could not" in (
        plain_said
    )


# -- the deadline's bounds ---------------------------------------------------------------------
def test_the_deadline_bounds_agree(launches):
    # Half a minute is a deadline in the core: every front end takes it.
    by_cli = cli_launch(launches, "--max-run", "0.5")
    keys = "\r" * 10 + "\x7f" * 3 + "0.5\r" + "\r" * 4  # the deadline typed over its default
    by_plain, _ = plain_launch(launches, keys)
    by_wizard = in_wizard(launches, deadline="0.5").reached
    assert by_wizard is not None
    assert {r.plan.deadline.max_run_minutes for r in (by_cli, by_plain, by_wizard)} == {0.5}
    # Past 7 days: every front end refuses it with the core's one sentence, before any create.
    refusal = deadline_problem(10081)
    assert refusal is not None
    said = cli("launch", "--accelerator", ACCELERATOR, "--zone", ZONE, "--max-run", "10081")
    assert said.exit_code == exit_codes.EXIT_BAD_INPUT and refusal in said.output
    assert _validator(_minutes)("10081") == refusal
    assert in_wizard(launches, deadline="10081").review_problem == refusal


# -- the exit codes ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "failure, code",
    [
        (RuntimeError("no way to reach the workers"), exit_codes.EXIT_CLOUD),
        (BadInput("the transport cannot be used here"), exit_codes.EXIT_BAD_INPUT),
    ],
)
def test_a_launch_that_cannot_start_ends_with_one_exit_code(failure, code, monkeypatch):
    from tpuwizard.session import runtime

    def broken(*args: object, **kwargs: object) -> None:
        raise failure

    monkeypatch.setattr(runtime, "build_runtime", broken)
    by_cli = cli("launch", "--accelerator", ACCELERATOR, "--zone", ZONE)
    by_plain, _ = plain(PLAIN_DEFAULTS)

    async def wizard_code() -> int | None:
        app = WizardApp(check_leftovers=False)
        async with app.run_test(size=(100, 32)) as pilot:
            await walk_to_review(pilot)
            await press(pilot, "#create")
            await on_screen(pilot, "SummaryScreen")
            return app.state.finished_code

    with own_environment():
        by_wizard = asyncio.run(wizard_code())
    assert by_cli.exit_code == by_plain == by_wizard == code


def test_the_wizard_cannot_switch_to_real_while_pointed_at_a_sandbox(
    tmp_path, monkeypatch, served_sandbox
):
    from textual.widgets import Switch

    credentials(tmp_path, monkeypatch)

    async def account_step() -> tuple[str, str, str]:
        app = WizardApp(check_leftovers=False)
        async with app.run_test(size=(100, 32)) as pilot:
            await on_screen(pilot, "RouteScreen")
            await next_step(pilot)
            await on_screen(pilot, "AccountScreen")
            field = app.screen.query_one("#project", Input)
            started_with = field.value
            app.screen.query_one("#practice", Switch).value = False
            await pilot.pause()
            await press(pilot, "#next")
            error = str(app.screen.query_one("#error", Static).render())
            return started_with, field.value, error

    with own_environment():
        started_with, real_project, error = asyncio.run(account_step())
    # Practice's project first; the switch offers gcloud's, and refuses it while the endpoint
    # points at the sandbox (real nodes would be asked of it, in the real ledger).
    assert (started_with, real_project) == (PRACTICE_PROJECT, REAL_PROJECT)
    assert f"{ENDPOINT_ENV} points at {served_sandbox}" in error and "keep practice mode" in error


# -- the same answers: the same backend (issue 46) ---------------------------------------------
# Each front end's answers go through the session's one pipeline before create: the same backend
# (auto decided by Compute Engine's quota, read in the practice sandbox), whichever front end
# asked. A spy records every answer of the pipeline (Session.prepare's, and the walks' previews
# as they ask). Each stage's refusals and questions are proven at the pipeline's own level
# (tests/unit/test_pipeline_stages.py); each front end's own launch keeps one end-to-end case of
# them (tests/tui/test_create_preflight.py, test_plain.py, test_beginner_walk.py, and
# tests/integration/test_preflight.py, test_money_safety.py for the command line).
V6E = "v6e-4"


@pytest.fixture
def prepared(monkeypatch) -> list[Prepared]:
    from tpuwizard.session.prepare import pipeline

    seen: list[Prepared] = []
    made = pipeline._prepared

    def spy(pipe, outcome):
        answer = made(pipe, outcome)
        seen.append(answer)
        return answer

    monkeypatch.setattr(pipeline, "_prepared", spy)
    return seen


def last_of(prepared: list[Prepared], since: int) -> Prepared:
    assert len(prepared) > since, "the pipeline was never asked"
    return prepared[-1]


async def wizard_on_v6e(launches: list[Reached]) -> str:
    """The wizard with v6e-4 and the first zone offering it, every other answer its default,
    up to Create; the zone it chose."""
    from tests.tui.test_compute_walk import walk_to_review_of_v6e

    before = len(launches)
    with own_environment():
        app = WizardApp(check_leftovers=False)
        async with app.run_test(size=(100, 32)) as pilot:
            await walk_to_review_of_v6e(pilot)
            await press(pilot, "#create")
            await until(pilot, lambda: len(launches) > before, what="start_launch")
            return str(app.state.zone)


def plain_on(monkeypatch, accelerator: str, zone: str, keys: str) -> tuple[int, str]:
    """Plain mode with ``accelerator`` in ``zone`` (its capacity and zone questions answered so:
    they are not the subject here), answering ``keys`` to the rest."""
    monkeypatch.setattr(PlainWizard, "choose_slice", lambda self, route="vm": accelerator)
    monkeypatch.setattr(PlainWizard, "choose_zone", lambda self, *args, **kwargs: zone)
    return plain(keys)


def test_the_same_answers_get_the_same_backend_from_compute_engine_s_quota(
    monkeypatch, launches, prepared
):
    at = len(prepared)
    zone = asyncio.run(wizard_on_v6e(launches))
    by_wizard = last_of(prepared, at)
    at = len(prepared)
    # The route's questions, name, deadline, (the watchdog, where the TPU API makes it), deeper
    # checks, script, create: Enter for each.
    code, said = plain_on(monkeypatch, V6E, zone, "\r" * 12)
    by_plain = last_of(prepared, at)
    at = len(prepared)
    by_cli_run = cli("launch", "--sandbox", "--accelerator", V6E, "--zone", zone)
    by_cli = last_of(prepared, at)
    for answer in (by_wizard, by_plain, by_cli):
        assert isinstance(answer.outcome, Ready), answer.reasons
        assert answer.answers.where.backend is Backend.AUTO  # as asked, everywhere
        assert answer.by_quota  # Compute Engine's quota reading decided it
        assert answer.outcome.checked.plan.backend is Backend.COMPUTE
    reasons = {a.backend.reason for a in (by_wizard, by_plain, by_cli) if a.backend}
    assert len(reasons) == 1, reasons  # the same reading, the same words
    (reason,) = reasons
    assert "covers 4 chips" in reason  # a short reading: test_pipeline_stages.py's table
    assert f"Backend: {reason}" in by_cli_run.output
    assert "Made through Compute Engine: auto:" in said
    assert code == -1 and by_cli_run.exit_code != 0  # each reached start_launch, stopped there
