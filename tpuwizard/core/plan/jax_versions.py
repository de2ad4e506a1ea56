"""The ``jax[tpu]`` versions a worker may get: tpuwizard's table, each entry with its facts and
what was run with it.

Every fact below is from PyPI's metadata for that release (the wheel's ``Requires-Python`` and
its ``tpu`` extra's ``Requires-Dist`` lines, and the simple index's upload time), read on the
date given in :data:`READ`. PyPI's metadata does not say which TPU generations a libtpu release
supports, and no version here was run on a TPU by this project: :attr:`JaxVersion.tpu_runs`
is empty for each, and the table says so rather than guess.

What *was* run here is recorded per entry (:attr:`JaxVersion.runs_here`): the verifier and the
course's two programs on CPU, in the practice sandbox, and on which Python (for 0.11.2 and
0.12.0.1: by hand on 2026-12-02, launch --sandbox --jax V on v5litepod-1 and -4, 0.12.0.1 also
on v5litepod-16's four workers, the course's numbers 140.0, 10416.0 and its prediction
reproduced; then in the rotating drill). The default is the newest version the test suite runs
in the sandbox at every run (:data:`DEFAULT`): 0.12.0.1, on a Python 3.12 worker with its
packages in this computer's shared worker environment (sandbox/workers/envs.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

READ = "2026-12-02"
PYPI_PROJECT = "https://pypi.org/project/jax/{version}/"


@dataclass(frozen=True)
class JaxVersion:
    """One ``jax[tpu]`` release and what is known about it here."""

    version: str
    libtpu: str  # what its ``tpu`` extra pins, e.g. "0.0.42.*"
    jaxlib: str  # the jaxlib its ``tpu`` extra pins
    python: str  # its Requires-Python
    uploaded: str  # the jax wheel's upload date on PyPI
    # What this project ran with it on CPU, in the practice sandbox ("verifier", "course
    # programs"), on which Python, and whether the test suite runs it every time.
    runs_here: tuple[str, ...]
    python_here: str | None
    in_suite: bool
    # Run by tests/integration/test_jax_table_drill.py, one version per suite run (rotating):
    # every version but the default (each of 3.12 is about 140 MB downloaded once).
    in_drill: bool = False
    # The TPU generations it was run on by this project: none so far.
    tpu_runs: tuple[str, ...] = ()

    @property
    def requirement(self) -> str:
        return f"jax[tpu]=={self.version}"

    @property
    def source(self) -> str:
        return f"{PYPI_PROJECT.format(version=self.version)} (metadata read {READ})"

    @property
    def min_python(self) -> tuple[int, int]:
        """The least Python it installs on, from ``>=3.N``."""
        major, minor = self.python.removeprefix(">=").split(".")[:2]
        return int(major), int(minor)

    def generation_support(self, generation: str) -> str:
        """What is known of it on one TPU generation: only what was run there."""
        if generation in self.tpu_runs:
            return f"run on {generation} by this project"
        return (
            f"not run on {generation} by this project; PyPI's metadata does not say which "
            f"generations libtpu {self.libtpu} supports"
        )


# Newest last. Read from PyPI on READ: `pip download --no-deps jax==V` (METADATA) and the
# simple index's JSON (upload-time).
TABLE: tuple[JaxVersion, ...] = (
    JaxVersion(
        version="0.10.2",
        libtpu="0.0.42.*",
        jaxlib="0.10.2",
        python=">=3.11",
        uploaded="2026-06-17",
        runs_here=("verifier", "course programs"),
        python_here="3.11",
        in_suite=False,
        in_drill=True,
    ),
    JaxVersion(
        version="0.11.2",
        libtpu="0.0.48.*",
        jaxlib="0.11.2",
        python=">=3.12",
        uploaded="2026-09-17",
        runs_here=("verifier", "course programs"),
        python_here="3.12",
        in_suite=False,
        in_drill=True,
    ),
    JaxVersion(
        version="0.12.0.1",
        libtpu="0.0.50.*",
        jaxlib="0.12.0.1",
        python=">=3.12",
        uploaded="2026-10-21",
        runs_here=("verifier", "course programs"),
        python_here="3.12",
        in_suite=True,
    ),
)

# Real workers get the newest version the suite runs in the sandbox every time.
DEFAULT: JaxVersion = [v for v in TABLE if v.in_suite][-1]


def versions() -> list[str]:
    return [v.version for v in TABLE]


def find(version: str) -> JaxVersion | None:
    return next((v for v in TABLE if v.version == version), None)


def jax_problems(version: str | None) -> list[str]:
    """Why ``version`` cannot be a worker's JAX; empty when it can (None: the default)."""
    if version is None or find(version) is not None:
        return []
    listed = ", ".join(versions())
    return [
        f"JAX {version!r} is not in tpuwizard's table of worker versions: choose one of "
        f"{listed} (default {DEFAULT.version}). The table lists only versions whose libtpu and "
        "Python were read from PyPI and whose runs are recorded."
    ]


def check_jax(version: str) -> None:
    """A typed version (plain mode): :class:`BadInput` saying why it cannot be the worker's."""
    from tpuwizard.core.errors import BadInput

    problems = jax_problems(version.strip() or None)
    if problems:
        raise BadInput(problems[0])


def laptop_jax() -> str | None:
    """The JAX installed beside tpuwizard on this computer, read without importing it."""
    # importlib.metadata costs a command's start ~50 ms (email, zipfile): only when asked.
    from importlib import metadata

    try:
        return metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None


def differs_words(laptop: str | None, worker: str | None) -> str | None:
    """A line when this computer's JAX is not the worker's; None when they agree."""
    if laptop is None or worker is None or laptop == worker:
        return None
    return (
        f"This computer has JAX {laptop}, the worker JAX {worker}: a program can behave "
        "differently across JAX versions, so a result here may not match the worker's."
    )


def compile_words(worker: str | None, compiled: bool) -> str:
    """``fit --program``: which JAX compiled the program (or, ``compiled`` False, traced its
    shapes), which is always this computer's, and where the worker's version (None: the
    default) is another, that, and why fit did not use it."""
    laptop = laptop_jax()
    version = worker or DEFAULT.version
    did = "Compiled" if compiled else "Counted the shapes"
    if laptop == version:
        return f"{did} with this computer's JAX {laptop}, the worker's version too."
    why = "fit uses the JAX installed beside tpuwizard"
    entry = find(version)
    here = sys.version_info[:2]
    if entry is not None and here < entry.min_python:
        why += (
            f", and JAX {version} needs Python {entry.python.removeprefix('>=')} or newer "
            f"(this is {here[0]}.{here[1]})"
        )
    return (
        f"{did} with this computer's JAX {laptop or 'none'}, not the worker's {version} "
        f"({why}): XLA's memory use and step time can differ between JAX versions."
    )
