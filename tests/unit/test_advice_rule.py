"""Advice never names an option the same plan refuses (core/launch/plan/advice.py): one rule, the
plan's own, asked for every choice a diagnosis suggests. And ``--internal-ips`` on Compute
Engine, which nothing here can reach, is refused before create (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plans import changed, launch_plan
from tests.unit.test_cli_bad_input import _no_sandbox, here, refused  # noqa: F401 (fixtures)
from tpuwizard.core.choices import Choice, Phrase
from tpuwizard.core.cloud.backends import Transport
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.errors import CreateFailed, RemoteError, Unreachable
from tpuwizard.core.launch.plan.advice import possible
from tpuwizard.core.launch.plan.advice import refused as refuses
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.parts import Reach


def plan(**fields) -> LaunchPlan:
    base = dict(
        accelerator="v6e-4",
        zone="us-east5-a",
        project="practice-project",
        run_id="r1",
        run_dir=Path("/tmp/r1"),
    )
    return launch_plan(**{**base, **fields})


PLANS = {
    "tpu-api, ssh": plan(),
    "tpu-api, internal, gcloud": plan(reach=Reach(Transport.GCLOUD, internal_ips=True)),
    "tpu-api, spot": plan(route="spot"),
    "compute": plan(backend="compute"),
    "compute, flex": plan(backend="compute", route="flex"),
    "compute, v5p": plan(backend="compute", accelerator="v5p-8"),
}


def capacity() -> Exception:
    from tpuwizard.core.cloud.compute.errors import OperationError

    return CreateFailed(OperationError("op", [{"code": "ZONE_RESOURCE_POOL_EXHAUSTED"}]))


# Every failure whose diagnosis names a choice of the plan (a transport, external addresses, a
# backend, a route).
ERRORS = {
    "unreachable workers": lambda: Unreachable("n", [0], "no external address"),
    "publickey": lambda: RemoteError("Permission denied (publickey)."),
    "a remote command": lambda: RemoteError("ssh: exit 255"),
    "stockout": capacity,
}


def named_choices(d) -> list[Choice]:
    return [c for s in d.next_steps if isinstance(s, Phrase) for c in s.choices]


@pytest.mark.parametrize("error", list(ERRORS))
@pytest.mark.parametrize("which", list(PLANS))
def test_no_diagnosis_names_a_choice_the_plan_would_refuse(which, error):
    p = PLANS[which]
    assert p.problems() == [], which  # a plan that ran
    ctx = Context(
        zone=p.zone,
        accelerator=p.accelerator,
        route=p.route,
        backend=p.backend,
        slice=p.slice,
    )
    d = possible(diagnose(ERRORS[error](), ctx), p)
    for choice in named_choices(d):
        assert not refuses(p, choice), (which, error, choice)


def test_on_compute_engine_iap_and_gcloud_s_ssh_are_not_advised():
    p = PLANS["compute"]
    full = diagnose(Unreachable("n", [0], "no external address"), Context(backend="compute"))
    assert Choice("external_ips", "off") in named_choices(full)  # what the rule takes out
    kept = named_choices(possible(full, p))
    assert Choice("external_ips", "off") not in kept and Choice("external_ips", "on") in kept
    gcloud = named_choices(possible(diagnose(RemoteError("Permission denied (publickey)")), p))
    assert Choice("transport", "gcloud") not in gcloud
    # The TPU API's plan keeps them: there they are what reaches the VMs.
    assert Choice("external_ips", "off") in named_choices(possible(full, PLANS["tpu-api, ssh"]))


@pytest.mark.usefixtures("here")
def test_internal_ips_on_compute_engine_are_refused_before_create(home):
    words = refused(
        home,
        "launch", "--sandbox", "--accelerator", "v6e-4", "--zone", "us-east5-a",
        "--backend", "compute", "--internal-ips",
    )  # fmt: skip
    assert "no IAP transport for Compute Engine" in words
    assert "without --internal-ips" in words and "--backend tpu-api" in words


def test_the_refusal_names_no_backend_that_cannot_make_the_type():
    p = plan(
        backend="compute",
        accelerator="tpu7x-8",
        zone="us-central1-c",
        reach=Reach(internal_ips=True),
    )
    (problem,) = [x for x in p.problems() if isinstance(x, Phrase)]
    assert Choice("backend", "tpu-api") not in problem.choices
    v6e = plan(backend="compute", reach=Reach(internal_ips=True))
    (said,) = v6e.problems()
    assert isinstance(said, Phrase)
    problem = said
    # Its two ways are taken: external addresses; or the TPU API with gcloud's IAP, together.
    assert problem.choices[0] == Choice("external_ips", "on")
    assert not refuses(v6e, problem.choices[0])
    assert (
        changed(v6e, backend="tpu-api", reach=Reach(Transport.GCLOUD, internal_ips=True)).problems()
        == []
    )
