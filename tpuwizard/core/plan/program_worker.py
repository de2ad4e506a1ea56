"""The subprocess that compiles a user's training step for TPU topologies (``fit --program``).

Run as ``python -m tpuwizard.core.plan.program_worker`` with a JSON request on stdin; the parent
(:mod:`tpuwizard.core.plan.program_fit`) sets ``TPU_SKIP_MDS_QUERY``, ``TPU_ACCELERATOR_TYPE``
and ``TPU_WORKER_HOSTNAMES`` so that libtpu never asks a metadata server for its settings. Each
answer is one line ``TPUWIZARD-FIT {json}`` on stdout (the user's program may print too).

Kept apart from the parent because libtpu and the user's code run here: a crash, a hang or an
``os.environ`` change inside them cannot take the wizard with it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from tpuwizard.core import untrusted

MARK = "TPUWIZARD-FIT "


def emit(record: dict[str, Any]) -> None:
    sys.stdout.write(MARK + json.dumps(record) + "\n")
    sys.stdout.flush()


class ProgramProblem(Exception):
    """Something is wrong with the user's program or its arguments; ``kind`` names what."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def user_traceback(err: BaseException, program: Path) -> str:
    """The traceback trimmed to frames in the user's own files (the program's folder)."""
    root = program.resolve().parent
    frames = [
        f
        for f in traceback.extract_tb(err.__traceback__)
        if Path(f.filename).resolve().is_relative_to(root)
    ]
    lines = ["Traceback (your code only):", *traceback.format_list(frames)] if frames else []
    lines += traceback.format_exception_only(type(err), err)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines).rstrip()


