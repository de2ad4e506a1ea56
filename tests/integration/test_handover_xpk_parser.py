"""The xpk commands ``tpuwizard export`` writes parse with xpk 1.16.0's own parser.

xpk cannot share tpuwizard's environment (it pins google-api-core 2.24.1; google-cloud-tpu 1.28
needs 2.28 or newer), so the test builds a virtual environment of its own once, with uv from
PyPI (``--index-url`` given: the suite points pip at a closed index), and keeps it under
~/.cache/tpuwizard-tests/. Measured on a loaded 2-core machine: the environment alone takes 21 s
with uv (pip took 7 min 21 s for it), this test 46 s cold and 8 s once cached. The parse itself
runs offline: the proxy it is given is a closed port, and HOME is a fresh folder, so no xpk
config (nor telemetry) is read or sent.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.integration.tool_venv import offline_env, tool_python
from tests.unit.test_handover import PLANS, _plan
from tpuwizard.core.handover import xpk
from tpuwizard.core.handover.gke import XPK_VERSION

PARSE = """
import argparse, json, shlex, sys
from xpk.parser.core import set_parser
parser = argparse.ArgumentParser(prog="xpk")
set_parser(parser)
plain = (str, int, bool, type(None))
found = []
for line in json.load(sys.stdin):
    args = vars(parser.parse_args(shlex.split(line)[1:]))
    found.append({k: v for k, v in args.items() if isinstance(v, plain)})
print(json.dumps(found))
"""


def xpk_python() -> Path:
    return tool_python(f"xpk-{XPK_VERSION}", f"xpk=={XPK_VERSION}")


def test_every_xpk_command_parses_with_xpk_1_16s_parser(tmp_path: Path) -> None:
    lines: list[str] = []
    for name in PLANS:
        plan = _plan(name)
        lines += [*xpk.commands(plan), xpk.cluster_adapt(plan), *xpk.teardown(plan)[:2]]
    offline = offline_env(tmp_path)
    run = subprocess.run(
        [str(xpk_python()), "-c", PARSE],
        input=json.dumps(lines),
        capture_output=True,
        text=True,
        timeout=300,
        env=offline,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    parsed = dict(zip(lines, json.loads(run.stdout.splitlines()[-1]), strict=True))
    for name in PLANS:
        plan = _plan(name)
        create = parsed[xpk.cluster_create(plan)]
        assert create["tpu_type"] == plan.slice.name and create["num_slices"] == plan.slices
        assert create["spot"] == (plan.route == "spot") and create["flex"] == (plan.route == "flex")
        # A reservation is the cluster's capacity in place of on-demand (issue 47).
        assert create["on_demand"] == (plan.route == "vm" and plan.reservation is None)
        assert create["reservation"] == plan.reservation
        assert create["default_pool_cpu_num_nodes"] == 1
        dry = parsed[xpk.workload_create(plan, dry_run=True)]
        assert dry["dry_run"] is True and dry["output_manifest_file"] == xpk.manifest_file(plan)
        real = parsed[xpk.workload_create(plan, dry_run=False)]
        # The job in the export's own folder, started from the folder shipped (issue 55).
        job = f"bash {plan.folder}/tpuwizard_job.sh"
        assert real["dry_run"] is False and real["command"] == job
        assert real["max_restarts"] == str(plan.max_restarts) and real["script_dir"] == "."
        assert real["workload"] == plan.workload and real["num_slices"] == plan.slices
        assert real["priority"] == (plan.priority or "medium")  # xpk's default when not given
        adapt = parsed[xpk.cluster_adapt(plan)]
        assert adapt["reservation"] == plan.reservation
