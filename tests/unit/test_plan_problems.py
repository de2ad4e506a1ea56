"""LaunchPlan.problems(): every rule in one place, used as the user types and by the launch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.plans import launch_plan
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan, attach_problems
from tpuwizard.core.launch.plan.parts import Deadline, Reach, Workload
from tpuwizard.words.choice_words import all_words


def plan(tmp_path: Path, **changes) -> LaunchPlan:
    fields: dict[str, Any] = {
        "accelerator": "v5litepod-4",
        "zone": "us-central1-a",
        "project": "tpuwizard-practice",
        "run_id": "20261130-000000-abcd",
        "run_dir": tmp_path / "runs",
    }
    fields.update(changes)
    return launch_plan(**fields)


def test_a_good_plan_has_no_problems(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("print('hi')\n")
    good = plan(
        tmp_path,
        workload=Workload(script=script, fetch=("out/*.json", "report.txt")),
        deadline=Deadline(30),
    )
    assert good.problems() == []
    assert good.validate().chips == 4


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"workload": Workload(fetch=("/etc/passwd",))}, "relative"),
        ({"workload": Workload(fetch=("../secrets/*",))}, "relative"),
        ({"workload": Workload(fetch=("a/../../b",))}, "relative"),
        ({"route": "spot", "name": "a" + "b" * 60}, "60 characters"),
        ({"route": "flex", "name": "a" + "b" * 62}, "60 characters"),
        ({"project": "Not A Project"}, "project"),
        ({"project": "tpuwizard-practice\n"}, "project"),
        ({"name": "x\n"}, "name"),
        ({"zone": "mars-central1-a; rm -rf /"}, "zone"),
        ({"deadline": Deadline(-1.0)}, "deadline"),
        ({"deadline": Deadline(20000.0)}, "deadline"),
        ({"deadline": Deadline(watchdog=True), "route": "flex"}, "watchdog"),
        ({"route": "flex", "zone": "us-east5-a"}, "only in us-west4-a, us-central1-a"),
        ({"route": "flex", "accelerator": "v5litepod-16"}, "only in us-west4-a"),
        ({"route": "flex", "accelerator": "v4-8"}, "in no zone"),
        ({"reach": Reach(service_account="runner")}, "not a service account email"),
        ({"workload": Workload(script=Path("/nonexistent/main.py"))}, "does not exist"),
    ],
)
def test_each_rule_is_a_problem_with_a_message(tmp_path, changes, words):
    problems = all_words(plan(tmp_path, **changes).problems(), "cli")
    assert problems, f"{changes} was accepted"
    assert any(words.lower() in p.lower() for p in problems), problems
    with pytest.raises(BadInput):
        plan(tmp_path, **changes).validate()


def test_an_unsafe_script_name_is_refused_before_anything_is_created(tmp_path):
    script = tmp_path / "my script;rm.py"
    script.write_text("print('hi')\n")
    problems = all_words(plan(tmp_path, workload=Workload(script=script)).problems(), "cli")
    assert any("letters, digits" in p for p in problems)


def test_every_problem_is_reported_at_once(tmp_path):
    problems = plan(
        tmp_path, workload=Workload(fetch=("/abs",)), route="spot", name="a" * 62
    ).problems()
    assert len(problems) >= 2


def test_flex_start_where_google_offers_it_is_no_problem(tmp_path):
    for accelerator, zone in [("v6e-8", "us-east5-a"), ("v5litepod-16", "us-west4-a")]:
        assert plan(tmp_path, accelerator=accelerator, zone=zone, route="flex").problems() == []


@pytest.mark.parametrize("route", ["spot", "flex"])
def test_failover_is_refused_where_it_could_never_act(tmp_path, route):

    plan = launch_plan(
        "v5litepod-4", "us-central1-a", "my-project", "r1", tmp_path, route=route, failover=True
    )
    assert any(
        "--failover is for creates that fail fast" in p for p in all_words(plan.problems(), "cli")
    )
    assert not launch_plan(
        "v5litepod-4", "us-central1-a", "my-project", "r1", tmp_path, failover=True
    ).problems()


def test_a_long_wait_is_reported_every_minute_not_only_on_change(monkeypatch):
    from tpuwizard.core.cloud import polling
    from tpuwizard.core.errors import WaitTimedOut

    class Clock:  # the wait's own time, so a busy machine cannot change what is reported
        now = 0.0

        def monotonic(self) -> float:
            return self.now

        def sleep(self, seconds: float) -> None:
            self.now += seconds

    monkeypatch.setattr(polling, "time", Clock())
    waiting = type("Q", (), {"state": "WAITING_FOR_RESOURCES"})()
    seen: list[str] = []
    with pytest.raises(WaitTimedOut):
        polling.poll_until(
            "q", lambda: waiting, "ACTIVE", lambda *_: None, seen.append, 300, 10, None
        )
    # At 0 s (the first state), then about every 60 s of the 300 s wait (polled every 10 s).
    assert len(seen) >= 5 and set(seen) == {"WAITING_FOR_RESOURCES"}


def test_a_plan_attaching_an_account_the_check_says_you_may_not_attach_is_refused(tmp_path):
    from tpuwizard.core.cloud.iam import decide

    account = "123-compute@developer.gserviceaccount.com"
    no_act_as = decide("my-project", account, False, {"bindings": []})
    no_delete = decide("my-project", account, True, {"bindings": []})  # actAs is fine
    assert no_act_as.may_attach is False and no_delete.may_attach is True

    def problems(check, **changes) -> list:
        """The plan's rules and what the check before create says Google would refuse."""
        asked = plan(tmp_path, **changes)
        return asked.problems() + attach_problems(asked, check)

    refused = all_words(problems(no_act_as, deadline=Deadline(watchdog=True)), "cli")
    assert len(refused) == 1 and "you may not attach its service account" in refused[0]
    assert "--no-watchdog" in refused[0] and "roles/iam.serviceAccountUser" in refused[0]
    # Off, nothing is attached: the create is safe and the plan may run.
    assert problems(no_act_as, deadline=Deadline(watchdog=False)) == []
    # A named account is attached whatever the watchdog: refused too, without "switch it off".
    named = problems(no_act_as, reach=Reach(service_account=account))
    assert len(named) == 1 and "--no-watchdog" not in all_words(named, "cli")[0]
    # The account may not delete, but may be attached: the create is safe (the watchdog is
    # then not armed after create, and says so).
    assert problems(no_delete, deadline=Deadline(watchdog=True)) == []
    # A finding, not the plan's: the plan alone is refused nothing.
    assert plan(tmp_path, deadline=Deadline(watchdog=True)).problems() == []


