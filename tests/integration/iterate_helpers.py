"""Driving `tpuwizard up`, `run`, `watch` and `down` in subprocesses against the sandbox."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import ZONE, env


def json_events(stdout: str) -> list[dict]:
    """A `--json` command's stdout: one event per line (the launch's vocabulary)."""
    return [json.loads(line) for line in stdout.splitlines()]


def up(
    cwd: Path, *args: str, accelerator: str = "v5litepod-1", zone: str = ZONE, **extra: str
) -> dict:
    """`up --json`'s last line: the Kept event, once the node is handed over."""
    proc = subprocess.run(
        tpuwizard_cmd("up", "--sandbox", "--json", "--zone", zone, "--accelerator", accelerator)
        + list(args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        env=env(**extra),
    )
    assert proc.returncode == 0, proc.stderr
    events = json_events(proc.stdout)
    assert events[-1]["event"] == "kept", events[-1]
    return events[-1]


def run(
    cwd: Path, *args: str, timeout: float = 120, **extra: str
) -> subprocess.CompletedProcess[str]:
    """``extra``: the environment's settings (a rehearsal's faults are each command's own)."""
    return subprocess.run(
        tpuwizard_cmd("run", "--sandbox", *args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(**extra),
    )


def start(cwd: Path, command: str, *args: str, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        tpuwizard_cmd(command, "--sandbox", *args),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env(**extra),
    )


def read_until(proc: subprocess.Popen[str], wanted, seen: list[str]) -> str:
    """Read stdout lines into ``seen`` until ``wanted(line)`` holds; return that line."""
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(line.rstrip("\n"))
        if wanted(seen[-1]):
            return seen[-1]
    raise AssertionError(f"the output ended without the line; saw {seen}")


def down(cwd: Path, name: str) -> dict:
    proc = subprocess.run(
        tpuwizard_cmd("down", name, "--yes", "--sandbox", "--json"),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        env=env(),
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def stop_lasting_sandbox(home: Path) -> None:
    """End the practice cloud that `up` left running (after the test deleted its nodes)."""
    info = home / "sandbox" / "server.json"
    with contextlib.suppress(OSError, ValueError, KeyError):  # none, gone, or half written
        os.kill(int(json.loads(info.read_text())["pid"]), signal.SIGTERM)


def end_practice(home: Path) -> None:
    """End what practice left running under ``home``: the lasting sandbox, and the jobs (a
    watchdog, a script) of nodes still in it, which a deleted node would have ended."""
    from tpuwizard.sandbox.workers.processes import end_worker_processes

    stop_lasting_sandbox(home)
    for folder in ("workers", "instances"):  # the TPU API's nodes, Compute Engine's instances
        for node in (home / "sandbox" / folder).glob("*/*/*"):
            end_worker_processes(node)


def watchdog_story(home: Path) -> str:
    """What the practice watchdogs under ``home`` met, for a test that waited on their delete
    in vain: each node's own log (sandbox/node_log.py), the watchdog jobs' logs of nodes still
    there, and the lasting sandbox's log. Says whether a watchdog was refused, never armed,
    killed, gave up, or was late."""
    sandbox = home / "sandbox"
    parts = [f"now {time.time():.2f}"]
    logs = sorted((sandbox / "node-logs").glob("**/*.log"))
    logs += sorted((sandbox / "workers").glob("*/*/*/w0/.tpuwizard/jobs/watchdog-*/log"))
    logs += [sandbox / "lasting-sandbox.log"]
    for log in logs:
        with contextlib.suppress(OSError):
            parts.append(
                f"--- {log.relative_to(sandbox)}\n{log.read_text(errors='replace')[-8000:]}"
            )
    return "\n".join(parts)
