"""Issue 36's rotating drill: the course's "Select a TPU slice" program, unchanged, through a
practice launch with ``--jax`` naming a version of the table other than the default: 0.10.2 on
tpuwizard's own Python (its own JAX), the others on a Python 3.12 worker with that JAX in this
computer's shared worker environment, built the first time from this computer's pip index (not
the suite's closed one), as a real worker downloads it. The verifier's and the course's numbers
must come back.

Not in every run: each version of 3.12 costs about 140 MB of downloads on a fresh machine
(jaxlib 83 MiB, scipy 34, numpy 15, jax 3; measured 2026-12-02) and a launch of 40-70 s here.
One version per run, the turn moving each day (tests/rotation.py); ``TPUWIZARD_DRILL=all`` runs
them all. The default version runs in every suite run (test_course_programs.py and every
practice launch of the suite).
"""

from __future__ import annotations

import json
import shutil
import sys
from importlib import metadata

import pytest

from tests.integration.launch_helpers import launch, sandbox_is_empty
from tests.integration.test_course_programs import COURSE
from tests.rotation import rotating
from tpuwizard.core.plan.jax_versions import TABLE, find
from tpuwizard.sandbox.workers.image import find_uv
from tpuwizard.sandbox.workers.python import WORKER_PYTHON, find_worker_python

OTHERS = [v.version for v in TABLE if v.in_drill]


@pytest.mark.parametrize("version", rotating(OTHERS, per_run=1))
def test_the_course_program_runs_on_another_version_of_the_table(
    tmp_path, home, monkeypatch, version
):
    entry = find(version)
    assert entry is not None
    own_python = sys.version_info[:2] >= entry.min_python  # its own JAX: tpuwizard's Python
    if not own_python and find_worker_python(find_uv()) is None:
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
    python = "{}.{}.".format(*sys.version_info[:2]) if own_python else f"{WORKER_PYTHON}."
    assert versions["versions"]["python"].startswith(python)
    assert versions["laptop_jax"] == metadata.version("jax")
    said = [e["text"] for e in events if e["event"] == "script_line"]
    (line,) = [t for t in said if "Verified runtime receipt: " in t]
    receipt = json.loads(line.split("Verified runtime receipt: ", 1)[1])
    assert receipt["jax"] == version and receipt["pmap_sum_of_squares"] == 10416.0
    assert sandbox_is_empty(home)
