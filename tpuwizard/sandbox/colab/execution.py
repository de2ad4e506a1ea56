"""The Colab stand-in's ``exec`` (colab_cli's ``commands/execution.py``): the file's text runs as
one cell in ``/content`` after an ``os.environ`` line per ``--env``; the cell's streams go to
stdout and stderr; an exception in it leaves the exit code 0; when ``--timeout`` passes,
``TimeoutError`` ends the command (exit 1) while the cell keeps running until ``stop``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from tpuwizard.sandbox.colab.state import (
    ENV_KEY_PATTERN,
    locked_state,
    resolve_session,
    runtime_env,
    runtime_root,
)


def say(text: str) -> None:
    print(text, flush=True)


def say_err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _env_prelude(items: list[str]) -> str | None:
    """execution.py's ``_parse_env_vars`` and ``_build_env_prelude``; None: refused (said)."""
    pairs = {}
    for item in items:
        if "=" not in item:
            say_err(f"[colab] Invalid --env value {item!r}. Expected KEY=VALUE.")
            return None
        key, value = item.split("=", 1)
        if not ENV_KEY_PATTERN.fullmatch(key):
            say_err(
                f"[colab] Invalid --env key {key!r}. Expected a valid environment variable name."
            )
            return None
        pairs[key] = value
    if not pairs:
        return ""
    lines = ["import os"] + [f"os.environ[{k!r}] = {v!r}" for k, v in pairs.items()]
    return "\n".join(lines) + "\n"


def _lost(home: Path, name: str) -> int:
    say(f"[colab] Session '{name}' appears to be lost (404/401). Cleaning up.")
    with locked_state(home) as state:
        state["local"].pop(name, None)
    return 1


def exec_command(home: Path, faults: dict[str, str], args: argparse.Namespace) -> int:
    prelude = _env_prelude(args.env)
    if prelude is None:
        return 2
    found = resolve_session(home, args.session)
    if found is None:
        return 1
    name, s = found
    code = Path(args.file).read_text() if args.file else sys.stdin.read()
    if not code.strip():
        return 0
    with locked_state(home) as state:
        state["execs"] += 1
        count = state["execs"]
        if count == int(faults.get("vanish_on_exec") or 1) and "vanish_on_exec" in faults:
            state["server"].pop(s["endpoint"], None)  # the runtime was reclaimed
        alive = s["endpoint"] in state["server"]
    if not alive:
        return _lost(home, name)
    if "hang_exec" in faults and count == 1:  # mid-exec, nothing answers for a while
        until = time.time() + float(faults["hang_exec"] or 3600)
        (home / "hang-until").write_text(str(until))
        while time.time() < until:
            time.sleep(0.1)
    root = runtime_root(home, s["endpoint"])
    cells = root / ".cells"
    cells.mkdir(parents=True, exist_ok=True)
    cell = cells / f"cell-{count}.py"
    cell.write_text(prelude + code)
    timeout = float(faults.get("exec_timeout") or args.timeout)
    # The cell writes to files on the runtime, relayed from here while the command waits: once
    # it gives up (its timeout), the cell runs on, as in a kernel nobody listens to.
    out_path, err_path = cell.with_suffix(".out"), cell.with_suffix(".err")
    with out_path.open("wb") as out, err_path.open("wb") as err:
        # Its own process group, so that `stop` ends it and whatever it started.
        process = subprocess.Popen(
            [sys.executable, "-u", str(cell)],
            cwd=root / "content",
            env=runtime_env(s["accelerator"]),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
    _mark(home, name, f"exec({args.file or 'stdin'})", add=process.pid)
    relay = _Relay(out_path, err_path)
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        relay.step()
        time.sleep(0.05)
    relay.step()
    if process.poll() is None:
        say_err(
            "Traceback (most recent call last):\n"
            '  File "colab_cli/runtime.py", line 220, in execute_code\n'
            "TimeoutError: Timeout waiting for output"
        )
        _mark(home, name, None)  # the cell keeps running in the kernel until `stop`
        return 1
    _mark(home, name, None, drop=process.pid)
    return 0


class _Relay:
    """What the cell wrote since the last step, onto this command's stdout and stderr."""

    def __init__(self, out_path: Path, err_path: Path) -> None:
        self.sources = [(out_path, sys.stdout), (err_path, sys.stderr)]
        self.offsets = [0, 0]

    def step(self) -> None:
        for i, (path, stream) in enumerate(self.sources):
            with path.open("rb") as f:
                f.seek(self.offsets[i])
                data = f.read()
            if data:
                self.offsets[i] += len(data)
                stream.buffer.write(data)
                stream.flush()


def _mark(
    home: Path, name: str, running: str | None, add: int | None = None, drop: int | None = None
) -> None:
    with locked_state(home) as state:
        s = state["local"].get(name)
        if s is None:
            return
        s["running"] = running
        if add is not None:
            s["pids"].append(add)
        if drop is not None and drop in s["pids"]:
            s["pids"].remove(drop)
