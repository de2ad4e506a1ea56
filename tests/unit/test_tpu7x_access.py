"""TPU7x on Compute Engine (issue 33): allowed with --backend compute (or auto), refused on the
TPU API; the account-team note on the plan line, Review's words and the preflight; a 403 on a
TPU7x create diagnosed by its code, whatever its words."""

from __future__ import annotations

from pathlib import Path

from google.api_core import exceptions as gx

from tests.plans import launch_plan
from tests.unit.fake_rest import FakeRest, ask, reach
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.diagnose.tpu7x_access import ACCESS_NOTE, ACCESS_PAGE, access_note
from tpuwizard.core.cloud.google_errors import launchable
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.preflight import quota
from tpuwizard.core.preflight.model import Verdict
from tpuwizard.session.backend import backend_notes

ZONE7 = "us-central1-c"


def plan(**fields) -> LaunchPlan:
    base = dict(
        accelerator="tpu7x-8",
        zone=ZONE7,
        project="practice-project",
        run_id="r1",
        run_dir=Path("/tmp/r1"),
    )
    return launch_plan(**{**base, **fields})  # type: ignore[arg-type]


def test_tpu7x_is_launchable_on_compute_engine():
    tpu7x = parse_accelerator("tpu7x-8")
    assert launchable(tpu7x, "compute") is None and launchable(tpu7x, "auto") is None
    assert plan(backend="compute").problems() == []


def test_tpu7x_on_the_tpu_api_is_refused_once_saying_what_to_type():
    said = plan(backend="tpu-api").problems()
    assert len(said) == 1 and "--backend compute" in str(said[0])
    # The TPU API's own rule, for its zone lists.
    assert launchable(parse_accelerator("tpu7x-8")) is not None


def test_the_account_team_note_is_on_the_plan_line_and_in_the_preflight():
    assert any(ACCESS_NOTE in n for n in backend_notes(plan(backend="compute")))
    assert not any(
        ACCESS_NOTE in n
        for n in backend_notes(plan(accelerator="v6e-4", backend="compute", zone="us-east5-b"))
    )
    check = quota.read_quota(
        ask("tpu7x-8", ZONE7, backend=Backend.COMPUTE), reach(FakeRest())
    ).check
    assert check.verdict is Verdict.UNKNOWN and ACCESS_PAGE in check.detail
    v6e, tpu7x = catalog.parse_accelerator("v6e-4"), catalog.parse_accelerator("tpu7x-16")
    assert access_note(v6e) is None and access_note(tpu7x) == ACCESS_NOTE


def test_a_403_on_tpu7x_is_diagnosed_by_its_code_not_its_words():
    ctx = Context(
        project="p",
        zone=ZONE7,
        accelerator="tpu7x-8",
        slice=catalog.parse_accelerator("tpu7x-8"),
        route="vm",
        backend="compute",
    )
    d = diagnose(gx.Forbidden("words no page of Google's has"), ctx)
    assert d.kind == "tpu7x_access" and "unconfirmed" in d.explanation
    assert any("account team" in str(step) for step in d.next_steps)
    # The same 403 for another generation is a permission, as before.
    v6e = Context(
        project="p",
        zone="us-east5-b",
        accelerator="v6e-4",
        slice=catalog.parse_accelerator("v6e-4"),
        backend="compute",
    )
    assert diagnose(gx.Forbidden("words no page of Google's has"), v6e).kind == "permission"


def test_a_zero_tpu7x_quota_says_access_may_be_missing():
    ctx = Context(
        project="p",
        zone=ZONE7,
        accelerator="tpu7x-8",
        slice=catalog.parse_accelerator("tpu7x-8"),
        route="vm",
        backend="compute",
    )
    d = diagnose(
        gx.Forbidden("Quota 'TPUS_PER_TPU_FAMILY' exceeded.  Limit: 0.0 in region us-central1."),
        ctx,
    )
    assert d.kind == "quota" and any("no TPU7x access" in str(s) for s in d.next_steps)
