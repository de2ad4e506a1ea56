"""The course's own two programs, saved as the lessons print them (tests/data/course/), run
unchanged through `launch --script` and through `up` + `run` against the practice sandbox, and
their expected lines come back (issue 27): the prediction of "Move your experiment to a TPU",
and the runtime receipt of "Select a TPU slice" with its pmap sum of squares, 140.0 on one
device and 10416.0 on four. Its saved output is a receipt `receipt check` accepts, and the
course's last step, the zone's TPU list, is said after `down` with a TPU made by hand labelled.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.request
from importlib import metadata
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.iterate_helpers import end_practice, run, up
from tests.integration.launch_helpers import ZONE, env, launch, teardown_all
from tpuwizard.core.plan.jax_versions import DEFAULT
from tpuwizard.sandbox.workers.python import WORKER_PYTHON
from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("real-tools-e2e")

COURSE = Path(__file__).resolve().parents[1] / "data" / "course"
PREDICTION = (
    "Completed prediction: [0.34375, 0.8125, 1.28125, 1.75, 2.21875, 2.6875, 3.15625, 3.625]"
)
HAND_MADE = "jax-course-tpu-01"  # the course's TPU_NAME


def receipt_line(text: str) -> dict:
    (line,) = {ln for ln in text.splitlines() if "Verified runtime receipt: " in ln}
    return json.loads(line.split("Verified runtime receipt: ", 1)[1])


@pytest.fixture
def lessons(tmp_path, home):
    """Each lesson's main.py in its own folder, as a learner keeps them; afterwards nothing of
    practice is left running."""
    for lesson in ("move-your-experiment", "tpu-setup"):
        shutil.copytree(COURSE / lesson, tmp_path / lesson)
    yield tmp_path
    _sandbox_call(home, "DELETE", f"nodes/{HAND_MADE}", ok_missing=True)
    teardown_all(tmp_path)
    end_practice(home)


def _sandbox_call(home: Path, method: str, path: str, body: dict | None = None, **kw) -> None:
    """A call to the lasting practice sandbox as gcloud makes one: no tpuwizard labels."""
    info = home / "sandbox" / "server.json"
    if not info.exists():
        return
    server = json.loads(info.read_text())
    url = f"{server['endpoint']}/v2/projects/{PRACTICE_PROJECT}/locations/{ZONE}/{path}"
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Authorization": f"Bearer {server['token']}", "Content-Type": "application/json"},
    )
    try:
        urllib.request.urlopen(request, timeout=30).read()
    except urllib.error.HTTPError as err:
        if not (kw.get("ok_missing") and err.code == 404):
            raise


def test_the_course_programs_run_unchanged_through_launch_script(lessons):
    for lesson, expected in (("tpu-setup", 140.0), ("move-your-experiment", None)):
        # Lesson one's learner names the course's tpu-report.txt to copy back.
        fetch = ("--fetch", "tpu-report.txt") if expected is None else ()
        code, events, stderr = launch(
            lessons, "--accelerator", "v5litepod-1", "--script", f"{lesson}/main.py", *fetch
        )
        assert code == 0, stderr
        said = "\n".join(e["text"] for e in events if e["event"] == "script_line")
        (finished,) = [e for e in events if e["event"] == "script_finished"]
        saved = Path(finished["output"]).read_text()
        assert saved.splitlines() == said.splitlines()  # the whole output, kept
        if expected is None:
            assert PREDICTION in said and '"expected": "cpu"' in said
            # Told before the run where the course's report is, and after it, before the
            # teardown, that no file of that name came back.
            assert "tpu-report.txt is your script's output tee'd to a file" in stderr
            (missing,) = [e for e in events if e["event"] == "file_not_fetched"]
            assert missing["path"] == "tpu-report.txt"
            kinds = [e["event"] for e in events]
            assert kinds.index("file_not_fetched") < kinds.index("teardown_started")
            # output.txt is lesson one's tpu-report.txt: the course's checks accept it, and
            # --expect tpu rejects it in practice, where it ran on the CPU.
            for expect, code_wanted in (("cpu", 0), ("tpu", 1)):
                checked = subprocess.run(
                    tpuwizard_cmd("receipt", "check", finished["output"], "--expect", expect),
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert checked.returncode == code_wanted, checked.stdout + checked.stderr
            continue
        receipt = receipt_line(said)
        assert receipt["pmap_sum_of_squares"] == expected and receipt["contract_ok"] is True
        # Issue 36: the table's default JAX, on the Python 3.12 a real worker's uv provides;
        # the receipt names this computer's beside it.
        (versions,) = [e for e in events if e["event"] == "versions"]
        assert receipt["jax"] == versions["versions"]["jax"] == DEFAULT.version
        assert versions["versions"]["python"].startswith(f"{WORKER_PYTHON}.")
        assert versions["laptop_jax"] == metadata.version("jax")
        checked = subprocess.run(
            tpuwizard_cmd("receipt", "check", finished["output"], "--expect", "cpu"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert checked.returncode == 0 and "valid" in checked.stdout, checked.stdout
        listed = [e for e in events if e["event"] == "zone_listed"]
        assert listed and listed[0]["tpus"] == []  # the course's last step: the list is empty


def test_the_course_programs_run_unchanged_through_up_and_run(lessons, home):
    kept = up(lessons, accelerator="v5litepod-4")
    four = run(lessons, "tpu-setup/main.py")
    assert four.returncode == 0, four.stderr
    receipt = receipt_line(four.stdout)
    assert receipt["pmap_sum_of_squares"] == 10416.0 and receipt["local_device_count"] == 4
    assert receipt["contract_ok"] is True
    saved = re.search(r"keeps it as tpu-report.txt\): (\S+)", four.stderr + four.stdout)
    assert saved and "Verified runtime receipt: " in Path(saved.group(1)).read_text()
    first = run(lessons, "move-your-experiment/main.py")
    assert first.returncode == 0, first.stderr
    assert PREDICTION in first.stdout and '"expected": "cpu"' in first.stdout
    # A TPU made by hand with the course's commands, beside the kept one.
    _sandbox_call(
        home,
        "POST",
        f"nodes?nodeId={HAND_MADE}",
        {"acceleratorType": "v5litepod-1", "runtimeVersion": "v2-alpha-tpuv5-lite"},
    )
    ended = subprocess.run(
        tpuwizard_cmd("down", kept["name"], "--yes", "--sandbox"),
        cwd=lessons,
        capture_output=True,
        text=True,
        timeout=240,
        env=env(),
    )
    assert ended.returncode == 0, ended.stderr
    lines = ended.stdout.splitlines()
    assert any(line.startswith(f"The TPU list of {ZONE} now") for line in lines), ended.stdout
    (hand_made,) = [line for line in lines if HAND_MADE in line]
    assert "not made by tpuwizard" in hand_made and "tpuwizard never deletes it" in hand_made
    assert kept["name"] not in ended.stdout.split(f"The TPU list of {ZONE} now", 1)[1]
