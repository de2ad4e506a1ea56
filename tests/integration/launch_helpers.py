"""Running `tpuwizard launch` and friends in subprocesses against the sandbox."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

from tests.conftest import clean_env, tpuwizard_cmd
from tests.waiting import wait_until

ZONE = "us-central1-a"


def env(**extra: str) -> dict[str, str]:
    # A short provisioning delay keeps the suite quick; everything else is the default.
    # A practice cloud left running for a kept node stops soon after it is empty.
    return clean_env(**{"TPUWIZARD_SANDBOX_DELAY": "0.5", "TPUWIZARD_SANDBOX_LINGER": "5", **extra})


def launch(cwd: Path, *args: str, timeout: float = 240, where=("--zone", ZONE), **extra: str):
    """Run a whole launch; returns (exit code, events, stderr). ``where``: the zone options."""
    proc = subprocess.run(
        tpuwizard_cmd("launch", "--sandbox", "--json", *where, *args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(**extra),
    )
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def launch_until(
    cwd: Path,
    stop_at,
    *args: str,
    sig: int = signal.SIGKILL,
    zone: str = ZONE,
    where: tuple[str, ...] | None = None,
    **extra: str,
):
    """Start a launch, send ``sig`` when ``stop_at(event)`` first holds; return (code, events).
    ``where``: the zone options (``--zones A,B --fan-out``), else ``--zone zone``."""
    proc = subprocess.Popen(
        tpuwizard_cmd("launch", "--sandbox", "--json", *(where or ("--zone", zone)), *args),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(**extra),
    )
    seen = []
    assert proc.stdout is not None
    sent = False
    for line in proc.stdout:
        event = json.loads(line)
        seen.append(event)
        if not sent and stop_at(event):
            os.kill(proc.pid, sig)
            sent = True
    proc.wait(timeout=240)
    proc.stderr.close()  # type: ignore[union-attr]
    assert sent, f"never reached the stop point; saw {[e['event'] for e in seen]}"
    return proc.returncode, seen


def launch_until_on_disk(
    cwd: Path, on_disk, *args: str, timeout: float = 120, where=("--zone", ZONE), **extra: str
):
    """Start a launch, SIGKILL it once ``on_disk()`` holds (checked by polling, not by events).

    For a kill point that no event marks, such as "the ledger holds the intent". Returns (exit
    code, events seen before the kill).
    """
    proc = subprocess.Popen(
        tpuwizard_cmd("launch", "--sandbox", "--json", *where, *args),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env(**extra),
    )
    seen: list[dict] = []
    assert proc.stdout is not None
    reader = threading.Thread(
        target=lambda: seen.extend(json.loads(line) for line in proc.stdout),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    try:
        wait_until(lambda: on_disk() or proc.poll() is not None, timeout, "the kill point")
        assert proc.poll() is None, f"the launch ended first; saw {[e['event'] for e in seen]}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None and proc.returncode is None:
            proc.wait(timeout=60)
    reader.join(timeout=60)
    return proc.returncode, seen


def ledger_holds(home: Path, op: str) -> bool:
    """Does the sandbox ledger file hold a whole ``op`` record yet? (Read as bytes, no parsing.)"""
    path = home / "sandbox" / "ledger.jsonl"
    try:
        lines = path.read_bytes().split(b"\n")[:-1]  # only lines that were finished
    except FileNotFoundError:
        return False
    return any(json.loads(line).get("op") == op for line in lines if line.strip())


def status(cwd: Path, **extra: str) -> list[dict]:
    proc = subprocess.run(
        tpuwizard_cmd("status", "--sandbox", "--json"),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(**extra),
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["resources"]


def teardown_all(cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        tpuwizard_cmd("teardown", "--all", "--yes", "--sandbox", "--json"),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        env=env(**extra),
    )


def sandbox_is_empty(home: Path) -> bool:
    path = home / "sandbox" / "state.json"
    if not path.exists():
        return True  # the sandbox never had to save anything
    state = json.loads(path.read_text())
    return not state["nodes"] and not state["queued"] and not state.get("instances")


def ledger_all_gone(home: Path) -> bool:
    from tpuwizard.core.launch.records.ledger import Ledger

    return Ledger(home / "sandbox" / "ledger.jsonl").open_entries() == []


def names(events: list[dict]) -> list[str]:
    return [e["event"] for e in events]
