"""The subprocess that runs a user's training step on the accelerator at hand (``fit --measure``).

Run as ``python -m tpuwizard.core.plan.program_measure`` with a JSON request on stdin, in the
environment as it is: unlike the compile-only worker (``program_worker``), nothing of libtpu's
``TPU_*`` settings is stripped, since a real chip needs them. It says first which devices it sees
(``at_hand``), then builds the step's arguments from its ``ShapeDtypeStruct``s as real arrays on
their shardings, compiles, runs one step, times a few more and says the peak of HBM the runs
took (``memory_stats()``: ``peak_bytes_in_use`` + ``peak_bytes_reserved``; temporaries sit in the
reserved pool) and the median step time. A compile the compiler refuses, or a step that runs out
of memory, is a record saying so, never a crash.

Only with ``allow_cpu`` does it measure on CPU devices, standing in for the slice it names (a
practice run): the figures are then labelled as the CPU's and never a TPU's.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from tpuwizard.core.plan.program_worker import (
    ProgramProblem,
    abstract_args,
    call_user,
    emit,
    exit_with_parent,
    load_function,
    mesh_shape,
)

# Past this many seconds of timed steps, no further step is started (at least one is timed).
TIMING_BUDGET_S = 20.0
_OOM_WORDS = ("RESOURCE_EXHAUSTED", "out of memory", "Out of memory")


def is_out_of_memory(err: BaseException) -> bool:
    text = str(err)
    return any(word in text for word in _OOM_WORDS)


def first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return (lines[0] if lines else type(err).__name__)[:400]


def real_args(abstract: Any, raw: Any) -> Any:
    """Arrays on the devices for every leaf: the user's own values where they gave arrays, else
    small varied floats (zeros for integers and booleans, which may be indices or counters),
    made on their shardings by one compiled program that needs no memory beyond its outputs (a
    random generator would hold its bits beside each array, and the peak measured would be its
    own, not the step's), so that no host holds a large array either."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    abstract_leaves, tree = jax.tree.flatten(abstract)
    raw_leaves = jax.tree.leaves(raw)
    given = [isinstance(r, np.ndarray | np.generic | jax.Array) for r in raw_leaves]
    to_make = [i for i, has_value in enumerate(given) if not has_value]

    def make() -> list[Any]:
        out = []
        for index in to_make:
            leaf = abstract_leaves[index]
            if not jnp.issubdtype(leaf.dtype, jnp.floating):
                out.append(jnp.zeros(leaf.shape, leaf.dtype))
            elif not leaf.shape:
                out.append(jnp.full((), 0.01, leaf.dtype))
            else:
                # -0.06 ... 0.06 along the last axis, shifted by the leaf's place: fused into the
                # output, so nothing but the array itself is allocated.
                position = jax.lax.broadcasted_iota(jnp.int32, leaf.shape, len(leaf.shape) - 1)
                out.append((((position + index) % 13 - 6) * 0.01).astype(leaf.dtype))
        return out

    made = iter(jax.jit(make, out_shardings=[abstract_leaves[i].sharding for i in to_make])())
    leaves = [
        jax.device_put(r, leaf.sharding) if has_value else next(made)
        for r, leaf, has_value in zip(raw_leaves, abstract_leaves, given, strict=True)
    ]
    return jax.tree.unflatten(tree, leaves)


def memory_peak(devices: list[Any]) -> dict[str, Any]:
    """The largest device's peak: in use plus reserved, where ``memory_stats()`` says them (a
    CPU device says nothing)."""
    best: dict[str, Any] = {}
    for device in devices:
        try:
            stats = device.memory_stats() or {}
        except Exception:  # a backend without memory statistics
            stats = {}
        if not stats:
            continue
        in_use = int(stats.get("peak_bytes_in_use", 0))
        reserved = int(stats.get("peak_bytes_reserved", 0))
        if not best or in_use + reserved > best["peak_bytes"]:
            best = {
                "peak_bytes": in_use + reserved,
                "peak_bytes_in_use": in_use,
                "peak_bytes_reserved": reserved,
                "bytes_limit": stats.get("bytes_limit"),
            }
    return best


def at_hand(devices: list[Any]) -> dict[str, Any]:
    import jax

    return {
        "platform": devices[0].platform,
        "device_kind": str(devices[0].device_kind),
        "devices": len(devices),
        "process_count": jax.process_count(),
        "jax": jax.__version__,
    }


def measure(request: dict[str, Any], function: Any, devices: list[Any]) -> dict[str, Any]:
    """Compile, run one step, time up to ``steps`` more; a refusal or an OOM is a record."""
    import jax
    import numpy as np
    from jax.sharding import Mesh

    program = Path(request["program"])
    axes = request["mesh"]
    shape = mesh_shape(axes, len(devices), request.get("slice") or "the devices at hand")
    mesh = Mesh(np.array(devices).reshape(shape), tuple(name for name, _ in axes))
    step, raw = call_user(function, mesh, program)
    abstract = abstract_args(raw, mesh)
    jitted = step if hasattr(step, "lower") else jax.jit(step)
    record: dict[str, Any] = {}
    start = time.perf_counter()
    try:
        lowered = jitted.lower(*abstract)
    except Exception as err:
        raise ProgramProblem("user-code", f"tracing your step failed: {first_line(err)}") from None
    try:
        compiled = lowered.compile()
    except Exception as err:
        if not is_out_of_memory(err):
            raise
        return {"out_of_memory": first_line(err), "when": "compile"}
    record["compile_seconds"] = round(time.perf_counter() - start, 3)
    donated = any(info.donated for info in jax.tree.leaves(lowered.args_info))
    record["donated"] = donated
    steps = max(1, int(request.get("steps", 5)))
    times: list[float] = []
    args = None
    try:
        for run in range(steps + 1):  # the first run warms up and is not timed
            if args is None:
                args = real_args(abstract, raw)
                jax.block_until_ready(args)
            began = time.perf_counter()
            out = compiled(*args)
            jax.block_until_ready(out)
            took = time.perf_counter() - began
            del out  # freed before the next arguments are made: one step's memory at a time
            if donated:
                args = None  # consumed by the step: made again, untimed
            if run == 0:
                record["first_step_seconds"] = round(took, 6)
            else:
                times.append(took)
                if sum(times) > TIMING_BUDGET_S:
                    break
    except Exception as err:
        if not is_out_of_memory(err):
            raise
        return {**record, "out_of_memory": first_line(err), "when": "run"}
    record.update(memory_peak(devices))
    record["step_seconds"] = statistics.median(times)
    record["step_seconds_all"] = [round(t, 6) for t in times]
    record["steps_timed"] = len(times)
    return record


def main_on_node(request: dict[str, Any]) -> int:
    """On a kept node (``fit --measure --node``): the request comes as the argument, with no
    parent on stdin to say go. The node's slice was checked against the slices asked for before
    the job started; its devices are said first all the same, so the figures carry what they
    were measured on (CPU devices on a practice node)."""
    import jax

    devices = jax.devices()
    seen = at_hand(devices)
    emit({"at_hand": seen})
    if seen["process_count"] > 1:
        emit({"problem": "multi-host", "message": "measuring a multi-host slice is not done here"})
        return 0
    try:
        function = load_function(Path(request["program"]), request["function"])
        record = measure(request, function, devices)
    except ProgramProblem as problem:
        emit({"problem": problem.kind, "message": str(problem)})
        return 0
    except Exception as err:
        record = {"error": f"{type(err).__name__}: {first_line(err)}"}
    emit({"measured": record})
    return 0


def main() -> int:
    if len(sys.argv) > 1:  # on a kept node: the request is the argument
        return main_on_node(json.loads(sys.argv[1]))
    request = json.loads(sys.stdin.readline())
    import jax

    if request.get("allow_cpu") and request.get("cpu_devices"):
        # Practice: as many CPU devices as the slice it stands in for has; a TPU still wins.
        jax.config.update("jax_num_cpu_devices", int(request["cpu_devices"]))
    devices = jax.devices()
    seen = at_hand(devices)
    if devices[0].platform != "tpu" and not request.get("allow_cpu"):
        emit({"no_tpu": seen})
        return 0
    if seen["process_count"] > 1:
        emit(
            {
                "problem": "multi-host",
                "message": "measuring a multi-host slice is not done here: every VM would have "
                "to run the step together. Measure on a single-host slice.",
            }
        )
        return 0
    emit({"at_hand": seen})
    # The parent checks the slice at hand against the ones asked for, and says go (or closes).
    go = json.loads(sys.stdin.readline() or "{}")
    if not go.get("go"):
        return 0
    exit_with_parent()  # from here, stdin's end means the parent is gone or cancelled
    try:
        function = load_function(Path(request["program"]), request["function"])
        record = measure({**request, "slice": go.get("slice")}, function, devices)
    except ProgramProblem as problem:
        emit({"problem": problem.kind, "message": str(problem)})
        return 0
    except Exception as err:
        record = {"error": f"{type(err).__name__}: {first_line(err)}"}
    emit({"measured": record})
    return 0


if __name__ == "__main__":
    sys.exit(main())
