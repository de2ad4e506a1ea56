"""What the Colab route's end-to-end tests share: a user's folder and environment (a HOME and a
state folder of its own), the stand-in's calls, `launch --route colab --json` run as a user
runs it, and the stand-in put on PATH as `colab` for the real path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import clean_env, tpuwizard_cmd
from tpuwizard.core.kaggle.ledger import KernelLedger

MAIN = """\
import jax, sys, time
print("devices:", len(jax.devices()), jax.devices()[0].platform, flush=True)
print("args:", sys.argv[1:], flush=True)
open("result.txt", "w").write("done")
if "--sleep" in sys.argv:
    print("sleeping", flush=True)
    time.sleep(300)
"""


def make_project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "main.py").write_text(MAIN)
    return folder


def user_env(tmp_path: Path, faults: str = "", **extra: str) -> dict[str, str]:
    """No colab on PATH and no token: practice is the default."""
    env = clean_env(
        HOME=str(tmp_path / "home"),
        TPUWIZARD_HOME=str(tmp_path / "state"),
        TPUWIZARD_COLAB_FAULTS=faults,
        TPUWIZARD_COLAB_POLL="0.5",
        **extra,
    )
    return env


def practice_home(tmp_path: Path) -> Path:
    return tmp_path / "state" / "colab-sandbox"


def calls(home: Path) -> list[list[str]]:
    """Every call the stand-in got, in order."""
    log = home / "calls.log"
    if not log.exists():
        return []
    return [json.loads(line)["argv"] for line in log.read_text().splitlines()]


def ledger(tmp_path: Path) -> KernelLedger:
    return KernelLedger(tmp_path / "state" / "colab-ledger.jsonl")


def stand_in_on_path(tmp_path: Path, env: dict[str, str]) -> Path:
    """The stand-in as `colab` on PATH (the real path: expected tpu), its state in a folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "colab"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m tpuwizard.sandbox.colab.cli "$@"\n')
    shim.chmod(0o755)
    home = tmp_path / "google-colab"
    root = str(Path(__file__).resolve().parents[2])
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        TPUWIZARD_COLAB_HOME=str(home),
        PYTHONPATH=os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p),
    )
    return home


def launch(cwd: Path, env: dict[str, str], *args: str, timeout: float = 240):
    proc = subprocess.run(
        tpuwizard_cmd("launch", "--route", "colab", "--json", *args),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, events, proc.stderr


def named(events: list[dict], name: str) -> list[dict]:
    return [e for e in events if e["event"] == name]
