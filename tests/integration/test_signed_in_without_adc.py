"""The course's `gcloud auth login` alone (issue 27, item 5): every command that reaches the
cloud says, in its first line, why it runs in practice mode and what to type."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import clean_env, tpuwizard_cmd
from tests.unit.test_gcloud_config import signed_in_config


@pytest.mark.parametrize("command", [["status"], ["teardown", "--all", "--yes"]])
def test_every_cloud_command_says_why_practice_in_one_line_with_the_command(tmp_path, command):
    """With only the course's `gcloud auth login` done, commands run in practice mode: each
    says why, and what to type, in its first line."""
    env = clean_env(**signed_in_config(tmp_path), TPUWIZARD_HOME=os.environ["TPUWIZARD_HOME"])
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "TPUWIZARD_TPU_ENDPOINT"):
        env.pop(name, None)
    proc = subprocess.run(
        tpuwizard_cmd(*command), env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith("[practice]") and "learner@example.com" in first
    assert first.endswith("run  gcloud auth application-default login")
