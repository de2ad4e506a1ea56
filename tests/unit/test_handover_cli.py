"""``tpuwizard export`` on the command line: what it writes, and bad input (exit 2, nothing
written). It makes no cloud call in either mode: no client is imported, no sandbox started."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.conftest import clean_env
from tpuwizard.cli import main
from tpuwizard.core.plan import jax_versions


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    return tmp_path


def export(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tpuwizard", "export", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(TPUWIZARD_HOME=str(cwd / "state")),
    )


def test_bad_input_exits_2_says_what_to_type_and_writes_nothing(here: Path) -> None:
    bad = export("--accelerator", "v5e-16", "--script", "train.py", cwd=here)
    assert bad.returncode == 2, bad.stderr
    assert "Did you mean v5litepod-16?" in bad.stderr and "Traceback" not in bad.stderr
    assert sorted(p.name for p in here.iterdir()) == ["train.py"]


def test_a_hostile_script_name_is_refused_before_anything_is_written(here: Path) -> None:
    hostile = here / "$(touch pwned);x.py"
    hostile.write_text("print('hi')\n")
    result = CliRunner().invoke(
        main, ["export", "--accelerator", "v6e-16", "--script", str(hostile)]
    )
    assert result.exit_code == 2, result.output
    assert "Script name" in result.output
    assert sorted(p.name for p in here.iterdir()) == sorted([hostile.name, "train.py"])


def test_export_writes_the_target_and_the_folder_it_ships(here: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "export", "--to", "jobset", "--accelerator", "v5p-16", "--slices", "2",
            "--script", "train.py", "--with", "optax", "--max-run", "60", "--out", "gke",
            "--", "--lr", "3e-4; echo no",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # Issue 55.9: every file in the export's own folder, none beside the script.
    assert sorted(p.name for p in here.iterdir()) == ["gke", "train.py"]
    loaded = yaml.safe_load((here / "gke" / "tpuwizard-run.jobset.yaml").read_text())
    assert loaded["spec"]["replicatedJobs"][0]["replicas"] == 2
    job = (here / "gke" / "tpuwizard_job.sh").read_text()
    assert "train.py --lr '3e-4; echo no'" in job and "optax" in job
    assert " -u gke/tpu_verify.py " in job  # found from the folder shipped
    assert (here / "gke" / "tpu_verify.py").read_text().startswith(('"""', "#"))
    assert " ".join(result.stderr.split()) == (
        "Wrote gke/: tpuwizard-run.jobset.yaml (the JobSet YAML), tpu_verify.py (the "
        "verifier), tpuwizard_job.sh (the job every VM runs). Nothing was created; read the "
        "header of tpuwizard-run.jobset.yaml for the idle cost and teardown."
    )
    assert result.stdout == ""  # --out holds the text


def test_skypilot_refuses_what_its_tpu_path_cannot_make(here: Path) -> None:
    result = CliRunner().invoke(main, ["export", "--to", "skypilot", "--accelerator", "tpu7x-16"])
    assert result.exit_code == 2
    assert "Use --to xpk or --to jobset" in result.output
    assert sorted(p.name for p in here.iterdir()) == ["train.py"]


def test_fit_names_the_smallest_larger_slice_and_export(here: Path) -> None:
    result = CliRunner().invoke(main, ["fit", "3100"])
    assert result.exit_code == 0, result.output
    words = " ".join(result.stdout.split())
    assert "None of the slices above holds 3100.0 GiB sharded" in words
    assert (
        "The smallest single slice that does is tpu7x-64 (32 chips, 8 VMs, not in the table "
        "above)" in words
    )
    assert "tpuwizard launch --accelerator tpu7x-64 makes it (Compute Engine)" in words
    assert "export" not in words and "not room" not in words  # one answer (issue 55)


