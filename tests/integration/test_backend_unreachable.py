"""A whole backend unreachable (issue 39, item 3): a node kept on Compute Engine, then Compute
Engine does not answer. ``status`` lists the kept instance as not checked (exit 3), never
"nothing of yours is billing"; ``teardown --all --yes`` deletes nothing, says it could not check
it (exit 4), and the ledger still holds it; once Compute Engine answers again it is found."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.drill_backends import BACKENDS
from tests.integration.launch_helpers import env

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("real-tools-e2e")

COMPUTE = BACKENDS["compute"]


def test_a_kept_instance_behind_an_unreachable_compute_engine_is_unchecked(project, home):
    def cli(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            tpuwizard_cmd(*args, "--sandbox"),
            cwd=project,
            capture_output=True,
            text=True,
            timeout=240,
            env=env(**extra),
        )

    up = cli("up", *COMPUTE.flags, *COMPUTE.keep, "--name", "ce1")
    assert up.returncode == 0, up.stderr
    # A port bound but not listening: every call to it is refused, as to a host that is down.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{closed.getsockname()[1]}"
        status = cli("status", "--json", TPUWIZARD_COMPUTE_ENDPOINT=down)
        teardown = cli("teardown", "--all", "--yes", TPUWIZARD_COMPUTE_ENDPOINT=down)
    assert status.returncode == 3, status.stderr
    assert [u["name"] for u in json.loads(status.stdout)["unchecked"]] == ["ce1"]
    assert "Could not check ce1" in status.stderr and "Cannot reach Compute Engine" in status.stderr
    assert teardown.returncode == 4, teardown.stderr
    assert "Nothing to delete" not in teardown.stderr and "Could not check ce1" in teardown.stderr
    found = json.loads(cli("status", "--json").stdout)  # Compute Engine answers again
    assert [(r["name"], r["backend"]) for r in found["resources"]] == [("ce1", "compute")]
