"""Fit from the user's own program: compile their training step for each slice, on the laptop.

The user's file defines ``tpuwizard_plan(mesh)`` returning ``(step, args)``. For every slice, a
subprocess (:mod:`tpuwizard.core.plan.program_worker`) builds the slice's devices with libtpu's
compile-only topology (``jax.experimental.topologies.get_topology_desc``), calls the function
with a mesh over them, and compiles the step: ``memory_analysis()`` gives the bytes per device,
``cost_analysis()`` XLA's own step-time estimate. Nothing is allocated and no TPU is needed.
Without libtpu only the state's bytes are known, from the shapes (``method`` says which).

Compiles are cached under the state directory by the lowered program's text and the slice.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpuwizard.core import paths
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog, program_at_hand
from tpuwizard.core.plan.program_result import (
    ProgramInputError,
    SliceProgramFit,
    summarise,
    usable_bytes,
)

INSTALL_LINE = "pip install 'tpuwizard[tpu-plan]'"
DEFAULT_FUNCTION = "tpuwizard_plan"
MARK = "TPUWIZARD-FIT "

# Generations whose slices are a 3-D torus (v4, v5p, tpu7x); the others are a 2-D grid.
_THREE_D = {"v4", "v5p", "tpu7x"}


@dataclass(frozen=True)
class Target:
    """A slice as libtpu's compile-only topology names it."""

    name: str
    topology: str  # "v5e:2x2", "v4:2x2x1"
    host_bounds: tuple[int, int, int]
    devices: int  # the catalog's JAX device count (libtpu's may differ: see SliceProgramFit)


