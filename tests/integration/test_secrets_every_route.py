"""No credential file of a project folder leaves this computer, on any route (reliability round 6,
G1): the folder with every planted secret (tests/planted_secrets.py) launched in practice on the
TPU route, on Kaggle and on Colab. The script lists what arrived beside it there; none of the
planted files did, and the plan named each as left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration import colab_helpers, kaggle_helpers
from tests.integration.launch_helpers import launch as tpu_launch
from tests.planted_secrets import LIST_ARRIVED, PLANTED, named_left_out, plant, sent_names

pytestmark = pytest.mark.slow


def planted_project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    plant(folder, LIST_ARRIVED)
    return folder


def arrived(events: list[dict]) -> set[str]:
    lines = [e["text"] for e in events if e["event"] == "script_line"]
    return {line.removeprefix("ARRIVED ") for line in lines if line.startswith("ARRIVED ")}


def assert_none_arrived_and_each_was_named(events: list[dict], planned: str) -> None:
    there = arrived(events)
    assert set(sent_names()) <= there, there  # the listing ran, and what is no secret came
    assert not there & set(PLANTED), there & set(PLANTED)
    assert not any(path.startswith((".docker/", ".kube/", ".config/gh/")) for path in there)
    [plan] = [e for e in events if e["event"] == planned]
    assert sorted(plan["folder"]["secrets"]) == named_left_out()


@pytest.mark.rotating("real-tools-e2e")
def test_the_tpu_route_copies_none_of_the_planted_secrets_to_the_worker(tmp_path):
    project = planted_project(tmp_path)
    code, events, err = tpu_launch(project, "--accelerator", "v5litepod-1", "--script", "main.py")
    assert code == 0, err
    assert_none_arrived_and_each_was_named(events, "planned")
    assert "Never sent (keys, credentials, .env files): " in err


@pytest.mark.rotating("kaggle-e2e")
def test_kaggle_s_kernel_carries_none_of_the_planted_secrets(tmp_path):
    project = planted_project(tmp_path)
    env = kaggle_helpers.cli_env(tmp_path)
    code, events, err = kaggle_helpers.launch(project, env, "--sandbox", "--max-run", "5")
    assert code == 0, err
    assert_none_arrived_and_each_was_named(events, "kernel_planned")
    assert "Never sent (keys, credentials, .env files): " in err


@pytest.mark.rotating("colab-e2e")
def test_colab_s_upload_carries_none_of_the_planted_secrets(tmp_path):
    project = planted_project(tmp_path)
    env = colab_helpers.user_env(tmp_path)
    code, events, err = colab_helpers.launch(project, env, "--script", "main.py", "--max-run", "5")
    assert code == 0, err
    assert_none_arrived_and_each_was_named(events, "colab_planned")
    assert "Never sent (keys, credentials, .env files): " in err
