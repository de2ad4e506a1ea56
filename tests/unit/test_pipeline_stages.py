"""Each stage of the pipeline before create (session/prepare/stages.py), at its own level: its
go on, its refusals with their reasons, its questions, and auto's move by a Compute Engine quota
reading, against an in-memory session (tests/memory_session.py) whose reads the sandbox's own
handlers answer from the world's faults. Milliseconds a case; the front ends' end-to-end cases
keep one launch a path each (tests/integration/, tests/tui/).

Every answers here is built by :func:`answers`, the one place that knows LaunchAnswers' shape.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from tests.memory_session import MemorySession
from tpuwizard.core.cloud.backends import Backend, Transport, Via
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.launch_plan import ready_timeout_s
from tpuwizard.core.launch.plan.parts import Deadline, Reach, Resume, Where
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.preflight.model import Verdict
from tpuwizard.core.routes import Route
from tpuwizard.session.prepare.outcomes import (
    Ask,
    GoOn,
    Outcome,
    Outlook,
    Question,
    Ready,
    Refusal,
    Stage,
)
from tpuwizard.session.prepare.pipeline import look_ahead, preflight_only, prepare, preview
from tpuwizard.session.prepare.stages import UP_IDLE_MINUTES, WATCHDOG_OFF, Pipeline

ZONE = "us-east5-a"  # v6e's: both backends serve it there, so auto waits on the quota
V5E_ZONE = "us-central1-a"  # v5e's: the TPU API's only
COMPUTE_QUOTA = "TPUS-PER-TPU-FAMILY-per-project-region"  # what v6e on Compute Engine spends


def answers(accelerator: str = "v6e-4", **changes: Any) -> LaunchAnswers:
    """The one LaunchAnswers builder of this module: a v6e-4 in us-east5-a, auto, the vm route,
    with ``changes`` named by the value (``zone=``, ``watchdog=``, ``budget_usd=``...), each put
    into its part; a part given whole (``reach=``) is the answers' own."""
    parts: dict[str, tuple[type[Any], dict[str, Any]]] = {
        "where": (Where, {"slice": parse_accelerator(accelerator), "zone": ZONE}),
        "deadline": (Deadline, {}),
        "resume": (Resume, {}),
    }
    whole: dict[str, Any] = {}
    for name, value in changes.items():
        holder = next(
            (h for h, (kind, _) in parts.items() if name in {f.name for f in fields(kind)}), None
        )
        if holder is None:
            whole[name] = value
        else:
            parts[holder][1][name] = value
    made = {holder: kind(**values) for holder, (kind, values) in parts.items()}
    return LaunchAnswers(**made, **whole)


@pytest.fixture
def world(monkeypatch, tmp_path):
    """A practice session over a memory world with the faults of a sandbox spec."""

    def make(spec: str = "", **fields: Any) -> MemorySession:
        return MemorySession.faulty(monkeypatch, tmp_path / "runs", spec, **fields)

    return make


def pipeline(session: MemorySession, asked: LaunchAnswers, preflight: bool = True) -> Pipeline:
    """The pipeline ``prepare`` runs, held here so a test can look at what each stage decided."""
    return Pipeline(
        asked, session.new_run(), session.project or "", session.practice, session, preflight
    )


def through(pipe: Pipeline, last: Stage) -> Outcome:
    """The stages in order up to and with ``last``."""
    order = tuple(Stage)
    return pipe.run_stages(order[: order.index(last) + 1])


def said(outcome: Outcome) -> str:
    """A refusal's reasons or a question's why, as one text to look into."""
    if isinstance(outcome, Refusal):
        return " ".join(str(r) for r in outcome.reasons)
    assert isinstance(outcome, Question), outcome
    return " ".join(str(r) for r in outcome.why)


