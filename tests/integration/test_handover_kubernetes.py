"""The core Kubernetes object inside the JobSet ``tpuwizard export --to jobset`` writes (each
replicated job's Job: its counts, deadline and Pod template) validates with kubernetes-validate
1.37.0 in strict mode (unknown fields refused), in its own cached environment
(tests/integration/tool_venv.py; the package carries the schemas, so the check runs offline).
The JobSet around it is checked against the JobSet CRD in tests/unit/test_handover.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.tool_venv import offline_env, tool_python
from tests.unit.test_handover import PLANS, _plan
from tpuwizard.core.handover import jobset

# Its environment is 117 MB from PyPI on a fresh machine: one of the rotating real tools.
pytestmark = pytest.mark.rotating("real-tools-e2e")

KUBERNETES_VALIDATE = "1.37.0"
# The package's own default, and an older minor GKE still serves (the Job fields used here
# are old: both must take them).
VERSIONS = ("1.37.0", "1.33.0")
VALIDATE = """
import json, sys
import kubernetes_validate
from kubernetes_validate.utils import ValidationError
found = []
for job in json.load(sys.stdin):
    for version in sys.argv[1:]:
        try:
            kubernetes_validate.validate(job, version, strict=True)
            found.append("ok")
        except ValidationError as err:
            found.append(f"{version}: {err.message} at {list(err.path)}")
print(json.dumps(found))
"""


def _job(manifest: dict) -> dict:
    """The Job each replica of the JobSet's replicated job makes, as a batch/v1 object."""
    (replicated,) = manifest["spec"]["replicatedJobs"]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"{manifest['metadata']['name']}-{replicated['name']}-0"},
        "spec": replicated["template"]["spec"],
    }


def test_the_jobsets_jobs_are_valid_kubernetes_jobs(tmp_path: Path) -> None:
    jobs = [_job(jobset.manifest(_plan(name))) for name in PLANS]
    wrong = _job(jobset.manifest(_plan("v5p-16-x2")))
    wrong["spec"]["template"]["spec"]["containers"][0]["command"] = "bash tpuwizard_job.sh"
    python = tool_python(
        f"kubernetes-validate-{KUBERNETES_VALIDATE}", f"kubernetes-validate=={KUBERNETES_VALIDATE}"
    )
    run = subprocess.run(
        [str(python), "-c", VALIDATE, *VERSIONS],
        input=json.dumps([*jobs, wrong]),
        capture_output=True,
        text=True,
        timeout=300,
        env=offline_env(tmp_path),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.splitlines()[-1])
    assert found[: -len(VERSIONS)] == ["ok"] * len(jobs) * len(VERSIONS)
    # The check can fail: a command given as one string is refused by each version.
    assert all("is not of type 'array'" in f for f in found[-len(VERSIONS) :]), found
