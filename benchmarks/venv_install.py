"""uv against pip: making a fresh venv and installing jax and numpy into it, side by side.

    .venv/bin/python benchmarks/venv_install.py

Both download from the package index (or its local cache), as the bootstrap on a TPU VM does.
Each tool gets its own empty cache folder, so neither is helped by an earlier run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(cmds: list[list[str]], env: dict[str, str]) -> float:
    start = time.perf_counter()
    for cmd in cmds:
        subprocess.run(
            cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tools = root / "tools"
        subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True)
        subprocess.run([str(tools / "bin" / "pip"), "install", "-q", "uv"], check=True)
        uv = str(tools / "bin" / "uv")
        env = dict(
            os.environ, PIP_CACHE_DIR=str(root / "pip-cache"), UV_CACHE_DIR=str(root / "uv-cache")
        )
        pip_s = timed(
            [
                [sys.executable, "-m", "venv", str(root / "a")],
                [str(root / "a" / "bin" / "pip"), "install", "-q", "jax", "numpy"],
            ],
            env,
        )
        uv_s = timed(
            [
                [uv, "venv", "-q", "--python", sys.executable, str(root / "b")],
                [
                    uv,
                    "pip",
                    "install",
                    "-q",
                    "--python",
                    str(root / "b" / "bin" / "python"),
                    "jax",
                    "numpy",
                ],
            ],
            env,
        )
    print(f"python -m venv + pip install jax numpy   {pip_s:6.1f} s")
    print(f"uv venv + uv pip install jax numpy       {uv_s:6.1f} s   ({pip_s / uv_s:.1f}x faster)")


if __name__ == "__main__":
    main()
