"""The gcloud lines a TPU7x multi-host JobSet's header gives (the HIGH_THROUGHPUT workload policy,
the node pools that pass it with --placement-policy, their teardown) parse with gcloud itself
(528 here, GA commands): each gets past gcloud's argument parser to the point where it wants an
account, and a line with a flag gcloud lacks is refused by that parser. Nothing can be sent:
each runs inside ``unshare -rn`` (no network), with a fresh config and no credential."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import clean_env
from tpuwizard.core.handover import workload_policy
from tpuwizard.core.handover.plan import make_plan

pytestmark = pytest.mark.rotating("real-tools-e2e")
# Every capacity the node pool command writes: on-demand, a reservation, spot, Flex-start.
PLANS = [
    dict(accelerator="tpu7x-16", project="my-project-1"),
    dict(accelerator="tpu7x-32", slices=2, reservation="my-reservation"),
    dict(accelerator="tpu7x-16", route="spot"),
    dict(accelerator="tpu7x-64", route="flex", zone="us-central1-c"),
]
NO_ACCOUNT = "You do not currently have an active account selected"


def _gcloud(line: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = clean_env(
        CLOUDSDK_CONFIG=str(tmp_path / "gcloud"),
        CLOUDSDK_CORE_DISABLE_USAGE_REPORTING="true",
        CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK="true",
        CLOUDSDK_CORE_DISABLE_PROMPTS="1",
    )
    return subprocess.run(
        ["unshare", "-rn", *shlex.split(line), "--quiet"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_workload_policy_and_node_pool_lines_parse_with_gcloud(tmp_path: Path) -> None:
    if shutil.which("gcloud") is None or shutil.which("unshare") is None:
        pytest.skip("gcloud or unshare is not installed")
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn is not permitted here")
    lines: list[str] = []
    for spec in PLANS:
        plan = make_plan(**spec)  # type: ignore[arg-type]
        assert workload_policy.needed(plan)
        lines += [*workload_policy.commands(plan), *workload_policy.teardown(plan)]
    for line in dict.fromkeys(lines):  # each once, in order
        done = _gcloud(line, tmp_path)
        assert done.returncode != 0 and NO_ACCOUNT in done.stderr, (line, done.stderr[-2000:])
    # The check can fail: a flag gcloud does not have is refused by the same parser.
    wrong = workload_policy.pool_create(make_plan("tpu7x-16"), 0) + " --tpu-placement x"
    done = _gcloud(wrong, tmp_path)
    assert "unrecognized arguments" in done.stderr and NO_ACCOUNT not in done.stderr