@pytest.mark.parametrize("name", ["-x.py", "--help.py", "café.py", "a b.py"])
def test_a_script_name_the_upload_would_refuse_is_refused_before_create(tmp_path, name):
    # '-x.py' once passed here and failed in the upload's own path rule (safe_relative) after
    # the TPU was created, bootstrapped and verified: now both hold the same rule.
    from tpuwizard.core.remote.transports import safe_relative

    script = tmp_path / name
    script.write_text("print('hi')\n")
    problems = all_words(plan(tmp_path, workload=Workload(script=script)).problems(), "cli")
    assert len(problems) == 1 and "rename the file" in problems[0], problems
    with pytest.raises(BadInput):
        safe_relative(f".tpuwizard/runs/r1/{name}")  # what the upload would have said, late


def test_every_name_problems_accepts_the_upload_accepts_too(tmp_path):
    from tpuwizard.core.remote.transports import safe_relative

    for name in ["main.py", "_x.py", "train-2.py", "a.b.py", "9.py"]:
        script = tmp_path / name
        script.write_text("")
        assert plan(tmp_path, workload=Workload(script=script)).problems() == []
        assert safe_relative(f".tpuwizard/runs/r1/{name}")


def test_a_linked_script_is_followed_and_a_dangling_link_is_named(tmp_path):
    target = tmp_path / "experiments" / "v3.py"
    target.parent.mkdir()
    target.write_text("print('v3')\n")
    link = tmp_path / "train.py"
    link.symlink_to(target)
    assert (
        plan(tmp_path, workload=Workload(script=link)).problems() == []
    )  # its target's content goes, as train.py
    target.unlink()
    problems = all_words(plan(tmp_path, workload=Workload(script=link)).problems(), "cli")
    assert len(problems) == 1 and f"is a link to {target}, which does not exist" in problems[0]


def test_script_arguments_without_a_script_are_a_problem(tmp_path):
    problems = all_words(
        plan(tmp_path, workload=Workload(script_args=("--lr", "3e-4"))).problems(), "cli"
    )
    assert len(problems) == 1 and "no script is given: add --script FILE" in problems[0]
    assert "'--lr 3e-4'" in problems[0]
    script = tmp_path / "main.py"
    script.write_text("")
    assert (
        plan(tmp_path, workload=Workload(script=script, script_args=("--lr", "3e-4"))).problems()
        == []
    )


@pytest.mark.parametrize(
    ("project", "shown"),
    [
        ("$(touch x)", "'$(touch x)'"),
        ("my-project\nrm -rf ~", "'my-project\\nrm -rf ~'"),
        ("it's-mine", "'it's-mine'"),
        ("a" * 300, "'" + "a" * 40 + "... (300 characters)'"),
    ],
)
def test_a_bad_project_id_is_named_safely_in_its_message(tmp_path, project, shown):
    problems = all_words(plan(tmp_path, project=project).problems(), "cli")
    assert len(problems) == 1 and problems[0].startswith(f"{shown} is not a valid project id")
    assert "\n" not in problems[0]


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        # Issue 55: the README's first launch typed in the clone: the folder it looked in, the fix.
        ("train.py", "Script train.py is not there: {here} has no train.py. Run tpuwizard from "
         "the folder that holds your script (cd to it first), or give the script's full path."),
        ("course/train.py", "{here}/course has no train.py"),
        ("nowhere/train.py", "{here}/nowhere does not exist"),
        ("course", "Script course is a folder, not a file: name the Python file in it to run."),
    ],
)  # fmt: skip
def test_a_script_that_is_not_there_names_where_it_was_looked_for(
    tmp_path, monkeypatch, asked, said
):
    from tpuwizard.core.launch.plan.workload_rules import script_problems

    (tmp_path / "course").mkdir()
    monkeypatch.chdir(tmp_path)
    assert said.format(here=tmp_path) in " ".join(script_problems(Path(asked)))
