"""Remedies that are choices: the CLI names its flag, the wizard and plain mode their own controls.

Every diagnosis, plan problem and watchdog notice that names a choice is collected here and
worded for each audience: the CLI's text must name the flag, the wizard's and plain mode's no
flag at all (gcloud commands and quoted command lines for the shell stay as they are).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.plans import launch_plan
from tpuwizard.core.choices import CONTROLS, Choice, Phrase
from tpuwizard.core.cloud.backends import Transport
from tpuwizard.core.cloud.diagnose.capacity import preempted_diagnosis, stockout_diagnosis
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import local_disk_diagnosis
from tpuwizard.core.cloud.diagnose.remote import remote_diagnosis
from tpuwizard.core.cloud.iam import decide
from tpuwizard.core.errors import PlanRefused, RemoteError, Unreachable
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan, attach_problems
from tpuwizard.core.launch.plan.parts import Deadline, Reach, Resume
from tpuwizard.core.launch.workers.watchdog import account_notice, not_armed
from tpuwizard.core.plan import catalog
from tpuwizard.words.choice_words import AUDIENCES, choice_words, words

FLAG = re.compile(r"(?<![\w-])--[a-z][-a-z]*")


def cli_flags(text: str) -> list[str]:
    """The ``--flags`` in ``text`` that are not part of a command for the shell: a `quoted`
    command line, or a gcloud / ssh-keygen command up to the end of its clause."""
    text = re.sub(r"`[^`]*`", "", text)
    found = []
    for m in FLAG.finditer(text):
        before = text[: m.start()]
        start = max(before.rfind("gcloud "), before.rfind("ssh-keygen "))
        if start < 0 or re.search(r"\. |, or |; or |\), |\)\. ", before[start:]):
            found.append(m.group())
    return found


def test_the_guard_finds_flags_and_leaves_shell_commands_alone():
    assert cli_flags("Use Flex-start (--route flex) now.") == ["--route"]
    assert cli_flags("Grant it: gcloud projects add-iam-policy-binding p --role=roles/x") == []
    assert cli_flags("Run `tpuwizard launch --transport gcloud` in a terminal.") == []
    after = "gcloud projects describe p --format=x), or launch with --service-account EMAIL"
    assert cli_flags(after) == ["--service-account"]


CTX = Context(
    project="p",
    zone="us-west4-a",
    accelerator="v5litepod-4",
    slice=catalog.parse_accelerator("v5litepod-4"),
    name="n",
    route="vm",
)
ACT_AS_REFUSED = decide("p", "sa@p.iam.gserviceaccount.com", False, {"bindings": []})


def _plan(tmp_path: Path, **changes) -> LaunchPlan:
    base = dict(accelerator="v5litepod-4", zone="us-central1-a", project="p", run_id="r1")
    return launch_plan(**{**base, "run_dir": tmp_path / "runs", **changes})


def said_with_choices(tmp_path: Path) -> list[Phrase]:
    """Every remedy that names a choice, from the functions that make them."""
    import errno

    from google.api_core import exceptions as gx

    from tpuwizard.core.cloud.diagnose.failure import diagnose

    file = tmp_path / "a-file"
    file.write_text("")
    diagnoses = [
        stockout_diagnosis(CTX, "no capacity", spot=False),
        preempted_diagnosis(),
        diagnose(gx.Forbidden("Location us-west4-a is not found or access is unauthorized."), CTX),
        diagnose(gx.NotFound("zone us-west4-z not found"), CTX),
        diagnose(gx.Conflict("exists"), CTX),
        diagnose(gx.Unauthorized("no"), CTX),
        local_disk_diagnosis(OSError(errno.EACCES, "Permission denied", "/x")),
        remote_diagnosis(Unreachable("n", [0], "internal only"), "unreachable"),
        remote_diagnosis(
            RemoteError("Permission denied (publickey)"), "Permission denied (publickey)"
        ),
        remote_diagnosis(RemoteError("boom"), "boom"),
    ]
    steps = [s for d in diagnoses if d is not None for s in d.next_steps]
    problems = [
        *_plan(tmp_path, route="flex", zone="europe-west4-b").problems(),
        *_plan(tmp_path, route="spot", failover=True).problems(),
        *attach_problems(_plan(tmp_path, deadline=Deadline(watchdog=True)), ACT_AS_REFUSED),
        *attach_problems(
            _plan(tmp_path, reach=Reach(service_account="sa@p.iam.gserviceaccount.com")),
            ACT_AS_REFUSED,
        ),
        *_plan(tmp_path, run_dir=file / "runs").problems(),
        # A spot run that resumes: its folder, its script, its route and its deadline.
        *_plan(tmp_path, route="vm", resume=Resume("../x"), deadline=Deadline(5)).problems(),
        # How the workers are reached, and a kept node's idle deadline (plan_reach, plan_idle).
        *_plan(
            tmp_path, accelerator="v6e-4", backend="compute", reach=Reach(Transport.GCLOUD)
        ).problems(),
        *_plan(tmp_path, reach=Reach(internal_ips=True)).problems(),
        *_plan(
            tmp_path, route="flex", zone="us-east5-a", deadline=Deadline(idle_minutes=10.0)
        ).problems(),
        *_plan(tmp_path, deadline=Deadline(idle_minutes=10.0)).problems(),
    ]
    notices = [account_notice("p", None).detail, not_armed("p", None, "tpu.nodes.delete")]
    phrases = [s for s in [*steps, *problems, *notices] if isinstance(s, Phrase)]
    # Each source above names a choice: a source that stopped doing so is a failure here.
    assert len(phrases) >= 24, phrases
    return phrases


def test_the_cli_names_the_flag_and_the_wizard_and_plain_mode_name_no_flag(tmp_path):
    for said in said_with_choices(tmp_path):
        cli = words(said, "cli")
        assert "{" not in cli, cli
        for choice in said.choices:
            if choice.control not in ("practice",):
                assert choice_words(choice, "cli") in cli
        assert cli_flags(cli) or "tpuwizard --sandbox" in cli, cli
        for audience in ("wizard", "plain"):
            text = words(said, audience)
            assert "{" not in text and cli_flags(text) == [], (audience, text)


@pytest.mark.parametrize(
    ("choice", "cli", "wizard", "plain"),
    [
        (
            Choice("route", "flex"),
            "--route flex",
            '"Flex-start, queued" on the Route step',
            "Route question",
        ),
        (
            Choice("route", "spot"),
            "--route spot",
            '"TPU VM, spot" on the Route step',
            "Route question",
        ),
        (Choice("failover"), "--failover", '"Try <zone>" buttons', "Zone question"),
        (Choice("zone", "v5litepod-4"), "--zone ZONE", "Zones step", "Zone question"),
        (Choice("name"), "--name NAME", '"Name" field on Review', "Name question"),
        (
            Choice("watchdog", "off"),
            "--no-watchdog",
            'switch "Watchdog" OFF on Review',
            "Watchdog question",
        ),
        (Choice("practice"), "tpuwizard --sandbox", '"Practice mode" ON', "--sandbox`"),
    ],
)
def test_each_choice_names_the_control_its_front_end_shows(choice, cli, wizard, plain):
    assert cli in choice_words(choice, "cli")
    assert wizard in choice_words(choice, "wizard")
    assert plain in choice_words(choice, "plain")


def test_the_wizards_words_are_the_labels_its_screens_show():
    from tpuwizard.core.plan.routes import route_table

    for info in route_table():
        if info.key != "notebook":
            assert f'"{info.title}"' in choice_words(Choice("route", info.key), "wizard")
    review = Path("tpuwizard/tui/screens/review.py").read_text()
    assert '"Name"' in review and "Watchdog {" in review
    assert 'Button(f"Try {zone}"' in Path("tpuwizard/tui/screens/summary.py").read_text()


def test_every_control_has_words_for_every_audience():
    values = {"route": "vm", "external_ips": "on", "transport": "gcloud", "watchdog": "off"}
    for control in CONTROLS:
        for audience in AUDIENCES:
            assert choice_words(Choice(control, values.get(control, "")), audience).strip()
    with pytest.raises(ValueError):
        Choice("colour")
    with pytest.raises(ValueError):
        Phrase("names nothing", (Choice("name"),))


def test_a_refused_plan_is_worded_per_audience(tmp_path):
    from tpuwizard.words.event_text import refusal_text

    with pytest.raises(PlanRefused) as caught:
        _plan(tmp_path, route="flex", zone="europe-west4-b").validate()
    assert "--route spot or --route vm" in refusal_text(caught.value, "cli")
    assert '"TPU VM, spot" or "TPU VM, on demand" on the Route step' in refusal_text(
        caught.value, "wizard"
    )


def test_launch_json_keeps_next_steps_as_cli_strings():
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.words.event_text import json_event

    d = stockout_diagnosis(CTX, "no capacity", spot=False)
    line = json_event(ev.Failed("create", d))
    assert all(isinstance(step, str) for step in line["diagnosis"]["next_steps"])
    assert any("--route flex" in step for step in line["diagnosis"]["next_steps"])
    assert line["event"] == "failed"


def test_a_failed_launchs_json_lines_keep_their_keys_and_order():
    """The events carry a Diagnosis; ``launch --json`` still prints the diagnosis as the object
    it always was: kind, title, explanation, next_steps (CLI words), alternatives, in order."""
    import json

    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.words.event_text import json_event

    d = stockout_diagnosis(CTX, "no capacity", spot=False)
    steps = [words(step, "cli") for step in d.next_steps]
    diagnosis = {
        "kind": "stockout",
        "title": d.title,
        "explanation": d.explanation,
        "next_steps": steps,
        "alternatives": d.alternatives,
    }
    assert d.alternatives and steps  # the object below is not an empty one
    failed = {"event": "failed", "stage": "create", "diagnosis": diagnosis}
    assert json.dumps(json_event(ev.Failed("create", d))) == json.dumps(failed)
    torn = {
        "event": "teardown_failed",
        "name": "n",
        "kind": "node",
        "diagnosis": diagnosis,
        "zone": "us-central1-a",
        "seen": True,  # it was seen to exist (False: its create's answer was lost)
        "practice": False,  # a real launch's: its words say it may still bill
    }
    assert json.dumps(json_event(ev.TeardownFailed("n", "node", d, "us-central1-a"))) == json.dumps(
        torn
    )
