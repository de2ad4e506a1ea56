"""The packages a launch adds, resolved on this computer before anything is created.

A misspelt name or a package that cannot sit beside the pinned JAX would otherwise be found only
by the worker's bootstrap, once the TPU exists and bills. uv resolves the set here first, for the
worker's Python and platform, from the sources the worker's own install uses (the caller builds
the command: ``uv pip compile`` for a real VM, a dry run beside the practice worker's packages in
practice): from uv's cache alone first, then online. Where the index cannot be reached, the check
could not run, and says so; it never refuses what it could not look up.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from tpuwizard.core.remote.packages import NO_ROUTE_WORDS, uv_reason

CHECK_TIMEOUT_S = 120  # a resolution online: a few seconds; a slow index, a minute


class Verdict(StrEnum):
    FITS = "fits"  # uv found a set: the worker can install it
    REFUSED = "refused"  # uv says no such set exists (a name, a version, the JAX pin)
    UNCHECKED = "unchecked"  # the check could not run (no uv here, the index out of reach)


@dataclass(frozen=True)
class PackageCheck:
    """What the check found; ``why``: uv's reason, or why it could not run."""

    verdict: Verdict
    why: str = ""


def resolve(
    command_for: Callable[[str], list[str]],
    lines: Sequence[str],
    env: dict[str, str] | None = None,
    timeout: float = CHECK_TIMEOUT_S,
) -> PackageCheck:
    """Run ``command_for(requirements_file)`` (a uv resolution) over ``lines``: from uv's cache
    alone first (quick, and enough once a launch downloaded them), then online whatever the
    offline attempt said; only the online answer refuses."""
    base = dict(os.environ if env is None else env)
    base.update(UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1")
    base.pop("UV_OFFLINE", None)
    with tempfile.TemporaryDirectory(prefix="tpuwizard-packages-") as folder:
        listed = os.path.join(folder, "requirements.txt")
        with open(listed, "w") as out:
            out.write("".join(f"{line}\n" for line in lines))
        command = command_for(listed)
        try:
            offline = subprocess.run(
                command, env=dict(base, UV_OFFLINE="1"), capture_output=True, text=True,
                timeout=timeout,
            )  # fmt: skip
            if offline.returncode == 0:
                return PackageCheck(Verdict.FITS)
            online = subprocess.run(
                command, env=base, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return PackageCheck(Verdict.UNCHECKED, f"uv took over {timeout:.0f} s")
        except OSError as err:
            return PackageCheck(Verdict.UNCHECKED, f"uv could not run ({err})")
    return judged(online)


def judged(online: subprocess.CompletedProcess[str]) -> PackageCheck:
    """The online attempt's answer: a set found, the index out of reach (not checked), or uv's
    reason why no set exists."""
    if online.returncode == 0:
        return PackageCheck(Verdict.FITS)
    lines = online.stderr.splitlines()
    reason = uv_reason(lines) or f"uv exited {online.returncode}"
    if any(words in online.stderr for words in NO_ROUTE_WORDS):
        return PackageCheck(Verdict.UNCHECKED, f"the package index cannot be reached ({reason})")
    return PackageCheck(Verdict.REFUSED, reason)