def test_json_holds_the_plan_the_files_the_idle_bills_and_the_teardown(here: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "export", "--accelerator", "v5p-16", "--slices", "2", "--route", "spot",
            "--script", "train.py", "--max-restarts", "1", "--json", "--", "--lr", "0.1",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # stdout is the JSON document alone
    plan = document["plan"]
    assert (plan["accelerator"], plan["slices"], plan["route"]) == ("v5p-16", 2, "spot")
    assert (plan["topology"], plan["vms_per_slice"], plan["processes"]) == ("2x2x2", 2, 4)
    assert plan["script_args"] == ["--lr", "0.1"] and plan["max_restarts"] == 1
    assert plan["jax"] == jax_versions.DEFAULT.version  # the table's default, said
    assert [f["path"] for f in document["files"]] == [
        "export-xpk/tpu_verify.py",
        "export-xpk/tpuwizard_job.sh",
        "export-xpk/tpuwizard-run-xpk.sh",
    ]
    assert all(Path(f["path"]).is_file() for f in document["files"])
    # The same bills and lines as the text's header, as data.
    text = document["text"]
    bills = document["idle_bills"]
    assert [b["what"] for b in bills][1] == "the GKE cluster's management fee"
    assert all(f"  - {b['what']}:" in text for b in bills)
    assert document["idle_usd_per_hour"] == round(sum(b["usd_per_hour"] for b in bills), 4)
    assert document["idle_price_complete"] is True
    assert document["teardown"][1].startswith("xpk cluster delete --cluster tpuwizard")
    assert all(f"  {line}" in text for line in document["teardown"])
    assert document["applied"] is False and "no verified teardown" in document["unguarded"]


def test_json_with_out_names_the_file_instead_of_holding_its_text(here: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["export", "--to", "skypilot", "--accelerator", "v6e-8", "--out", "sky", "--json"],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert "text" not in document
    task = {"path": "sky/tpuwizard-run.sky.yaml", "what": "the SkyPilot task"}
    assert document["files"][-1] == task
    assert document["teardown"][0] == "sky down tpuwizard-run"
    assert len(document["idle_bills"]) == 1  # no cluster: the slice alone bills


def test_skypilots_launch_line_names_the_task_it_wrote(here: Path) -> None:
    """Issue 55.9: `sky launch ... tpuwizard-run.sky.yaml` named a file written only with
    --out. Without --out the task is in export-skypilot/, printed too, and its header names
    every file written."""
    result = CliRunner().invoke(
        main, ["export", "--to", "skypilot", "--accelerator", "v6e-8", "--script", "train.py"]
    )
    assert result.exit_code == 0, result.output
    task = (here / "export-skypilot" / "tpuwizard-run.sky.yaml").read_text()
    assert result.stdout == task
    line = "#   sky launch --down -c tpuwizard-run export-skypilot/tpuwizard-run.sky.yaml\n"
    assert line in task
    assert (
        "# This export wrote three files into export-skypilot/: tpuwizard-run.sky.yaml (this "
        "task), tpu_verify.py (the verifier) and tpuwizard_job.sh (the job every VM runs).\n"
    ) in task
    assert sorted(p.name for p in (here / "export-skypilot").iterdir()) == [
        "tpu_verify.py",
        "tpuwizard-run.sky.yaml",
        "tpuwizard_job.sh",
    ]
    assert yaml.safe_load(task)["run"] == "bash export-skypilot/tpuwizard_job.sh"


def test_out_naming_a_file_is_refused_saying_the_folder_to_give(here: Path) -> None:
    """--out named the target's file before issue 55.9; such a name is refused (exit 2) with
    the folder to give, nothing written."""
    result = CliRunner().invoke(main, ["export", "--accelerator", "v6e-8", "--out", "gke.sh"])
    assert result.exit_code == 2, result.output
    words = " ".join(result.output.split())
    assert "--out gke.sh names a file; --out names the folder" in words
    assert "Give a folder, e.g. --out gke, or leave --out out for export-xpk." in words
    assert sorted(p.name for p in here.iterdir()) == ["train.py"]


@pytest.mark.parametrize(
    "args, words",
    [
        (["--accelerator", "v9-8"], "not a TPU accelerator type"),  # the core's refusal
        (["--to", "skypilot", "--accelerator", "tpu7x-16"], "Use --to xpk"),
        (["--accelerator", "v5p-16", "--to", "helm"], "'helm' is not one of"),  # click's own
        (["--accelerator", "v5p-16", "--max-run", "soon"], "'soon' is not a finite number"),
        (["--accelerator", "v5p-16", "--jax", "0.13.0"], "not in tpuwizard's table"),
    ],
)
def test_json_refusals_exit_2_with_a_json_error_and_write_nothing(
    here: Path, args: list[str], words: str
) -> None:
    result = CliRunner().invoke(main, ["export", *args, "--json"])
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "bad_input" and words in error["message"], error
    assert words in result.stderr  # the words stay where a person reads them
    assert sorted(p.name for p in here.iterdir()) == ["train.py"]


def test_gcluster_json_writes_the_commands_and_the_jobset_beside_them(here: Path) -> None:
    """``export --to gcluster --json`` as a user runs it: a process of its own, no gcloud, no
    cloud call; four files, the JobSet beside the commands, and the teardown as data."""
    result = export(
        "--to", "gcluster", "--accelerator", "tpu7x-16", "--script", "train.py",
        "--max-restarts", "2", "--json", cwd=here,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["target"] == "gcluster" and document["applied"] is False
    assert [(f["path"], f["what"]) for f in document["files"]] == [
        ("export-gcluster/tpu_verify.py", "the verifier"),
        ("export-gcluster/tpuwizard_job.sh", "the job every VM runs"),
        ("export-gcluster/tpuwizard-run-gcluster.jobset.yaml", "the JobSet it stands for"),
        ("export-gcluster/tpuwizard-run-gcluster.sh", "the Cluster Toolkit commands"),
    ]
    commands = (here / "export-gcluster" / "tpuwizard-run-gcluster.sh").read_text()
    assert document["text"] == commands
    submit = [line for line in commands.splitlines() if line.startswith("gcluster job submit")]
    assert len(submit) == 2 and submit[0].endswith("--dry-run-out " + (
        "export-gcluster/tpuwizard-run-gcluster-dry-run.yaml"
    ))  # fmt: skip
    assert "--compute-type tpu7x-standard-4t --topology 2x2x2" in submit[1]
    assert "--restarts 2" in submit[1] and "--gke-disable-parallel-containers" in submit[1]
    jobset = yaml.safe_load(
        (here / "export-gcluster" / "tpuwizard-run-gcluster.jobset.yaml").read_text()
    )
    assert jobset["spec"]["failurePolicy"]["maxRestarts"] == 2
    assert document["teardown"][0] == (
        "gcluster job cancel tpuwizard-run --cluster tpuwizard --location us-central1-c"
    )
    assert all(f"  {line}" in commands for line in document["teardown"])
