"""Tests that need a real TPU (issue 45). Where there is none they are skipped without importing
JAX (conftest.py); on the chip, scripts/device-check.sh runs each file as a plain script (pytest
and tpuwizard's own dependencies are not installed there), and so can a person:

    TPUWIZARD_TPU_TESTS=1 PYTHONPATH=. python3 tests/tpu/test_fit_on_chip.py

Nothing here may initialise JAX's TPU backend in the test's own process: libtpu lets one process
hold the chip, and the measuring worker needs it.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

FORCE_ENV = "TPUWIZARD_TPU_TESTS"
PROBE = (
    "import json, jax; d = jax.devices(); print('DEVICES ' + json.dumps({'platform': "
    "d[0].platform, 'device_kind': str(d[0].device_kind), 'devices': len(d)}))"
)


def tpu_present() -> bool:
    """A TPU's device files and libtpu are here (or FORCE_ENV says so), found without JAX."""
    if os.environ.get(FORCE_ENV) == "1":
        return True
    accel = list(Path("/dev").glob("accel[0-9]*"))
    vfio = [p for p in Path("/dev/vfio").glob("[0-9]*")] if Path("/dev/vfio").is_dir() else []
    return bool(accel or vfio) and importlib.util.find_spec("libtpu") is not None


def devices_at_hand() -> dict[str, Any]:
    """What JAX sees, asked of a child process that lets go of the chip when it ends."""
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("DEVICES "):
            seen: dict[str, Any] = json.loads(line[len("DEVICES ") :])
            return seen
    raise AssertionError(f"JAX did not start: {proc.stderr[-2000:]}")


def run_here(namespace: dict[str, Any]) -> int:
    """Run every ``test_*`` function of a module (``tmp_path`` given where asked for); one line
    ``TPU-TESTS {json}`` says what passed, for scripts/device-check.sh."""
    results: dict[str, str] = {}
    tests: list[tuple[str, Callable[..., Any]]] = [
        (name, f) for name, f in namespace.items() if name.startswith("test_") and callable(f)
    ]
    for name, test in tests:
        try:
            with tempfile.TemporaryDirectory() as folder:
                wanted = inspect.signature(test).parameters
                test(**({"tmp_path": Path(folder)} if "tmp_path" in wanted else {}))
            results[name] = "passed"
        except Exception:
            results[name] = "failed: " + traceback.format_exc()[-1500:]
        print(f"{name}: {results[name]}", flush=True)
    failed = sum(1 for r in results.values() if r != "passed")
    print(
        "TPU-TESTS "
        + json.dumps({"passed": len(results) - failed, "failed": failed, "results": results})
    )
    return 1 if failed else 0