# -- the backend --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("accelerator", "changes", "backend", "waits_on_quota"),
    [
        ("v6e-4", {}, Backend.TPU_API, True),  # both serve it: auto waits on the quota
        ("v6e-4", {"watchdog": True}, Backend.TPU_API, False),  # the watchdog is the TPU API's
        ("v6e-4", {"idle_minutes": 20.0}, Backend.TPU_API, False),  # so is an idle deadline
        ("v6e-4", {"reach": Reach(transport=Transport.GCLOUD)}, Backend.TPU_API, False),
        ("v6e-16", {}, Backend.TPU_API, False),  # a slice of several VMs stays on the TPU API
        ("v5litepod-4", {"zone": V5E_ZONE}, Backend.TPU_API, False),  # v5e: the TPU API's only
        ("v6e-4", {"backend": Backend.COMPUTE}, Backend.COMPUTE, False),  # asked: no reading
        ("tpu7x-8", {}, Backend.COMPUTE, False),  # TPU7x: Compute Engine's only
    ],
)
def test_the_backend_stage_decides_the_backend_and_whether_the_quota_decides_it(
    world, accelerator, changes, backend, waits_on_quota
):
    session = world()
    pipe = pipeline(session, answers(accelerator, **changes))
    assert pipe.stage_backend() == GoOn()
    assert pipe.choice is not None and pipe.choice.backend is backend
    assert pipe.pending is waits_on_quota
    assert session.reads.asked == [] and session.calls == []  # decided without a call


@pytest.mark.parametrize(
    ("accelerator", "changes", "reason"),
    [
        (
            "v5litepod-4",
            {"zone": V5E_ZONE, "backend": Backend.COMPUTE},
            "v5litepod-4 has no Compute Engine machine type",
        ),
        ("tpu7x-8", {"backend": Backend.TPU_API}, "tpu7x-8 is not served by the TPU API"),
        ("v6e-4", {"via": Via.RESIZE_REQUEST}, "needs --backend compute (not auto)"),
        (
            "v6e-4",
            {"via": Via.RESIZE_REQUEST, "backend": Backend.TPU_API},
            "needs --backend compute (not tpu-api)",
        ),
    ],
)
def test_the_backend_stage_refuses_an_impossible_pair_before_any_call(
    world, accelerator, changes, reason
):
    session = world()
    prepared = prepare(session, answers(accelerator, **changes))
    assert isinstance(prepared.outcome, Refusal) and prepared.outcome.stage is Stage.BACKEND
    assert reason in said(prepared.outcome)
    assert prepared.plan is None and prepared.preflight is None
    assert session.reads.asked == [] and session.calls == []


# -- the defaults -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("changes", "zone", "failover"),
    [
        ({}, ZONE, False),
        ({"zone": "", "zones": ("us-east5-b", ZONE)}, "us-east5-b", True),  # the first of them
        ({"zone": ""}, "us-east5-c", False),  # gcloud's (CLOUDSDK_COMPUTE_ZONE here)
    ],
)
def test_the_defaults_stage_fills_the_zone(world, monkeypatch, changes, zone, failover):
    monkeypatch.setenv("CLOUDSDK_COMPUTE_ZONE", "us-east5-c")
    pipe = pipeline(world(), answers(**changes, backend=Backend.TPU_API))
    assert through(pipe, Stage.DEFAULTS) == GoOn()
    assert pipe.plan is not None and (pipe.plan.zone, pipe.plan.where.failover) == (zone, failover)


