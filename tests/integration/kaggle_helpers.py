"""What the Kaggle route's end-to-end tests share: the user's project, kaggle's client pointed at
a stand-in the test runs (KAGGLE_API_ENVIRONMENT=LOCALHOST and the stand-in as its HTTP proxy),
`launch --route kaggle --json` run as a user runs it, its events by name."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.conftest import clean_env, tpuwizard_cmd
from tpuwizard.sandbox.kaggle.server import KaggleStandIn, start_kaggle_stand_in

MAIN = """\
import jax, sys
print("devices:", len(jax.devices()), jax.devices()[0].platform)
open("result.txt", "w").write("done")
"""


def make_project(tmp_path: Path) -> Path:
    """The user's folder: the script, nothing else."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "main.py").write_text(MAIN)
    return folder


def stand_ins(tmp_path: Path) -> Iterator[Callable[..., KaggleStandIn]]:
    """A fixture's body: start(faults) starts a stand-in for the user ada; all end after."""
    servers: list[KaggleStandIn] = []

    def start(faults: str | None = None) -> KaggleStandIn:
        server = start_kaggle_stand_in(tmp_path / "kaggle", faults, username="ada")
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.switch_off()


def cli_env(tmp_path: Path, server: KaggleStandIn | None = None, **extra: str) -> dict[str, str]:
    """A user's environment: a HOME of its own; with ``server``, kaggle pointed at it."""
    env = clean_env(HOME=str(tmp_path / "home"), TPUWIZARD_KAGGLE_POLL="0.1", **extra)
    for name in ("NO_PROXY", "no_proxy", "KAGGLE_API_TOKEN", "KAGGLE_CONFIG_DIR"):
        env.pop(name, None)
    if server is not None:
        env.update(
            KAGGLE_API_ENVIRONMENT="LOCALHOST",
            HTTP_PROXY=server.proxy,
            KAGGLE_API_TOKEN=server.token,
            # kaggle asks for http://localhost/...; the practice Google sandbox of `status`
            # and `teardown` (on 127.0.0.1) is reached directly, not through the stand-in.
            NO_PROXY="127.0.0.1",
        )
    return env


def launch(cwd: Path, env: dict[str, str], *args: str, timeout: float = 180):
    proc = subprocess.run(
        tpuwizard_cmd("launch", "--route", "kaggle", "--json", "--script", "main.py", *args),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def named(events: list[dict], name: str) -> list[dict]:
    return [e for e in events if e["event"] == name]


class Launched:
    """`launch --route kaggle --json` running in the background, its events read as they come."""

    def __init__(self, cwd: Path, env: dict[str, str], *args: str) -> None:
        import threading

        self.proc = subprocess.Popen(
            tpuwizard_cmd("launch", "--route", "kaggle", "--json", "--script", "main.py", *args),
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.events: list[dict] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        self.events.extend(json.loads(line) for line in self.proc.stdout)

    def end(self, timeout: float = 60) -> tuple[int, str]:
        """Its exit code and stderr, once it exits (killed if it does not)."""
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self.reader.join(timeout=60)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read()


def cli(cwd: Path, env: dict[str, str], *args: str, timeout: float = 120):
    """Any tpuwizard command: its exit code, stdout, stderr."""
    proc = subprocess.run(
        tpuwizard_cmd(*args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    return proc.returncode, proc.stdout, proc.stderr
