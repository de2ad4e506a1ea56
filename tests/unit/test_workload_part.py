"""The Workload part (core/launch/plan/parts.py): carried whole from the answers to the plan and
the workers, refused by its own rules (workload_rules.py), and kept with a kept node as its own
record, read back from old ledgers too."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from tests.fakes import MemoryCloud
from tests.plans import launch_plan
from tests.unit.test_launch_safety import make_runtime
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.kept.record import SETTINGS_FIELD
from tpuwizard.core.launch.kept.settings import kept_settings, replacement_answers
from tpuwizard.core.launch.lifecycle.part_inputs import worker_input
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan, plan_for_run
from tpuwizard.core.launch.plan.packages import PackageSpec
from tpuwizard.core.launch.plan.parts import Where, Workload
from tpuwizard.core.launch.plan.workload_rules import workload_problems
from tpuwizard.core.launch.records.ledger import Entry, Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.plan.jax_versions import TABLE
from tpuwizard.words.choice_words import all_words

EINOPS = PackageSpec("einops", "--with")


def script_in(folder: Path, name: str = "train.py") -> Path:
    (folder / "job").mkdir(exist_ok=True)
    script = folder / "job" / name
    script.write_text("print('hi')\n")
    return script


def test_the_workload_reaches_the_plan_and_the_workers_whole(tmp_path):
    workload = Workload(
        script_in(tmp_path),
        ("--lr", "3e-4"),
        ("out/*.json",),
        (EINOPS,),
        TABLE[0].version,
        precision=True,
        trace=True,
    )
    asked = LaunchAnswers(
        Where(parse_accelerator("v5litepod-4"), "us-central1-a"), workload=workload
    )
    plan = plan_for_run("r1", tmp_path / "runs" / "r1", asked, Backend.TPU_API)
    assert plan.workload is workload
    assert worker_input(plan, make_runtime(tmp_path, MemoryCloud())).workload is workload


def test_no_workload_value_is_also_a_flat_field_of_the_answers_or_the_plan():
    parted = {f.name for f in fields(Workload)}
    for whole in (LaunchAnswers, LaunchPlan):
        assert parted.isdisjoint(f.name for f in fields(whole)), whole


def test_a_workload_of_a_script_beside_its_files_packages_and_a_listed_jax_has_no_problem(
    tmp_path,
):
    script = script_in(tmp_path)
    fetch = ("out/*.json", "report.txt")
    for jax in (None, TABLE[0].version, TABLE[-1].version):
        assert workload_problems(Workload(script, ("--lr", "3e-4"), fetch, (EINOPS,), jax)) == []
    assert workload_problems(Workload()) == []  # the verifier alone


@pytest.mark.parametrize(
    ("asked", "words"),
    [
        ({"script": Path("/nonexistent/main.py")}, "is not there"),
        ({"script": "bad name"}, "rename the file"),
        ({"script_args": ("--lr", "3e-4")}, "no script is given: add --script FILE"),
        ({"fetch": ("/etc/passwd",)}, "relative to the script's folder"),
        ({"fetch": ("a/../../b",)}, "without '..'"),
        ({"fetch": (" ",)}, "relative to the script's folder"),
        ({"packages": (PackageSpec("jax==0.4.1", "--with"),)}, "names jax"),
        ({"packages": (PackageSpec("-r other.txt", "--with"),)}, "not a package requirement"),
        ({"jax": "0.13.0"}, "not in tpuwizard's table"),
    ],
)
def test_each_workload_rule_is_a_problem_that_says_what_to_do(tmp_path, asked, words):
    if asked.get("script") == "bad name":
        asked = {"script": script_in(tmp_path, "my script;rm.py")}
    problems = all_words(workload_problems(Workload(**asked)), "cli")
    assert len(problems) == 1 and words in problems[0], problems


def test_the_plan_refuses_what_the_workload_s_rules_refuse(tmp_path):
    plan = launch_plan(
        "v5litepod-4",
        "us-central1-a",
        "p",
        "r1",
        tmp_path / "runs" / "r1",
        workload=Workload(fetch=("../x",), jax="0.13.0"),
    )
    (fetch, jax) = all_words(workload_problems(plan.workload), "cli")
    assert {fetch, jax} <= set(all_words(plan.problems(), "cli"))


KEPT = Resource("node", "p", "us-central1-a", "dev", "v5litepod-1", "r1", "vm", "dev")


def replacement_workload(settings: dict[str, object]) -> Workload:
    return replacement_answers(Entry(KEPT, "kept", 1, 1, {SETTINGS_FIELD: settings})).workload


def test_the_kept_record_holds_the_node_s_venv_and_reads_it_back(tmp_path):
    workload = Workload(script_in(tmp_path), ("a",), ("out/*",), (EINOPS,), "0.11.2", True, True)
    assert workload.record() == {"packages": [["einops", "--with"]], "jax": "0.11.2"}
    plan = launch_plan("v5litepod-1", "us-central1-a", "p", "r1", tmp_path, workload=workload)
    # The script and its files are each run's own: a replacement node gets the venv alone.
    assert replacement_workload(kept_settings(plan)) == Workload(packages=(EINOPS,), jax="0.11.2")


@pytest.mark.parametrize(
    ("settings", "workload"),
    [
        ({}, Workload()),  # a record from before settings were recorded: the defaults
        ({"packages": [], "jax": None}, Workload()),
        ({"packages": None, "jax": 7}, Workload()),  # not what we write: the defaults
        # What versions before the part wrote, beside the other settings (the same keys).
        (
            {
                "zones": ["us-central1-a"],
                "failover": False,
                "fan_out": False,
                "watchdog": True,
                "idle_minutes": 30.0,
                "max_run_minutes": 120.0,
                "internal_ips": False,
                "service_account": None,
                "queue_wait_minutes": None,
                "packages": [["einops", "--with"], ["optax", "requirements.txt line 2"]],
                "jax": "0.11.2",
            },
            Workload(
                packages=(EINOPS, PackageSpec("optax", "requirements.txt line 2")), jax="0.11.2"
            ),
        ),
    ],
)
def test_the_workload_is_read_back_from_old_kept_records(settings, workload):
    assert Workload.from_record(settings) == workload
    assert replacement_workload(settings) == workload