@pytest.mark.parametrize(
    ("takes_zones", "give"),
    [(True, "No zone: give --zone or --zones ("), (False, "No zone: give --zone (")],
    ids=["launch and up", "preflight (no --zones)"],
)
def test_the_defaults_stage_refuses_without_any_zone_and_says_where_to_give_one(
    world, monkeypatch, tmp_path, takes_zones, give
):
    monkeypatch.delenv("CLOUDSDK_COMPUTE_ZONE", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud-config"))
    session = world()
    pipe = pipeline(session, answers(zone=""))
    pipe.takes_zones = takes_zones
    outcome = through(pipe, Stage.DEFAULTS)
    assert isinstance(outcome, Refusal) and outcome.stage is Stage.DEFAULTS
    assert give in said(outcome)
    assert "tpuwizard zones --accelerator v6e-4" in said(outcome)
    assert session.reads.asked == [] and session.calls == []


@pytest.mark.parametrize(
    ("changes", "watchdog", "idle"),
    [
        ({"backend": Backend.TPU_API}, False, None),  # a launch: the watchdog stage decides
        ({"backend": Backend.TPU_API, "iterate": True}, True, UP_IDLE_MINUTES),  # up: kept
        ({"backend": Backend.TPU_API, "iterate": True, "idle_minutes": 5.0}, True, 5.0),
        ({"backend": Backend.TPU_API, "iterate": True, "watchdog": False}, False, None),
        ({"backend": Backend.COMPUTE, "iterate": True}, False, None),  # Google's deadline
    ],
)
def test_the_defaults_stage_gives_a_node_kept_for_runs_its_watchdog_and_idle_deadline(
    world, changes, watchdog, idle
):
    pipe = pipeline(world(), answers(**changes))
    assert through(pipe, Stage.DEFAULTS) == GoOn()
    assert pipe.plan is not None
    assert (pipe.plan.watchdog, pipe.plan.deadline.idle_minutes) == (watchdog, idle)


def test_the_defaults_stage_fills_the_project_and_the_wait_for_ready(world):
    session = world()
    pipe = pipeline(session, answers())
    through(pipe, Stage.DEFAULTS)
    assert pipe.plan is not None and pipe.plan.project == session.project
    assert pipe.ready_timeout == ready_timeout_s(Route.VM)
    pipe = pipeline(session, answers(project="my-own", ready_timeout_s=42.0))
    through(pipe, Stage.DEFAULTS)
    assert pipe.plan is not None and pipe.plan.project == "my-own"
    assert pipe.ready_timeout == 42.0


# -- the plan's rules ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"fan_out": True}, "--fan-out sends the create to every zone of --zones at once"),
        ({"budget_usd": 5.0}, "--budget is for a run that resumes: add --checkpoints DIR."),
        ({"watchdog": True, "route": Route.FLEX}, "Flex-start already ends at its deadline"),
        ({"idle_minutes": 10.0, "backend": Backend.COMPUTE}, "needs the on-VM watchdog"),
        ({"watchdog": True, "backend": Backend.COMPUTE}, "there is no on-VM watchdog"),
        (
            {"reach": Reach(transport=Transport.GCLOUD), "backend": Backend.COMPUTE},
            "reaches TPU API nodes only",
        ),
    ],
)
def test_the_problems_stage_refuses_a_plan_its_rules_refuse_before_any_call(world, changes, reason):
    session = world()
    outcome = through(pipeline(session, answers(**changes)), Stage.PROBLEMS)
    assert isinstance(outcome, Refusal) and outcome.stage is Stage.PROBLEMS
    assert reason in said(outcome)
    assert session.reads.asked == [] and session.calls == []


def test_the_problems_stage_refuses_gcloud_s_ssh_without_gcloud_on_path(world, monkeypatch):
    monkeypatch.setenv("PATH", "")
    real = world(practice=False)  # practice reaches its stand-in without gcloud
    asked = answers(reach=Reach(transport=Transport.GCLOUD), backend=Backend.TPU_API)
    outcome = through(pipeline(real, asked), Stage.PROBLEMS)
    assert isinstance(outcome, Refusal) and outcome.stage is Stage.PROBLEMS
    assert "--transport gcloud needs the gcloud CLI, and none is on PATH" in said(outcome)
    assert through(pipeline(world(), asked), Stage.PROBLEMS) == GoOn()  # practice: no need


# -- the preflight ------------------------------------------------------------------------------
def test_the_preflight_stage_goes_on_with_every_check_made(world):
    session = world()
    pipe = pipeline(session, answers(backend=Backend.TPU_API))
    assert through(pipe, Stage.PREFLIGHT) == GoOn()
    assert pipe.result is not None and not pipe.result.failures
    assert {c.name for c in pipe.result.checks} >= {"Credentials", "Billing", "Offered in zone"}
    assert pipe.result.quota_read  # its line PASSed: the launch is told


@pytest.mark.parametrize(
    ("spec", "accelerator", "zone", "line"),
    [
        ("no_billing=1", "v6e-4", ZONE, "FAIL    Billing"),
        ("disabled_services=tpu.googleapis.com", "v6e-4", ZONE, "FAIL    APIs enabled"),
        ("no_external_ip=1", "v6e-4", ZONE, "FAIL    External IPs"),
        ("", "v4-8", V5E_ZONE, "the TPU API does not offer v4-8 in us-central1-a"),
        ("quota_limit=TPUV6EPerProjectPerRegionForTPUAPI:0", "v6e-4", ZONE, "FAIL    Quota"),
    ],
)
@pytest.mark.parametrize("kept", [{}, {"keep": True, "iterate": True}], ids=["launch", "up"])
def test_the_preflight_stage_refuses_with_each_failed_check_s_line(
    world, spec, accelerator, zone, line, kept
):
    session = world(spec)
    asked = answers(accelerator, zone=zone, backend=Backend.TPU_API, **kept)
    prepared = prepare(session, asked)
    assert isinstance(prepared.outcome, Refusal) and prepared.outcome.stage is Stage.PREFLIGHT
    assert line in said(prepared.outcome)
    assert session.calls == ["list_accelerator_types"]  # read, never created
    assert session.kept.settled == []  # a name kept before is left as it was