def load_function(program: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location("tpuwizard_user_program", program)
    if spec is None or spec.loader is None:
        raise ProgramProblem("load", f"{program} cannot be imported as a Python file.")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(program.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except Exception as err:
        raise ProgramProblem(
            "user-code", f"{program} raised while it was imported:\n{user_traceback(err, program)}"
        ) from None
    function = getattr(module, name, None)
    if not callable(function):
        found = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
        raise ProgramProblem(
            "no-function",
            # No way to name another here: the wizard has none; `fit` adds its --function.
            f"{program} defines no function {name}(mesh). Define it: it returns (step, args). "
            f"Functions it defines: {', '.join(found) or 'none'}.",
        )
    return function


def mesh_shape(axes: list[list[Any]], device_count: int, slice_name: str) -> list[int]:
    """Axis sizes for ``axes`` ([name, size or None]); the one None axis takes the rest."""
    known = 1
    for _, size in axes:
        known *= size or 1
    sizes = []
    for name, size in axes:
        if size is None:
            if device_count % known:
                raise ProgramProblem(
                    "mesh",
                    f"{slice_name} has {device_count} devices, which the other mesh axes "
                    f"({known} devices) do not divide, so '{name}' has no whole size.",
                )
            size = device_count // known
        sizes.append(size)
    total = 1
    for size in sizes:
        total *= size
    if total != device_count:
        raise ProgramProblem(
            "mesh",
            f"the mesh {' x '.join(f'{n}={s}' for (n, _), s in zip(axes, sizes, strict=True))} "
            f"needs {total} devices, but {slice_name} has {device_count}.",
        )
    return sizes


def abstract_args(args: Any, mesh: Any) -> Any:
    """Every leaf as a ShapeDtypeStruct with a sharding on ``mesh`` (none means replicated)."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    replicated = NamedSharding(mesh, PartitionSpec())

    def leaf(x: Any) -> Any:
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise ProgramProblem(
                "bad-return",
                f"an argument is a {type(x).__name__}, not an array or jax.ShapeDtypeStruct.",
            )
        sharding = getattr(x, "sharding", None)
        if not isinstance(sharding, NamedSharding):
            sharding = replicated
        elif sharding.mesh.shape != mesh.shape:
            raise ProgramProblem(
                "bad-return", "an argument's sharding is on another mesh than the one given."
            )
        return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)

    return jax.tree.map(leaf, args)


def shard_bytes(leaf: Any) -> int:
    shape = leaf.sharding.shard_shape(leaf.shape)
    count = 1
    for dim in shape:
        count *= dim
    return count * leaf.dtype.itemsize


def call_user(function: Any, mesh: Any, program: Path) -> tuple[Any, tuple[Any, ...]]:
    try:
        returned = function(mesh)
    except ProgramProblem:
        raise
    except Exception as err:
        raise ProgramProblem(
            "user-code", f"{function.__name__}(mesh) raised:\n{user_traceback(err, program)}"
        ) from None
    if not (isinstance(returned, tuple | list) and len(returned) == 2 and callable(returned[0])):
        raise ProgramProblem(
            "bad-return",
            f"{function.__name__}(mesh) must return (step, args): the step function and a tuple "
            f"of its arguments; it returned {type(returned).__name__}"
            + (f" of length {len(returned)}" if isinstance(returned, tuple | list) else "")
            + ".",
        )
    step, args = returned
    if not isinstance(args, tuple | list):
        raise ProgramProblem(
            "bad-return",
            f"the args {function.__name__}(mesh) returned are a {type(args).__name__}: make them "
            "a tuple, (params, batch), exactly as you call step(*args).",
        )
    return step, tuple(args)


def lower(step: Any, args: tuple[Any, ...], program: Path, donate: tuple[int, ...] = ()) -> Any:
    import jax

    try:
        if donate:
            inner = getattr(step, "__wrapped__", step)
            return jax.jit(inner, donate_argnums=donate).lower(*args)
        # A function the user already jitted keeps its own donate_argnums and shardings.
        jitted = step if hasattr(step, "lower") else jax.jit(step)
        return jitted.lower(*args)
    except Exception as err:
        raise ProgramProblem(
            "user-code", f"tracing your step failed:\n{user_traceback(err, program)}"
        ) from None


def compile_numbers(lowered: Any, cache: Path | None, key_extra: str) -> dict[str, Any]:
    """memory_analysis and cost_analysis of one compile, from the cache when seen before."""
    key = hashlib.sha256((lowered.as_text() + "\n" + key_extra).encode()).hexdigest()
    path = cache / f"{key}.json" if cache else None
    if path is not None and path.exists():
        try:  # read back as untrusted input: what cannot be is compiled again
            saved = untrusted.read_json(path, untrusted.MIB, max_depth=8)
            if isinstance(saved, dict):
                return {**saved, "cached": True, "compile_seconds": 0.0}
        except (OSError, ValueError):
            pass
    start = time.perf_counter()
    try:
        compiled = lowered.compile()
    except Exception as err:
        text = str(err)
        if "RESOURCE_EXHAUSTED" not in text:
            raise
        numbers: dict[str, Any] = {"out_of_memory": text.strip().splitlines()[0][:400]}
    else:
        mem = compiled.memory_analysis()
        cost = compiled.cost_analysis() or {}
        cost = cost[0] if isinstance(cost, list) else cost
        numbers = {
            "arguments": mem.argument_size_in_bytes,
            "outputs": mem.output_size_in_bytes,
            "temporaries": mem.temp_size_in_bytes,
            "aliased": mem.alias_size_in_bytes,
            "code": mem.generated_code_size_in_bytes,
            "optimal_seconds": cost.get("optimal_seconds"),
            "flops": cost.get("flops"),
            "bytes_accessed": cost.get("bytes accessed"),
        }
    seconds = time.perf_counter() - start
    if path is not None:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(numbers))
        tmp.replace(path)
    return {**numbers, "cached": False, "compile_seconds": round(seconds, 3)}


def donation_bytes(lowered: Any, args: tuple[Any, ...]) -> tuple[int, list[int]]:
    """Per-device bytes of outputs that copy an undonated argument, and those arguments."""
    import jax

    donated = [info.donated for info in jax.tree.leaves(lowered.args_info[0])]
    out_leaves = [(o.shape, str(o.dtype)) for o in jax.tree.leaves(lowered.out_info)]
    saving, positions = 0, set()
    for position, arg in enumerate(args):
        for leaf in jax.tree.leaves(arg):
            if donated and donated.pop(0):
                continue
            match = (leaf.shape, str(leaf.dtype))
            if match in out_leaves:
                out_leaves.remove(match)
                saving += shard_bytes(leaf)
                positions.add(position)
    return saving, sorted(positions)


def peak(numbers: dict[str, Any]) -> int:
    """arguments + outputs + temporaries - aliased + code."""
    return int(
        numbers["arguments"]
        + numbers["outputs"]
        + numbers["temporaries"]
        - numbers["aliased"]
        + numbers["code"]
    )


def shard_over_data(args: tuple[Any, ...], mesh: Any) -> Any:
    """The replicated leaves sharded over "data" on their largest dimension it divides."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    size = dict(mesh.shape).get("data", 1)

    def leaf(x: Any) -> Any:
        if any(p is not None for p in x.sharding.spec):
            return x
        dims = [i for i, d in enumerate(x.shape) if d % size == 0 and d >= size]
        if not dims:
            return x
        dim = max(dims, key=lambda i: x.shape[i])
        spec: list[str | None] = [None] * len(x.shape)
        spec[dim] = "data"
        return jax.ShapeDtypeStruct(
            x.shape, x.dtype, sharding=NamedSharding(mesh, PartitionSpec(*spec))
        )

    return jax.tree.map(leaf, args)


def plan_slice(request: dict[str, Any], target: dict[str, Any], function: Any) -> dict[str, Any]:
    import jax
    import numpy as np
    from jax.sharding import Mesh

    program = Path(request["program"])
    compile_for_tpu = request["method"] == "tpu-compile"
    if compile_for_tpu:
        from jax.experimental import topologies

        topology = topologies.get_topology_desc(
            target["topology"], "tpu", chips_per_host_bounds=tuple(target["host_bounds"])
        )
        devices = list(topology.devices)
    else:
        devices = jax.devices("cpu")[: target["devices"]]
    axes = request["mesh"]
    shape = mesh_shape(axes, len(devices), target["name"])
    mesh = Mesh(np.array(devices).reshape(shape), tuple(name for name, _ in axes))
    step, raw_args = call_user(function, mesh, program)
    args = abstract_args(raw_args, mesh)
    leaves = jax.tree.leaves(args)
    result: dict[str, Any] = {
        "slice": target["name"],
        "devices": len(devices),
        "state_bytes": sum(shard_bytes(x) for x in leaves),
        "replicated_bytes": sum(
            shard_bytes(x) for x in leaves if all(p is None for p in x.sharding.spec)
        ),
    }
    if not compile_for_tpu:
        return result
    lowered = lower(step, args, program)
    cache = Path(request["cache_dir"]) if request.get("cache_dir") else None
    key_extra = f"{target['topology']}|{target['host_bounds']}|{request['versions']}"
    result.update(compile_numbers(lowered, cache, key_extra))
    result["donation_saving"], result["donate_argnums"] = donation_bytes(lowered, args)
    data_size = dict(mesh.shape).get("data", 1)
    if data_size > 1 and result["replicated_bytes"] * 2 > result["state_bytes"]:
        sharded = shard_over_data(args, mesh)
        if sharded != args:
            state = sum(shard_bytes(x) for x in jax.tree.leaves(sharded))
            result["sharded_over_data"] = {"state_bytes": state}
            # Compiling the variant doubles the time: only where it matters, when the step
            # does not fit or uses more than half of the usable HBM.
            usable = target["usable_total"] // len(devices)
            if "out_of_memory" in result or peak(result) > usable // 2:
                variant = lower(step, sharded, program)
                numbers = compile_numbers(variant, cache, key_extra)
                result["sharded_over_data"].update(numbers)
    return result


def exit_with_parent() -> None:
    """The parent holds our stdin open while it waits; EOF means it is gone or cancelled."""
    import threading

    def watch() -> None:
        sys.stdin.read()
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def main() -> int:
    request = json.loads(sys.stdin.readline())
    exit_with_parent()
    program = Path(request["program"])
    if request["method"] == "shapes-only":
        import jax

        jax.config.update("jax_num_cpu_devices", max(t["devices"] for t in request["targets"]))
    try:
        function = load_function(program, request["function"])
    except ProgramProblem as problem:
        emit({"problem": problem.kind, "message": str(problem)})
        return 0
    for target in request["targets"]:
        start = time.perf_counter()
        try:
            record = plan_slice(request, target, function)
        except ProgramProblem as problem:
            emit({"problem": problem.kind, "message": str(problem), "slice": target["name"]})
            return 0
        except Exception as err:  # libtpu refused this topology: say so for this slice only
            record = {"slice": target["name"], "error": f"{type(err).__name__}: {err}"[:400]}
        record["seconds"] = round(time.perf_counter() - start, 3)
        emit(record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
