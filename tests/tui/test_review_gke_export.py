"""Review's "Take this to GKE" (F6): the plan as reviewed, written for xpk, a JobSet or SkyPilot
into a folder of its own in the script's folder (export-TARGET, issue 55.9), the dialog saying
where; a slice too small for the state is replaced by the
smallest that holds it; what the engine or the rules refuse is said, and nothing is written."""

from __future__ import annotations

import pytest
import yaml
from textual.widgets import Input, Static

from tests.tui.pilot_helpers import on_screen, press, until
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.plan.packages import PackageSpec
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.core.plan.jax_versions import TABLE
from tpuwizard.core.routes import Route
from tpuwizard.tui.state import WizardState
from tpuwizard.tui.widgets.key_bar import KeyBar


def _state(script, **extra) -> WizardState:
    fields = dict(
        practice=True,
        project="tpuwizard-practice",
        zone="us-central1-a",
        accelerator="v5litepod-4",
        route=Route.SPOT,
        workload=Workload(script=script),
    )
    return WizardState(**{**fields, **extra})


def _shown(app, selector: str) -> str:
    return " ".join(str(app.screen.query_one(selector, Static).render()).split())


@pytest.mark.parametrize("size", [(80, 24), (100, 32)])
async def test_f6_writes_the_jobset_into_its_own_folder_and_says_where(tmp_path, size):
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    newest = TABLE[-1].version
    packages = (PackageSpec("optax", "the Packages field"),)
    state = _state(script, workload=Workload(script=script, packages=packages, jax=newest))
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=size) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        app.screen.query_one("#name", Input).value = "my-run"
        assert "f6" in app.screen.query_one(KeyBar).render().plain.lower()
        await pilot.press("f6")
        await on_screen(pilot, "GkeExportScreen", 30)
        write = app.screen.query_one("#gke-write").region
        assert write.height > 0 and write.bottom <= size[1]  # Write is on screen at 80x24
        await press(pilot, "#gke-jobset")
        await press(pilot, "#gke-write")
        await until(pilot, lambda: "Wrote" in _shown(app, "#gke-written"), 30, "the files said")
        words = _shown(app, "#gke-written")
        written = tmp_path / "export-jobset" / "my-run.jobset.yaml"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["export-jobset", "train.py"]
        assert str(written) in words and "nothing was created" in words
        assert "tpuwizard_job.sh" in words and "tpu_verify.py" in words
        jobset = yaml.safe_load(written.read_text())
        assert jobset["metadata"]["name"] == "my-run"  # Review's Name, as typed
        assert jobset["spec"]["replicatedJobs"][0]["replicas"] == 1
        pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        assert pod["nodeSelector"]["cloud.google.com/gke-spot"] == "true"  # Review's route
        job = (tmp_path / "export-jobset" / "tpuwizard_job.sh").read_text()
        assert "optax" in job and "train.py" in job  # Review's packages and script
        assert f"jax[tpu]=={newest}" in job  # Review's worker JAX
        await pilot.press("escape")
        await on_screen(pilot, "ReviewScreen", 30)


async def test_a_slice_too_small_is_replaced_by_the_larger_one_and_refusals_are_said(tmp_path):
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    state = _state(script, state_gib=3100.0)
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        await pilot.press("f6")
        await on_screen(pilot, "GkeExportScreen", 30)
        assert app.screen.query_one("#gke-accelerator", Input).value == "tpu7x-64"
        assert "smallest single slice that does" in _shown(app, "#gke-intro")
        await press(pilot, "#gke-skypilot")  # SkyPilot's TPU path has no TPU7x
        await press(pilot, "#gke-write")
        await until(pilot, lambda: "Not written" in _shown(app, "#gke-written"), 30, "refusal")
        assert "cannot go to SkyPilot" in _shown(app, "#gke-written")
        app.screen.query_one("#gke-slices", Input).value = "two"
        await press(pilot, "#gke-xpk")
        await press(pilot, "#gke-write")
        await until(pilot, lambda: "whole number" in _shown(app, "#gke-written"), 30, "slices")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]  # nothing written
        app.screen.query_one("#gke-slices", Input).value = "2"
        await press(pilot, "#gke-write")
        await until(pilot, lambda: "Wrote" in _shown(app, "#gke-written"), 30, "the files said")
        commands = (tmp_path / "export-xpk" / "tpuwizard-run-xpk.sh").read_text()
        assert "--tpu-type tpu7x-64 --num-slices 2 --spot" in commands
        assert "--project" not in commands  # practice's project is no real one
        await press(pilot, "#gke-gcluster")  # the fourth choice: Cluster Toolkit
        await press(pilot, "#gke-write")
        folder = tmp_path / "export-gcluster"
        await until(pilot, lambda: (folder / "tpuwizard-run-gcluster.sh").exists(), 30, "gcluster")
        submit = (folder / "tpuwizard-run-gcluster.sh").read_text()
        assert "--compute-type tpu7x-standard-4t --topology 2x4x4 --num-slices 2" in submit
        assert (folder / "tpuwizard-run-gcluster.jobset.yaml").is_file()


async def test_the_optional_queue_priority_and_reservation_reach_the_jobset(tmp_path):
    """Issue 47: the dialog's three optional fields are export's --queue, --priority and
    --reservation; a name the rules refuse is said, and nothing is written."""
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    state = _state(script, route=Route.VM)
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        await pilot.press("f6")
        await on_screen(pilot, "GkeExportScreen", 30)
        app.screen.query_one("#gke-queue", Input).value = "Team A"
        await press(pilot, "#gke-jobset")
        await press(pilot, "#gke-write")
        await until(pilot, lambda: "Not written" in _shown(app, "#gke-written"), 30, "refusal")
        assert "is not a Kueue queue name" in _shown(app, "#gke-written")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]
        app.screen.query_one("#gke-queue", Input).value = "team-a"
        app.screen.query_one("#gke-priority", Input).value = "high"
        app.screen.query_one("#gke-reservation", Input).value = "my-reservation"
        await press(pilot, "#gke-write")
        await until(pilot, lambda: "Wrote" in _shown(app, "#gke-written"), 30, "the files said")
        jobset = yaml.safe_load(
            (tmp_path / "export-jobset" / "tpuwizard-run.jobset.yaml").read_text()
        )
        assert jobset["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "team-a"}
        pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        assert pod["priorityClassName"] == "high"
        assert pod["nodeSelector"]["cloud.google.com/reservation-name"] == "my-reservation"
