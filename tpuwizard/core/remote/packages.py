"""Packages added to the worker venv beside the pinned JAX, and what uv's failure meant.

The install runs on every worker with uv, after the pinned ``jax[tpu]`` is in the venv, under a
constraint file holding the jax, jaxlib and libtpu versions found there: uv may then install an
added package only where it works with that JAX, and says "No solution found" when none does.
That, and every other failure, is named before the user's script runs (the bootstrap's, or
``tpuwizard run``'s, first step). On a kept node the same command installs only what is new:
uv leaves a package already satisfied alone.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from tpuwizard.core.remote.bootstrap import (
    NO_ROUTE_FIX,
    NO_ROUTE_WHY,
    TPU_REQUIREMENT,
    VENV,
    VERSIONS_SNIPPET,
)
from tpuwizard.core.remote.transports import REMOTE_DIR

REQUIREMENTS_FILE = f"{REMOTE_DIR}/added-packages.txt"
CONSTRAINTS_FILE = f"{REMOTE_DIR}/held-by-tpuwizard.txt"
FAILED_KIND = "packages_failed"
# The constraint: whatever jax, jaxlib and libtpu the venv holds, exactly.
HELD_SNIPPET = (
    "from importlib import metadata\n"
    "for n in ('jax', 'jaxlib', 'libtpu', 'libtpu-nightly'):\n"
    "    try:\n"
    "        print(n + '==' + metadata.version(n))\n"
    "    except metadata.PackageNotFoundError:\n"
    "        pass\n"
)
# uv's own words (its output is plain text when it writes to a file, as a detached job does).
NO_ROUTE_WORDS = ("Failed to fetch", "Network is unreachable", "client error (Connect)")
_NOT_ON_INDEX = re.compile(r"Because (\S+) was not found in the package registry")
_UNSATISFIABLE = "No solution found when resolving dependencies"


def install_commands(specs: Sequence[str]) -> list[str]:
    """Bash lines (inside the bootstrap, or on their own on a kept node) that install ``specs``
    into the venv under the constraint; on failure they print the marker and exit 1."""
    if not specs:
        return []
    q = shlex.quote
    marker = "TPUWIZARD " + json.dumps({"kind": FAILED_KIND})
    listed = " ".join(specs)
    return [
        'export PATH="$HOME/.local/bin:$PATH"',
        f"printf '%s\\n' {' '.join(q(s) for s in specs)} > {q(REQUIREMENTS_FILE)}",
        f"{q(VENV)}/bin/python -c {q(HELD_SNIPPET)} > {q(CONSTRAINTS_FILE)}",
        f"echo {q(f'installing {listed} with uv (jax, jaxlib and libtpu held as they are)')}",
        f"uv pip install --python {q(VENV)}/bin/python -r {q(REQUIREMENTS_FILE)} "
        f"-c {q(CONSTRAINTS_FILE)} 2>&1 || {{ echo {q(marker)}; exit 1; }}",
    ]


def install_script(specs: Sequence[str], report: Sequence[str] = ()) -> str:
    """The install on its own (``bash -c``), for a node whose venv exists already; once it
    worked, the venv's versions line (as the bootstrap's last line) gives those of ``report``,
    the packages' names, so what was added is said."""
    if not specs:
        return "set -u"
    q = shlex.quote
    versions = f"{q(VENV)}/bin/python -c {q(VERSIONS_SNIPPET)} '' " + " ".join(map(q, report))
    return "\n".join(["set -u", *install_commands(specs), versions.rstrip()])


@dataclass(frozen=True)
class InstallFailure:
    """Why uv did not install the packages, and what to do."""

    kind: str  # "no_route", "not_found", "conflict" or "failed"
    why: str
    fix: str


def uv_reason(lines: Sequence[str]) -> str:
    """uv's explanation: its ``error:`` line, then the lines after it, in one sentence of at
    most a few hundred characters."""
    for i, line in enumerate(lines):
        if line.lstrip().startswith("error:"):
            first = re.sub(r"^\s*error:\s*", "", line).strip()
            rest = " ".join(
                re.sub(r"^cause:\s*", "", x.strip())
                for x in lines[i + 1 :]
                if x.strip() and "TPUWIZARD" not in x
            )
            text = f"{first}: {rest}" if rest else first
            text = text.rstrip(".")
            return text if len(text) <= 400 else text[:400] + "..."
    return ""


def install_failure(lines: Sequence[str], specs: Sequence[str], code: int) -> InstallFailure:
    """What a failed install's output says (``lines``: the worker's, in order)."""
    listed = ", ".join(specs)
    text = "\n".join(lines)
    if any(words in text for words in NO_ROUTE_WORDS):
        return InstallFailure(
            "no_route",
            f"uv could not download {listed}: {NO_ROUTE_WHY}",
            NO_ROUTE_FIX,
        )
    missing = _NOT_ON_INDEX.search(text)
    if missing:
        return InstallFailure(
            "not_found",
            f"no package called {missing.group(1)} exists on PyPI",
            "check the name on pypi.org: a package's name can differ from the module you "
            "import (orbax is orbax-checkpoint, sklearn is scikit-learn)",
        )
    cause = uv_reason(lines)
    if _UNSATISFIABLE in text:
        held = any(re.search(rf"\b{n}\b", cause) for n in ("jax", "jaxlib", "libtpu"))
        if held:
            return InstallFailure(
                "conflict",
                f"{listed} cannot be installed beside the pinned {TPU_REQUIREMENT}, which "
                f"tpuwizard never changes. uv says: {cause}",
                "ask for a version that works with that JAX (an older one, e.g. NAME==VERSION), "
                "or leave the package out",
            )
        return InstallFailure(
            "conflict",
            f"{listed} cannot be installed together. uv says: {cause}",
            "loosen or remove one of the versions asked for",
        )
    return InstallFailure(
        "failed",
        f"uv could not install {listed} (exit {code})" + (f": {cause}" if cause else ""),
        "read uv's output in the worker's lines above",
    )
