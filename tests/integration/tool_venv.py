"""A tool's own virtual environment, built once from PyPI and cached under
~/.cache/tpuwizard-tests/: for engines that cannot share tpuwizard's environment (xpk pins
google-api-core 2.24.1, google-cloud-tpu 1.28 needs 2.28 or newer; SkyPilot brings its own
pins). ``--index-url`` is given: the suite points pip at a closed index."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CACHE = Path.home() / ".cache" / "tpuwizard-tests"


def tool_python(name: str, requirement: str) -> Path:
    """The cached environment's Python, built first where it is missing (built aside and moved
    in whole, so an interrupted build is never taken for a finished one)."""
    venv = CACHE / name
    python = venv / "bin" / "python"
    if (venv / "built").exists():
        return python
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    assert uv, "uv is a dependency of tpuwizard: reinstall the environment"
    building = venv.with_name(f"{venv.name}.building-{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(building)], check=True, timeout=300)
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(building / "bin" / "python"),
         "--index-url", "https://pypi.org/simple", requirement],
        check=True,
        timeout=600,
    )  # fmt: skip
    (building / "built").write_text(requirement)
    shutil.rmtree(venv, ignore_errors=True)
    building.rename(venv)
    return python


def offline_env(home: Path) -> dict[str, str]:
    """Run a tool offline: its proxy a closed port, HOME a fresh folder (no config read, no
    telemetry sent)."""
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