def test_an_unknown_check_stops_nothing(world):
    pipe = pipeline(world("orgpolicy_unreadable=1"), answers(backend=Backend.TPU_API))
    assert through(pipe, Stage.PREFLIGHT) == GoOn()
    assert pipe.result is not None
    assert any(c.verdict is Verdict.UNKNOWN for c in pipe.result.checks)


def test_no_preflight_makes_no_check_and_no_quota_reading(world):
    session = world("no_billing=1")
    prepared = prepare(session, answers(), preflight=False)
    assert isinstance(prepared.outcome, Ready)
    assert prepared.preflight is None and prepared.quota is None
    assert prepared.backend is not None and prepared.backend.backend is Backend.TPU_API
    assert not [path for _, path in session.reads.asked if "quotaInfos" in path]


# -- auto, decided by Compute Engine's quota ----------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "backend", "reason"),
    [
        ("", Backend.COMPUTE, "its on-demand quota in us-east5 covers 4 chips"),
        (f"quota_limit={COMPUTE_QUOTA}:0", Backend.TPU_API, "auto"),
        (f"quota_limit={COMPUTE_QUOTA}@us-east5:2", Backend.TPU_API, "has room for 2 chips"),
        (f"quota_limit={COMPUTE_QUOTA}@europe-west4:0", Backend.COMPUTE, "covers 4 chips"),
    ],
)
def test_auto_goes_where_compute_engine_s_quota_reading_says(world, spec, backend, reason):
    session = world(spec)
    prepared = prepare(session, answers())
    assert isinstance(prepared.outcome, Ready), prepared.reasons
    assert prepared.by_quota and prepared.quota is not None
    assert prepared.backend is not None and prepared.backend.backend is backend
    assert reason in prepared.backend.reason
    assert prepared.outcome.checked.plan.backend is backend  # the plan moved with it


def test_auto_moved_to_compute_engine_leaves_the_watchdog_and_idle_deadline_behind(world):
    prepared = prepare(world(), answers(route=Route.SPOT, keep=True, iterate=True))
    assert isinstance(prepared.outcome, Ready), prepared.reasons
    plan = prepared.outcome.checked.plan
    assert (plan.backend, plan.watchdog, plan.deadline.idle_minutes) == (
        Backend.COMPUTE,
        False,
        None,
    )


