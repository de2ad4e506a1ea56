"""The device check's two steps for what the chip says of itself (issue 54, item 6).

- ``hbm``: a step whose output alone is larger than the chip's HBM (``bytes_limit`` x 1.1), so
  the chip's own out-of-memory text is printed, read and diagnosed;
- ``held``: one process holds the TPU (JAX started, then it waits) while a second starts JAX,
  so libtpu's own words for a held chip are printed, read and diagnosed; and, while one holds it,
  the listing that `run` and `watch` make before a run on a kept node
  (``core/launch/workers/held_chip.py``) must name that process.

Each is read by the code that reads a script's output in practice
(``core/cloud/diagnose/tpu_text.py``) and said by the same diagnosis (``tpu_errors.py``); the
lines the chip printed are kept whole in the JSON. A CPU has no HBM and is never held by another
process: there each step says so and is skipped (the held step still starts both processes).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# A step whose output alone needs ``size`` float32 values: the compiler must refuse it on a chip
# whose usable HBM is smaller. The input keeps XLA from folding it into a constant.
OVER_HBM = """
import sys, jax, jax.numpy as jnp
size = int(sys.argv[1])
step = jax.jit(lambda s: jnp.full((size,), s, jnp.float32) * 2)
print("RESULT", float(step(jnp.float32(1.5))[0]), flush=True)
"""
HOLDER = """
import time, jax, jax.numpy as jnp
print("HOLDING", float(jnp.ones((256, 256)).sum()), jax.devices()[0].platform, flush=True)
time.sleep(600)
"""
SECOND = """
import jax
print("SECOND", jax.devices(), flush=True)
"""


def _said(output: str, slice_name: str | None) -> dict[str, Any]:
    """What the chip's lines say, read and diagnosed as a script's output is in practice."""
    from tpuwizard.core.cloud.diagnose.tpu_errors import tpu_error_diagnosis
    from tpuwizard.core.cloud.diagnose.tpu_text import TpuErrorWatch, read_tpu_error
    from tpuwizard.core.plan import catalog

    watch = TpuErrorWatch()
    lines = output.splitlines()
    for line in lines:
        watch.see(line)
    chip_lines = [line for line in lines if read_tpu_error(line) is not None]
    said: dict[str, Any] = {"chip_lines": chip_lines, "output_tail": lines[-12:]}
    found = watch.found
    if found is None:
        said["read"] = None
        return said
    said["read"] = {
        "trouble": found.trouble.value,
        "code": found.code,
        "needed_bytes": found.needed_bytes,
        "available_bytes": found.available_bytes,
        "when": found.when.value if found.when else None,
        "holder_pid": found.holder_pid,
        "device_file": found.device_file,
    }
    slice_ = catalog.parse_accelerator(slice_name) if slice_name else None
    said["diagnosis"] = tpu_error_diagnosis(found, slice_).to_dict()
    return said


def check_hbm(on_tpu: bool, bytes_limit: int | None, slice_name: str | None) -> dict[str, Any]:
    """A step over the chip's HBM: its error, read and diagnosed as tpu_out_of_memory."""
    if not on_tpu or not bytes_limit:
        return {
            "skipped": "a CPU has no HBM and no bytes_limit: only a TPU prints its out-of-memory "
            "text (the unit tests read the chip's texts in tests/unit/data/tpu_errors/)",
            "ok": None,
        }
    size = int(bytes_limit * 1.1) // 4  # float32 values: 10% over the limit
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", OVER_HBM, str(size)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    said = _said(proc.stdout + proc.stderr, slice_name)
    said.update(
        code=proc.returncode,
        seconds=round(time.perf_counter() - start, 2),
        asked_bytes=size * 4,
        bytes_limit=bytes_limit,
    )
    kind = (said.get("diagnosis") or {}).get("kind")
    said["ok"] = proc.returncode != 0 and kind == "tpu_out_of_memory"
    return said


