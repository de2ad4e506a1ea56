"""The resume options on the command line: a bad --budget, --resume-from or --checkpoints is
exit 2 with what to type, before anything is created (launch, up and run alike)."""

from __future__ import annotations

import pytest

from tests.unit.test_cli_bad_input import LAUNCH, _no_sandbox, here, refused

__all__ = ["_no_sandbox", "here"]  # the fixtures, used by name
SPOT = [*LAUNCH[:-4], "--accelerator", "v5litepod-4", "--zone", "us-central1-a", "--route", "spot"]
RESUMABLE = [*SPOT, "--script", "train.py", "--checkpoints", "ckpt"]


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-1", "0", "$5"])
def test_a_bad_budget_is_refused(home, here, value):
    assert "not a number of US dollars above 0" in refused(home, *RESUMABLE, "--budget", value)


def test_a_budget_too_small_for_one_attempt_says_how_much_is_needed(home, here):
    stderr = refused(home, *RESUMABLE, "--budget", "0.01")
    assert "an attempt needs 10" in stderr and "give --budget" in stderr


def test_a_budget_without_checkpoints_is_refused(home, here):
    assert "add --checkpoints" in refused(home, *SPOT, "--budget", "5")


def test_resume_from_an_unknown_run_is_refused(home, here):
    assert "there is no run folder" in refused(home, *RESUMABLE, "--resume-from", "20990101-x")


def test_resume_from_a_run_with_no_complete_set_is_refused(home, here):
    (here / "runs" / "20260101-000000-abcd" / "checkpoints" / "step_8").mkdir(parents=True)
    stderr = refused(home, *RESUMABLE, "--resume-from", "20260101-000000-abcd")
    assert "no complete checkpoint set came home" in stderr


@pytest.mark.parametrize(
    ("folder", "said"), [("/tmp/ckpt", "absolute"), ("../ckpt", "'..'"), (".", "folder itself")]
)
def test_a_checkpoints_folder_outside_the_scripts_folder_is_refused(home, here, folder, said):
    stderr = refused(home, *SPOT, "--script", "train.py", "--checkpoints", folder)
    assert (
        said in stderr
        and f"--checkpoints {folder!r} " in stderr
        and "such as checkpoints" in stderr
    )


def test_autocheckpoint_without_checkpoints_or_where_it_cannot_be_is_refused(home, here):
    assert "--autocheckpoint needs --checkpoints DIR" in refused(home, *SPOT, "--autocheckpoint")
    v6e = [*LAUNCH[:-4], "--accelerator", "v6e-4", "--zone", "us-east5-b", "--route", "spot"]
    stderr = refused(
        home, *v6e, "--script", "train.py", "--checkpoints", "ckpt", "--autocheckpoint"
    )
    assert "TPU-API nodes of v2, v3, v4 and v5e only" in stderr