# -- tpuwizard preflight: the stages up to the checks, nothing made ----------------------------
@pytest.mark.parametrize(
    ("spec", "accelerator", "changes", "stage", "backend", "failed"),
    [
        ("", "v6e-4", {}, None, Backend.COMPUTE, ""),  # auto: the quota covers it
        # gcloud's SSH needs the TPU API: no reading, as the launch's stage (not the command's
        # own narrower rule)
        ("", "v6e-4", {"reach": Reach(transport=Transport.GCLOUD)}, None, Backend.TPU_API, ""),
        (
            "no_billing=1",
            "v6e-4",
            {"backend": Backend.TPU_API},
            Stage.PREFLIGHT,
            Backend.TPU_API,
            "FAIL    Billing",
        ),
        ("", "v6e-4", {"zone": ""}, Stage.DEFAULTS, None, ""),  # no zone, none in gcloud's
        ("", "tpu7x-8", {"backend": Backend.TPU_API}, Stage.BACKEND, None, ""),  # impossible
    ],
)
def test_preflight_alone_decides_as_a_launch_does_and_makes_nothing(
    world, monkeypatch, tmp_path, spec, accelerator, changes, stage, backend, failed
):
    monkeypatch.delenv("CLOUDSDK_COMPUTE_ZONE", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud-config"))
    session = world(spec)
    prepared = preflight_only(session, answers(accelerator, **changes))
    outcome = prepared.outcome
    assert (outcome.stage if isinstance(outcome, Refusal) else None) is stage, prepared.reasons
    result = prepared.preflight
    assert (result.choice.backend if result and result.choice else None) is backend
    assert (result is not None and any(failed in c.line() for c in result.failures)) is bool(failed)
    assert [c for c in session.calls if c != "list_accelerator_types"] == []  # nothing made


def test_preflight_alone_refuses_a_zone_no_api_accepts_before_any_call(world):
    from tpuwizard.core.errors import BadInput

    session = world()
    with pytest.raises(BadInput):
        preflight_only(session, answers(zone="Us_East5-a; rm"))
    assert session.reads.asked == [] and session.calls == []


def test_the_account_step_s_project_checks_ask_of_no_slice_or_zone(world):
    from tpuwizard.session.preflight import project_checks

    session = world("no_billing=1")
    found = {c.name: c for c in project_checks(session)}
    assert {"Credentials", "APIs enabled", "Billing"} <= set(found)
    assert found["Billing"].failed and "Quota" not in found and "Offered in zone" not in found
    assert session.calls == []


def test_a_look_ahead_s_reading_stands_and_no_quota_is_read_again(world):
    session = world(f"quota_limit={COMPUTE_QUOTA}:0")  # this world would say the TPU API
    ahead = look_ahead(answers(), session)
    assert ahead.by_quota and ahead.backend is not None
    assert ahead.backend.backend is Backend.TPU_API
    read = len(session.reads.asked)
    prepared = prepare(session, answers(), found=ahead)
    assert prepared.backend is not None and prepared.backend.backend is Backend.TPU_API
    quota_reads = [p for _, p in session.reads.asked[read:] if COMPUTE_QUOTA in p]
    assert quota_reads == []


def test_a_preview_decides_by_the_look_ahead_s_reading_and_calls_nothing(world, tmp_path):
    session = world()
    ahead = look_ahead(answers(), session)
    asked = len(session.reads.asked)
    shown = preview(answers(project=session.project), ahead, tmp_path / "runs")
    assert isinstance(shown.outcome, GoOn)
    assert shown.backend is not None and shown.backend.backend is Backend.COMPUTE
    assert len(session.reads.asked) == asked and shown.preflight is None


# -- the watchdog -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "changes", "on", "why_not"),
    [
        ("", {}, True, None),  # the check says it can run: on
        ("policy_unreadable=1", {}, True, None),  # not known: on (the VM checks again)
        ("sa_no_delete=1", {}, False, "may not delete"),  # it cannot run: off, saying why
        ("no_act_as=1", {}, False, "actAs"),  # its account may not be attached: off
        ("", {"watchdog": False}, False, "switched off"),
        ("", {"route": Route.FLEX}, False, None),  # Google's deadline: nothing to arm
    ],
)
def test_the_watchdog_stage_decides_on_or_off_by_the_check(world, spec, changes, on, why_not):
    pipe = pipeline(world(spec), answers(**{"backend": Backend.TPU_API, **changes}))
    assert through(pipe, Stage.WATCHDOG) == GoOn()
    choice = pipe.watchdog_choice
    assert choice is not None and pipe.plan is not None and pipe.plan.watchdog is on
    if why_not is None:
        assert choice.why_not is None
    else:
        assert choice.why_not is not None and why_not in choice.why_not


@pytest.mark.parametrize(
    ("spec", "off"),
    [
        ("sa_no_delete=1", "Watchdog off: the VM's service account"),
        ("no_act_as=1", "Watchdog off: you may not attach the service account"),
    ],
)
def test_the_watchdog_off_by_the_check_says_why_and_what_the_deadline_does_then(world, spec, off):
    prepared = prepare(world(spec), answers(backend=Backend.TPU_API))
    assert isinstance(prepared.outcome, Ready) and not prepared.outcome.checked.plan.watchdog
    assert prepared.watchdog is not None
    first, *_, deadline = prepared.watchdog.lines(0)
    assert first.startswith(off) and "To allow it: " in first
    assert "only while tpuwizard runs, because" in deadline


def test_the_watchdog_switched_off_asks_no_check(world):
    session = world()
    pipe = pipeline(session, answers(backend=Backend.TPU_API, watchdog=False))
    assert through(pipe, Stage.WATCHDOG) == GoOn()
    assert not [p for _, p in session.reads.asked if "serviceAccounts" in p]


