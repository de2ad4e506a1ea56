"""`receipt check` on the course's lesson-one report: main.py of "Move your experiment to a
TPU" (tests/data/course/, saved as the lesson prints it) run as the course runs it, on JAX's CPU
(COURSE_EXPECT_PLATFORM=cpu JAX_PLATFORMS=cpu), its output tee'd to tpu-report.txt. The course's
own checks accept it; --expect tpu rejects it and says the platform check failed; a changed
prediction or error is named."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import clean_env, tpuwizard_cmd
from tpuwizard.core.evidence.course_report import (
    check_course_report,
    parse_course_report,
    read_course_report,
)

MAIN = Path(__file__).resolve().parents[1] / "data" / "course" / "move-your-experiment" / "main.py"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """tpu-report.txt as the course makes it, with the CPU in place of the TPU:
    `COURSE_EXPECT_PLATFORM=cpu JAX_PLATFORMS=cpu python main.py | tee tpu-report.txt`."""
    folder = tmp_path_factory.mktemp("lesson")
    shutil.copy(MAIN, folder / "main.py")
    done = subprocess.run(
        f"{sys.executable} main.py | tee tpu-report.txt",
        shell=True,
        cwd=folder,
        env=clean_env(COURSE_EXPECT_PLATFORM="cpu", JAX_PLATFORMS="cpu"),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "Completed prediction:" in done.stdout
    return folder / "tpu-report.txt"


def check(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        tpuwizard_cmd("receipt", "check", str(path), *args),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_course_checks_accept_lesson_ones_report(report: Path) -> None:
    found = read_course_report(report)
    assert found is not None and len(found) == 2  # the lesson's build prints it twice
    assert found[0].record["platform"] == "cpu" and found[0].record["shape"] == [8]
    done = check(report)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid (the course's report)" in done.stdout
    assert "max_absolute_error" in done.stdout and "[verify_report]" in done.stdout
    assert check(report, "--expect", "cpu").returncode == 0
    typed = check(report, "--accelerator", "v5litepod-4")
    assert typed.returncode == 0 and "--accelerator v5litepod-4 is not checked" in typed.stdout


def test_expect_tpu_rejects_a_cpu_report_and_says_the_platform_check_failed(report: Path) -> None:
    done = check(report, "--expect", "tpu")
    assert done.returncode == 1
    failed = [line for line in done.stdout.splitlines() if "FAIL" in line]
    assert failed and all("platform" in line and "'cpu'" in line for line in failed)
    assert "REJECTED" in done.stdout
    as_json = json.loads(check(report, "--expect", "tpu", "--json").stdout)
    assert as_json["ok"] is False and as_json["kind"] == "course-report"


def test_a_changed_prediction_or_error_is_named(report: Path, tmp_path: Path) -> None:
    text = report.read_text()
    shifted = text.replace("0.34375,", "0.34475,")
    (tmp_path / "shifted.txt").write_text(shifted)
    done = check(tmp_path / "shifted.txt")
    assert done.returncode == 1 and "row 0" in done.stdout
    record = parse_course_report(text)[0]
    worse = dict(record.record, max_absolute_error=1e-3, dtype="bfloat16")
    result = check_course_report([type(record)(worse, record.prediction)], None)
    assert not result.ok
    assert any("max_absolute_error" in p for p in result.problems)
    assert any("prediction contract changed" in p for p in result.problems)
