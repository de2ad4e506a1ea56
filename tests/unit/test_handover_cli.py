"""``tpuwizard export`` on the command line: what it writes, and bad input (exit 2, nothing
written). It makes no cloud call in either mode: no client is imported, no sandbox started."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.conftest import clean_env
from tpuwizard.cli import main


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
    assert not (here / "pwned").exists() and not (here / "tpuwizard_job.sh").exists()


def test_export_writes_the_target_and_the_folder_it_ships(here: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "export", "--to", "jobset", "--accelerator", "v5p-16", "--slices", "2",
            "--script", "train.py", "--with", "optax", "--max-run", "60", "--out", "js.yaml",
            "--", "--lr", "3e-4; echo no",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    loaded = yaml.safe_load((here / "js.yaml").read_text())
    assert loaded["spec"]["replicatedJobs"][0]["replicas"] == 2
    job = (here / "tpuwizard_job.sh").read_text()
    assert "train.py --lr '3e-4; echo no'" in job and "optax" in job
    assert (here / "tpu_verify.py").read_text().startswith(('"""', "#"))
    assert "nothing was created" in result.stderr


def test_skypilot_refuses_what_its_tpu_path_cannot_make(here: Path) -> None:
    result = CliRunner().invoke(main, ["export", "--to", "skypilot", "--accelerator", "tpu7x-16"])
    assert result.exit_code == 2
    assert "Use --to xpk or --to jobset" in result.output
    assert not (here / "tpuwizard_job.sh").exists()


def test_fit_names_the_smallest_larger_slice_and_export(here: Path) -> None:
    result = CliRunner().invoke(main, ["fit", "3000"])
    assert result.exit_code == 0, result.output
    words = " ".join(result.stdout.split())
    assert "No listed slice holds 3000.0 GiB" in words
    assert (
        "The smallest single slice that holds 3000.0 GiB sharded is tpu7x-64 (32 chips, 8 VMs)"
        in words
    )
    assert "tpuwizard launch can make it (Compute Engine)" in words
    assert "tpuwizard export --accelerator tpu7x-64" in words
    assert "add data-parallel copies, not room" in words