@pytest.mark.parametrize(
    ("spec", "changes", "why"),
    [
        # asked on, and the check says no: why, and the command that allows it
        ("sa_no_delete=1", {"watchdog": True}, ("The watchdog cannot run", "roles/tpu.admin")),
        # the account it needs may not be attached: Google would refuse the create
        ("no_act_as=1", {"watchdog": True}, ("actAs", "roles/iam.serviceAccountUser")),
    ],
)
def test_the_watchdog_stage_asks_to_go_on_without_it(world, spec, changes, why):
    session = world(spec)
    prepared = prepare(session, answers(**{"backend": Backend.TPU_API, **changes}))
    question = prepared.outcome
    assert isinstance(question, Question) and question.stage is Stage.WATCHDOG
    assert (question.ask, question.answer) == (Ask.WITHOUT_WATCHDOG, WATCHDOG_OFF)
    assert all(words in said(question) for words in why), said(question)
    assert "create_node" not in session.calls
    yes = prepare(session, answers(**{"backend": Backend.TPU_API, **changes, "watchdog": False}))
    assert isinstance(yes.outcome, Ready) and not yes.outcome.checked.plan.watchdog


def test_the_watchdog_stage_refuses_an_account_named_that_may_not_be_attached(world):
    named = Reach(service_account="runner@practice-project.iam.gserviceaccount.com")
    asked = answers(backend=Backend.TPU_API, reach=named)
    prepared = prepare(world("no_act_as=1"), asked)
    assert isinstance(prepared.outcome, Refusal) and prepared.outcome.stage is Stage.WATCHDOG
    assert "actAs" in said(prepared.outcome)  # off, the account is attached all the same


# -- the keep -----------------------------------------------------------------------------------
def test_the_keep_stage_asks_before_keeping_a_node_nothing_would_delete(world):
    session = world("sa_no_delete=1")
    kept: dict[str, Any] = {"backend": Backend.TPU_API, "keep": True, "iterate": True}
    prepared = prepare(session, answers(**kept))
    question = prepared.outcome
    assert isinstance(question, Question) and question.stage is Stage.KEEP
    assert (question.ask, question.answer) == (Ask.KEEP_UNWATCHED, WATCHDOG_OFF)
    assert "Refusing to keep a node that nothing would delete" in said(question)
    assert "To allow the watchdog: " in said(question)  # the command that grants it
    assert session.kept.settled == []
    yes = prepare(session, answers(**kept, watchdog=False))
    assert isinstance(yes.outcome, Ready) and not yes.outcome.checked.plan.watchdog


@pytest.mark.parametrize(
    ("changes", "settled", "readied"),
    [
        ({}, False, 0),  # a launch that ends with its run: nothing kept
        ({"keep": True}, True, 1),  # --keep: a name kept before has its record closed
        ({"keep": True, "iterate": True}, True, 1),  # up
    ],
)
def test_the_keep_stage_settles_a_kept_name_and_readies_the_sandbox_first(
    world, changes, settled, readied
):
    session = world()
    prepared = prepare(session, answers(**{"backend": Backend.TPU_API, "name": "mine", **changes}))
    assert isinstance(prepared.outcome, Ready), prepared.reasons
    assert session.kept.settled == (["mine"] if settled else [])
    assert session.readied == readied  # once, before the first call


# -- the whole pipeline -------------------------------------------------------------------------
def test_every_stage_through_gives_the_checked_plan_a_launch_starts_from(world):
    session = world()
    prepared = prepare(session, answers(backend=Backend.TPU_API, route=Route.SPOT))
    assert isinstance(prepared.outcome, Ready)
    checked = prepared.outcome.checked
    assert checked.plan.zone == ZONE and checked.plan.backend is Backend.TPU_API
    assert checked.plan.watchdog and checked.watchdog_check is not None
    assert checked.plan.run_dir == Path(session.runs) / checked.plan.run_id
    assert prepared.reasons == () and prepared.preflight is not None


def test_a_refused_look_ahead_names_the_backend_stage(world):
    ahead = look_ahead(answers("tpu7x-8", backend=Backend.TPU_API), world())
    assert isinstance(ahead, Outlook) and ahead.backend is None
    assert ahead.refusal is not None and ahead.refusal.stage is Stage.BACKEND
