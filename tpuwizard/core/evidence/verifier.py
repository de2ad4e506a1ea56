"""Locating the shipped verifier and running it locally on N CPU (or real) devices."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Generator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import parse_marker_line
from tpuwizard.core.plan import catalog

VERIFIER_FILENAME = "tpu_verify.py"
WATCHDOG_FILENAME = "tpu_watchdog.py"


def verifier_path() -> Path:
    """The verifier file shipped with tpuwizard (uploaded to hosts, embedded in notebooks)."""
    return Path(str(resources.files("tpuwizard_verify").joinpath(VERIFIER_FILENAME)))


def verifier_source() -> str:
    return verifier_path().read_text("utf-8")


def watchdog_source() -> str:
    """The on-VM watchdog, shipped beside the verifier."""
    return resources.files("tpuwizard_verify").joinpath(WATCHDOG_FILENAME).read_text("utf-8")


def check_device_count(devices: int) -> None:
    """``--devices`` is 1 up to the largest slice in the catalog. XLA's flag parser takes a C int
    and, given more, aborts the verifier with its whole flag list instead of a message."""
    largest = max(catalog.all_slices(), key=lambda s: s.devices)
    if not 1 <= devices <= largest.devices:
        raise BadInput(
            f"--devices must be 1 to {largest.devices} (the largest slice in the catalog, "
            f"{largest.name}, has {largest.devices} devices), not {devices}."
        )


def cpu_device_env(devices: int, base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment that gives JAX ``devices`` CPU devices (XLA's host-platform device count)."""
    env = dict(os.environ if base is None else base)
    flags = [
        f
        for f in env.get("XLA_FLAGS", "").split()
        if not f.startswith("--xla_force_host_platform_device_count")
    ]
    flags.append(f"--xla_force_host_platform_device_count={devices}")
    env["XLA_FLAGS"] = " ".join(flags)
    return env


def verifier_flags(perf: bool = False, precision: bool = False, trace: bool = False) -> list[str]:
    """The verifier's options for the optional checks."""
    return [
        flag
        for flag, wanted in (("--perf", perf), ("--precision", precision), ("--trace", trace))
        if wanted
    ]


@dataclass
class VerifierOutput:
    """One line the verifier printed; ``payload`` is set for machine-readable lines."""

    text: str
    payload: dict[str, Any] | None


def run_local(
    expect: str,
    devices: int,
    receipt: Path,
    perf: bool = False,
    python: str | None = None,
    precision: bool = False,
    trace: bool = False,
) -> Generator[VerifierOutput, None, int]:
    """Run the verifier in a subprocess, yielding its lines as they come; then its exit code.

    The generator's return value (``StopIteration.value``) is the exit status. With ``trace``
    the profiler trace goes to ``trace/`` beside the receipt.
    """
    check_device_count(devices)
    cmd = [
        python or sys.executable,
        "-u",
        str(verifier_path()),
        "--expect",
        expect,
        "--min-devices",
        str(devices if expect == "cpu" else 1),
        "--receipt",
        str(receipt),
    ]
    cmd += verifier_flags(perf=perf, precision=precision, trace=trace)
    env = cpu_device_env(devices) if expect == "cpu" else dict(os.environ)
    env["JAX_PLATFORMS"] = expect
    with subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        bufsize=1,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            text = line.rstrip("\n")
            yield VerifierOutput(text=text, payload=parse_marker_line(text))
        return proc.wait()