def topology_grid(chips: int, three_d: bool) -> tuple[int, ...]:
    """Chips as a grid: 2-D ``x <= y`` (8 -> 2x4), or the 3-D torus sequence 2x2x1, 2x2x2,
    2x2x4, 2x4x4, 4x4x4... (double the smallest side, the last one on a tie)."""
    if not three_d:
        x = 1
        while x * x * 4 <= chips:
            x *= 2
        return (x, chips // x)
    dims = [1, 1, 1] if chips < 4 else [2, 2, 1]
    while dims[0] * dims[1] * dims[2] < chips:
        smallest = min(dims)
        last = max(i for i, d in enumerate(dims) if d == smallest)
        dims[last] *= 2
    return tuple(dims)


def target_for(slice_: catalog.Slice) -> Target:
    gen = slice_.generation
    grid = topology_grid(slice_.chips, gen.key in _THREE_D)
    # One VM holds a single-host slice; a multi-host slice is made of 4-chip VMs.
    bounds = (*grid, 1)[:3] if slice_.single_host else (2, 2, 1)
    return Target(
        name=slice_.name,
        topology=f"{gen.key}:{'x'.join(map(str, grid))}",
        host_bounds=(bounds[0], bounds[1], bounds[2]),
        devices=slice_.devices,
    )


def parse_mesh(text: str | None) -> list[tuple[str, int | None]]:
    """``data=4,model=2`` -> axes; ``None`` -> one axis "data" over every device. One axis may be
    given without a size (``data,model=2``) and takes the devices left over."""
    if not text:
        return [("data", None)]
    axes: list[tuple[str, int | None]] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, size = part.partition("=")
        name = name.strip()
        if not name.isidentifier():
            raise BadInput(f"--mesh: '{name}' is not an axis name; write e.g. data=4,model=2.")
        if size and not (size.strip().isascii() and size.strip().isdigit() and int(size) >= 1):
            raise BadInput(f"--mesh: the size of '{name}' must be a whole number >= 1.")
        axes.append((name, int(size) if size else None))
    names = [n for n, _ in axes]
    if not axes or len(set(names)) != len(names):
        raise BadInput("--mesh needs distinct axis names, e.g. data=4,model=2.")
    if sum(size is None for _, size in axes) > 1:
        raise BadInput("--mesh: only one axis may be left without a size.")
    return axes


def libtpu_installed() -> bool:
    """libtpu (from ``jax[tpu]``) is importable here; found without importing it."""
    return importlib.util.find_spec("libtpu") is not None


def default_method() -> str:
    return "tpu-compile" if libtpu_installed() else "shapes-only"


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for name in ("jax", "jaxlib", "libtpu"):
        try:
            found.append(f"{name}={version(name)}")
        except PackageNotFoundError:
            found.append(f"{name}=none")
    return ",".join(found)


class ProgramPlanner:
    """Plans one program over slices in a worker subprocess; :meth:`cancel` from any thread."""

    def __init__(
        self,
        program: str | Path,
        slices: list[catalog.Slice],
        function: str = DEFAULT_FUNCTION,
        mesh: str | None = None,
        method: str | None = None,
        reserve: float | None = None,
        route: str = "on-demand",
        use_cache: bool = True,
        receipt_usable: dict[str, float] | None = None,
        measure: bool = False,
        measure_on_cpu: bool = False,
        measure_steps: int = 5,
    ) -> None:
        path = Path(program).expanduser()
        if not path.is_file():
            raise ProgramInputError(
                f"{program} is not a file. Give the Python file that defines "
                f"{function}(mesh), e.g. --program examples/mlp_adam.py."
            )
        if not function.isidentifier():
            raise BadInput(f"--function: '{function}' is not a Python function name.")
        if not slices:
            raise BadInput("No slice to plan over: loosen --slices, --generation or --max-chips.")
        self.method = method or default_method()
        if measure and not measure_on_cpu and not libtpu_installed():
            # JAX sees a TPU only through libtpu: said without starting anything.
            raise program_at_hand.NoTpuHere(
                program_at_hand.NEEDS_TPU.format(what="libtpu is not installed here")
            )
        if self.method == "tpu-compile" and not libtpu_installed():
            raise BadInput(f"Compiling for TPU needs libtpu, which is not here: {INSTALL_LINE}")
        self.program, self.function, self.slices = path.resolve(), function, slices
        self.axes = parse_mesh(mesh)
        self.reserve, self.route, self.use_cache = reserve, route, use_cache
        # Usable GiB per chip by generation from a TPU receipt (--receipt), as fit's.
        self.receipt_usable = dict(receipt_usable or {})
        self.measure, self.measure_on_cpu, self.measure_steps = (
            measure,
            measure_on_cpu,
            measure_steps,
        )
        self.measurement: program_at_hand.Measurement | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._cancelled = threading.Event()

    def request(self, slices: list[catalog.Slice]) -> dict[str, Any]:
        cache = paths.cache_dir() / "program-fit"
        cache.mkdir(parents=True, exist_ok=True)
        return {
            "program": str(self.program),
            "function": self.function,
            "method": self.method,
            "mesh": self.axes,
            "targets": [
                {**target_for(s).__dict__, "usable_total": self._usable(s, 1)} for s in slices
            ],
            "cache_dir": str(cache) if self.use_cache else None,
            "versions": _versions(),
        }

    def _usable(self, slice_: catalog.Slice, devices: int) -> int:
        receipt = self.receipt_usable.get(slice_.generation.key)
        return usable_bytes(slice_, devices, self.reserve, receipt)

    def _summarise(self, slice_: catalog.Slice, record: dict[str, Any]) -> SliceProgramFit:
        receipt = self.receipt_usable.get(slice_.generation.key)
        result = summarise(slice_, record, self.method, self.reserve, self.route, receipt)
        run = self.measurement
        if run is not None and run.slice_name == slice_.name:
            return program_at_hand.with_measurement(result, slice_, run, self.route)
        return result

    def run_measurement(self) -> program_at_hand.Measurement:
        """``--measure``: run the step on the devices at hand (before any compile-only worker:
        one process holds the chip at a time); bad input where it cannot."""
        request = {
            "program": str(self.program),
            "function": self.function,
            "mesh": self.axes,
            "steps": self.measure_steps,
        }

        def started(proc: subprocess.Popen[str]) -> None:
            self._proc = proc
            if self._cancelled.is_set():
                proc.kill()

        self.measurement = program_at_hand.run_measure(
            request, self.slices, allow_cpu=self.measure_on_cpu, started=started
        )
        return self.measurement

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "JAX_", "TPU_"))}
        env.update(
            JAX_PLATFORMS="cpu",  # the user's own arrays stay on the CPU; libtpu only compiles
            TPU_SKIP_MDS_QUERY="1",  # never ask Google's metadata server for settings
            TPU_ACCELERATOR_TYPE=self.slices[0].name,
            TPU_WORKER_HOSTNAMES="localhost",
            # Only compiling: never wait on /tmp/libtpu_lockfile, which a training run (or a
            # second plan) on this machine may hold.
            ALLOW_MULTIPLE_LIBTPU_LOAD="1",
            PYTHONUNBUFFERED="1",
        )
        return env

    def cancel(self) -> None:
        self._cancelled.set()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def results(self) -> Iterator[SliceProgramFit]:
        """One result per slice as each compile finishes; a worker crash costs one slice. With
        ``measure``, the step runs on the devices at hand first, and its slice's row carries it."""
        if self.measure and self.measurement is None:
            self.run_measurement()
        remaining = list(self.slices)
        while remaining and not self._cancelled.is_set():
            done = yield from self._run_worker(remaining)
            if self._cancelled.is_set():
                return
            if done < len(remaining):  # the worker died on remaining[done]
                yield self._summarise(remaining[done], {"error": self._crash_text})
                done += 1
            remaining = remaining[done:]

    _crash_text = ""

    def _run_worker(self, slices: list[catalog.Slice]) -> Generator[SliceProgramFit, None, int]:
        by_name, done = {s.name: s for s in slices}, 0
        with tempfile.TemporaryFile("w+") as stderr:
            proc = self._proc = subprocess.Popen(
                [sys.executable, "-m", "tpuwizard.core.plan.program_worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env=self.environment(),
            )
            assert proc.stdin is not None and proc.stdout is not None
            try:
                if self._cancelled.is_set():
                    return 0
                # One line of request; stdin then stays open: the worker exits when it closes.
                proc.stdin.write(json.dumps(self.request(slices)) + "\n")
                proc.stdin.flush()
                for line in proc.stdout:
                    if not line.startswith(MARK):
                        continue
                    record = json.loads(line[len(MARK) :])
                    if "problem" in record:
                        raise ProgramInputError(record["message"], record["problem"])
                    yield self._summarise(by_name[record["slice"]], record)
                    done += 1
            except BrokenPipeError:
                pass  # cancelled while the request was being written
            finally:
                # Nothing outlives the plan: an abandoned or cancelled one kills its compiler.
                if proc.poll() is None and done < len(slices):
                    proc.kill()
                with contextlib.suppress(BrokenPipeError):
                    proc.stdin.close()
                code = proc.wait()
            stderr.seek(0)
            tail = [ln for ln in stderr.read().splitlines() if ln.strip()][-3:]
        self._crash_text = f"the compiler process exited with {code}: " + " | ".join(tail)
        return done


def plan_program(
    program: str | Path,
    slices: list[catalog.Slice],
    on_result: Callable[[SliceProgramFit], None] | None = None,
    **options: Any,
) -> tuple[str, list[SliceProgramFit]]:
    """Plan ``program`` over ``slices``: (method, one result per slice in the order given)."""
    planner = ProgramPlanner(program, slices, **options)
    found = []
    for result in planner.results():
        found.append(result)
        if on_result is not None:
            on_result(result)
    return planner.method, found


def machine_can_compile() -> bool:
    """libtpu's wheels are for Linux on x86-64 (and arm64); elsewhere only shapes are planned."""
    return platform.system() == "Linux" and platform.machine() in ("x86_64", "aarch64")