def check_held(platform_name: str, slice_name: str | None) -> dict[str, Any]:
    """A second process starting JAX while a first holds the chip: diagnosed as tpu_held."""
    on_tpu = platform_name == "tpu"
    env = {**os.environ, "JAX_PLATFORMS": platform_name}
    holder = subprocess.Popen(
        [sys.executable, "-u", "-c", HOLDER],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert holder.stdout is not None
        holding = ""  # libtpu's warnings may come first
        while not holding.startswith("HOLDING"):
            holding = holder.stdout.readline()
            if not holding:
                break
        said: dict[str, Any] = {"holding": holding.strip()}
        if not holding.startswith("HOLDING"):
            said.update(ok=False, why="the first process never held the chip")
            return said
        second = subprocess.run(
            [sys.executable, "-c", SECOND],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
            timeout=300,
        )
        said.update(_said(second.stdout + second.stderr, slice_name))
        said["second_code"] = second.returncode
    finally:
        holder.kill()
        holder.wait(timeout=60)
    if not on_tpu:
        said.update(
            skipped="a CPU is not held by another process (here the second one "
            f"{'started' if said['second_code'] == 0 else 'failed for another reason'}): "
            "only a TPU shows this",
            ok=None,
        )
        return said
    kind = (said.get("diagnosis") or {}).get("kind")
    said["ok"] = said["second_code"] != 0 and kind == "tpu_held"
    return said


def check_held_listing(platform_name: str) -> dict[str, Any]:
    """While a process holds the chip, the held-chip listing of `run` and `watch` (the worker's
    ``/proc/<pid>/fd`` read with its own ``find``, through the local transport) must name it.
    A CPU has no device file: there the listing runs against practice's stand-in (a plain
    process holding ``dev/accel0`` in a folder standing for a worker's home) and is skipped."""
    import tempfile

    from tpuwizard.core.launch.workers.held_chip import TPU_DEVICE_FILES
    from tpuwizard.core.remote.transports import LocalTransport

    on_tpu = platform_name == "tpu"
    with tempfile.TemporaryDirectory() as worker_home:
        home = Path(worker_home)
        if on_tpu:
            code, files = HOLDER, TPU_DEVICE_FILES
            env = {**os.environ, "JAX_PLATFORMS": platform_name}
        else:
            (home / "dev").mkdir()
            (home / "dev" / "accel0").touch()
            code = f"import time; chip = open({str(home / 'dev' / 'accel0')!r}); " + (
                "print('HOLDING', flush=True); time.sleep(600)"
            )
            files, env = ("~/dev/accel*",), dict(os.environ)
        holder = subprocess.Popen(
            [sys.executable, "-u", "-c", code],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            said = _listed_while_held(holder, LocalTransport([home]), files)
        finally:
            holder.kill()
            holder.wait(timeout=60)
    if not on_tpu:
        said.update(
            skipped="a CPU has no device file to hold: the listing ran against practice's "
            f"stand-in (found the holder: {said['found']}); only a TPU shows the chip's own",
            ok=None,
        )
        return said
    said["ok"] = said["found"]
    return said


def _listed_while_held(
    holder: subprocess.Popen[str], transport: Any, files: tuple[str, ...]
) -> dict[str, Any]:
    """What the listing said while ``holder`` held the chip, and whether it named it."""
    from tpuwizard.core.launch.workers.held_chip import list_holders

    assert holder.stdout is not None
    holding = ""  # libtpu's warnings may come first
    while not holding.startswith("HOLDING"):
        holding = holder.stdout.readline()
        if not holding:
            break
    said: dict[str, Any] = {"holding": holding.strip(), "holder_pid": holder.pid}
    if not holding.startswith("HOLDING"):
        return {**said, "found": False, "why": "the first process never held the chip"}
    start = time.perf_counter()
    listings = list_holders(transport, files)
    said["seconds"] = round(time.perf_counter() - start, 2)
    holders = [h for listing in listings for h in listing.holders]
    said["holders"] = [
        {"pid": h.pid, "command": h.command[:200], "devices": list(h.devices), "ours": h.ours}
        for h in holders
    ]
    said["unlisted"] = [listing.unlisted for listing in listings if listing.unlisted]
    said["found"] = any(h.pid == holder.pid for h in holders)
    return said
