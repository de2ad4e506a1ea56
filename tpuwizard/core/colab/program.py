"""Google's ``colab`` program (google-colab-cli 0.7.5), called as docs/reference/colab-cli.md
describes its code: one process per command, stdin closed (its sign-in reads a code from stdin:
closed, it fails at once instead of waiting for a browser), every argument a list item (nothing
reaches a shell).

Practice runs the stand-in program (tpuwizard/sandbox/colab/cli.py) the same way: the session
layer gives its argv and environment.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SIGN_IN_WORDS = "To authorize colab-cli, visit this URL"
LOST_WORDS = ("appears to be lost", "not found.")
CALL_TIMEOUT_S = 300.0  # new, upload, download, stop: the CLI's own retries fit well inside
SESSION_LINE = re.compile(r"^\[(?P<name>[^\]]+)\] (?P<endpoint>\S+) \| Hardware: (?P<hw>[^|]+)")


class ColabCallFailed(Exception):
    """A ``colab`` command failed: ``kind`` says how (``sign-in``, ``lost``, ``refused``,
    ``timeout``, ``silent``, ``failed``), ``detail`` is what it printed."""

    def __init__(self, what: str, kind: str, detail: str, code: int | None = None) -> None:
        super().__init__(f"{what}: {detail}")
        self.what, self.kind, self.detail, self.code = what, kind, detail, code


# ``colab usage`` (the account's compute units) first appears in google-colab-cli 0.8.0 (a fork's
# release notes; PyPI serves 0.7.5): its code is commands/usage.py and consumption.py.
USAGE_SINCE = (0, 8, 0)
VERSION_LINE = re.compile(r"^Version: (?P<version>\S+)", re.MULTILINE)
USAGE_LINES = re.compile(
    r"^Current balance: (?P<balance>-?[\d.]+) compute units\n"
    r"Usage rate: (?P<rate>-?[\d.]+)/hr\n"
    r"Active assignments: (?P<count>\d+)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Usage:
    """``colab usage`` (consumption.py's format_consumption_status): the account's balance, its
    hourly rate, and its active assignments, every session of the account."""

    balance: float
    rate_hourly: float
    assignments: int


def version_tuple(version: str) -> tuple[int, ...] | None:
    """``0.8.0`` as (0, 8, 0); None for what is not a plain dotted version."""
    parts = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", version)
    if parts is None:
        return None
    return tuple(int(p) for p in parts.groups(default="0"))


def lacking(version: str) -> tuple[str, ...]:
    """The commands tpuwizard would use that a CLI of ``version`` lacks (unknown: none
    assumed; ``usage`` is then tried and its refusal read)."""
    parsed = version_tuple(version)
    return ("usage",) if parsed is not None and parsed < USAGE_SINCE else ()


@dataclass(frozen=True)
class Listed:
    """One line of ``colab sessions``: a runtime the account holds now."""

    name: str  # "?" where the local state has no name for it
    endpoint: str
    hardware: str


def classify(what: str, code: int, out: str, err: str) -> ColabCallFailed:
    """A failed command's kind, read from the words colab_cli's code prints."""
    said = (err.strip() or out.strip()).splitlines()
    text = "\n".join(line for line in said if line.strip())
    if SIGN_IN_WORDS in err:
        urls = [line.strip() for line in err.splitlines() if line.strip().startswith("https://")]
        return ColabCallFailed(what, "sign-in", f"it printed {urls[0] if urls else 'a URL'}", code)
    if any(words in out for words in LOST_WORDS):
        return ColabCallFailed(what, "lost", out.strip(), code)
    if "TimeoutError" in err:
        return ColabCallFailed(what, "timeout", text, code)
    if "Allocation refused" in err or "Backend rejected accelerator" in err:
        return ColabCallFailed(what, "refused", text, code)
    return ColabCallFailed(what, "failed", text[-2000:], code)


class ColabProgram:
    """The ``colab`` commands a run makes."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.env = {**os.environ, **(env or {})}

    def command(self, *args: str) -> list[str]:
        return [*self.argv, *args]

    def call(self, what: str, *args: str, timeout_s: float = CALL_TIMEOUT_S) -> str:
        """Run one command; its stdout, or :class:`ColabCallFailed`."""
        try:
            done = subprocess.run(
                self.command(*args),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                encoding="utf-8",
                errors="replace",  # what it prints is read, never refused for one byte
                env=self.env,
                timeout=timeout_s,
                check=False,
                start_new_session=True,  # a terminal's Ctrl+C is tpuwizard's to handle
            )
        except subprocess.TimeoutExpired:
            raise ColabCallFailed(
                what, "silent", f"`colab {args[0]}` gave no answer in {timeout_s:.0f} s"
            ) from None
        except OSError as err:
            raise ColabCallFailed(what, "failed", f"could not run {self.argv[0]}: {err}") from None
        if done.returncode != 0:
            raise classify(what, done.returncode, done.stdout, done.stderr)
        if SIGN_IN_WORDS in done.stderr:
            raise classify(what, 0, done.stdout, done.stderr)
        return done.stdout

    def version(self) -> str:
        """``colab version`` ("Version: X", utility.py); "" where it says no version."""
        try:
            out = self.call("asking the colab CLI its version", "version", timeout_s=60)
        except ColabCallFailed:
            return ""
        found = VERSION_LINE.search(out)
        return found["version"] if found else ""

    def usage(self) -> Usage | None:
        """``colab usage`` (0.8.0); None where this CLI has no such command (Click's exit 2).
        A failure to fetch (its "[colab] Warning: failed to fetch compute-unit info", exit 1)
        raises :class:`ColabCallFailed`."""
        try:
            out = self.call("reading the account's compute units", "usage", timeout_s=60)
        except ColabCallFailed as err:
            if err.code == 2 and "No such command" in err.detail:
                return None
            raise
        found = USAGE_LINES.search(out)
        if found is None:
            raise ColabCallFailed("reading the account's compute units", "failed", out.strip())
        return Usage(float(found["balance"]), float(found["rate"]), int(found["count"]))

    def new(self, name: str, tpu: str) -> None:
        self.call("creating the session", "new", "-s", name, "--tpu", tpu)

    def sessions(self, timeout_s: float = CALL_TIMEOUT_S) -> list[Listed]:
        out = self.call("listing the sessions", "sessions", timeout_s=timeout_s)
        listed = []
        for line in out.splitlines():
            if match := SESSION_LINE.match(line.strip()):
                listed.append(Listed(match["name"], match["endpoint"], match["hw"].strip()))
        return listed

    def status_line(self, name: str, timeout_s: float) -> str:
        what = "asking for the session's status"
        return self.call(what, "status", "-s", name, timeout_s=timeout_s)

    def upload(self, name: str, local: Path, remote: str) -> None:
        self.call("uploading the script's folder", "upload", "-s", name, str(local), remote)

    def download(self, name: str, remote: str, local: Path) -> None:
        self.call(f"downloading {remote}", "download", "-s", name, remote, str(local))

    def stop(self, name: str) -> None:
        self.call("stopping the session", "stop", "-s", name)

    def exec_argv(self, name: str, cell: Path, timeout_s: float, env: dict[str, str]) -> list[str]:
        """``exec``'s command line: it is followed as a process (run.py streams its lines)."""
        pairs = [item for key, value in env.items() for item in ("--env", f"{key}={value}")]
        return self.command(
            "exec", "-s", name, "-f", str(cell), "--timeout", f"{timeout_s:g}", *pairs
        )
