"""Issue 36's rotating drill: the course's "Select a TPU slice" program, unchanged, through a
practice launch with ``--jax`` naming a version of the table other than the default, on a Python
3.12 worker with that JAX downloaded as a real worker downloads it (this computer's pip index,
not the suite's closed one). The verifier's and the course's numbers must come back.

Not in every run: each version costs about 140 MB of downloads on a fresh machine (jaxlib 83
MiB, scipy 34, numpy 15, jax 3; measured 2026-12-02) and a launch of 40-70 s here. One version
per run, the turn moving each day (tests/rotation.py); ``TPUWIZARD_DRILL=all`` runs them all.
The default version runs in every suite run (test_course_programs.py).
"""

from __future__ import annotations

import json
import shutil
from importlib import metadata

import pytest

from tests.integration.launch_helpers import launch, sandbox_is_empty
from tests.integration.test_course_programs import COURSE
from tests.rotation import rotating
from tpuwizard.core.plan.jax_versions import TABLE
from tpuwizard.sandbox.image import find_uv
from tpuwizard.sandbox.worker_python import find_worker_python

OTHERS = [v.version for v in TABLE if v.in_drill]


@pytest.mark.parametrize("version", rotating(OTHERS, per_run=1))
def test_the_course_program_runs_on_a_table_version_on_python_312(
    tmp_path, home, monkeypatch, version
):
    if find_worker_python(find_uv()) is None:
        pytest.skip("no Python 3.12 on this computer: the worker would stay on 3.11")
    for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"):
        monkeypatch.delenv(name, raising=False)  # this computer's own index, as a user's
    shutil.copytree(COURSE / "tpu-setup", tmp_path / "tpu-setup")
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-4",
        "--jax",
        version,
        "--script",
        "tpu-setup/main.py",
        timeout=600,
    )
    assert code == 0, stderr[-3000:]
    versions = next(e for e in events if e["event"] == "versions")
    assert versions["versions"]["jax"] == version
    assert versions["versions"]["python"].startswith("3.12.")
    assert versions["laptop_jax"] == metadata.version("jax")
    said = [e["text"] for e in events if e["event"] == "script_line"]
    (line,) = [t for t in said if "Verified runtime receipt: " in t]
    receipt = json.loads(line.split("Verified runtime receipt: ", 1)[1])
    assert receipt["jax"] == version and receipt["pmap_sum_of_squares"] == 10416.0
    assert sandbox_is_empty(home)
