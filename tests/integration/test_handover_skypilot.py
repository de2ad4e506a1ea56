"""SkyPilot 0.14.1 itself, in its own cached environment (tests/integration/tool_venv.py): the
schemas stored in tests/data/skypilot are the ones it returns, and it loads every task
``tpuwizard export --to skypilot`` writes with its own ``Task.from_yaml_config`` (the task's
schema, the resources' schema, and its reading of ``tpu-<type>`` and ``accelerator_args``).
Offline: a closed proxy port and a fresh HOME."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.integration.tool_venv import offline_env, tool_python
from tests.unit.test_handover_skypilot import SCHEMAS, SERVED
from tpuwizard.core.handover import skypilot
from tpuwizard.core.handover.plan import make_plan

# About 20 s once cached on a loaded 2-core machine (importing sky); the stored schemas are
# checked on every run by tests/unit/test_handover_skypilot.py.
pytestmark = pytest.mark.rotating("real-tools-e2e")
SKYPILOT_VERSION = "0.14.1"
LOAD = """
import json, sys
import sky
from sky.utils import schemas
found = {"version": sky.__version__, "task": schemas.get_task_schema(),
         "resources": schemas.get_resources_schema(), "loaded": []}
for config in json.load(sys.stdin):
    task = sky.Task.from_yaml_config(config)
    (resources,) = task.resources
    found["loaded"].append({"run": task.run, "accelerators": resources.accelerators,
                            "use_spot": resources.use_spot,
                            "runtime_version": resources.accelerator_args["runtime_version"]})
print(json.dumps(found))
"""


def test_skypilot_0_14_1_loads_every_task_and_its_schemas_are_the_stored_ones(
    tmp_path: Path,
) -> None:
    plans = [make_plan(a, route=r, script="train.py") for a, r in SERVED]
    tasks = [yaml.safe_load(skypilot.render(plan)) for plan in plans]
    python = tool_python(f"skypilot-{SKYPILOT_VERSION}", f"skypilot=={SKYPILOT_VERSION}")
    run = subprocess.run(
        [str(python), "-c", LOAD],
        input=json.dumps(tasks),
        capture_output=True,
        text=True,
        timeout=300,
        env=offline_env(tmp_path),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.splitlines()[-1])
    assert found["version"] == SKYPILOT_VERSION
    stored = json.loads(SCHEMAS.read_text("utf-8"))
    assert (found["task"], found["resources"]) == (stored["task"], stored["resources"])
    for plan, loaded in zip(plans, found["loaded"], strict=True):
        assert loaded["run"] == "bash tpuwizard_job.sh"
        assert loaded["accelerators"] == {f"tpu-{plan.slice.name}": 1}
        assert loaded["use_spot"] is (plan.route == "spot")
        assert loaded["runtime_version"] == plan.slice.generation.runtime_version
