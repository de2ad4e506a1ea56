"""``fit --program --measure``: run the step on the accelerator at hand, beside the prediction.

The parent's side of :mod:`tpuwizard.core.plan.program_measure`: start it in this process's own
environment (a TPU VM's ``TPU_*`` settings are what its chip needs), read which devices it sees,
find the catalog's slice that matches them (generation from ``device_kind``, chips from the device
count), and only when that slice is one of those asked for, let it measure. Without a TPU the
answer is bad input saying what ``--measure`` needs; with ``allow_cpu`` (practice, and tests on a
machine without a TPU) CPU devices stand in for the first slice asked for, labelled so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog, cost
from tpuwizard.core.plan.program_result import ProgramInputError, SliceProgramFit

MARK = "TPUWIZARD-FIT "
CPU_LABEL = "CPU (practice), not a TPU"
NEEDS_TPU = (
    "--measure runs your step on a TPU at hand, and {what}. Measure on a node kept with "
    "`tpuwizard up` instead (--measure --node NAME), or run tpuwizard on the TPU VM itself (with "
    "jax[tpu] installed there), or leave out --measure for the table alone."
)


class NoTpuHere(BadInput):
    """``--measure`` where JAX sees no TPU."""


@dataclass(frozen=True)
class Measurement:
    """What running the step on the devices at hand gave, for the slice they are."""

    slice_name: str
    platform: str  # "tpu", or "cpu" for a practice stand-in
    device_kind: str
    devices: int
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def on_tpu(self) -> bool:
        return self.platform == "tpu"

    @property
    def label(self) -> str:
        if self.platform == "unknown":  # the job ended before it said what it ran on
            return "not measured"
        if not self.on_tpu:
            return CPU_LABEL
        return f"measured on the TPU at hand ({self.device_kind} x{self.devices})"


def slice_at_hand(seen: dict[str, Any]) -> catalog.Slice | None:
    """The catalog's slice that the devices at hand are (``TPU v5 lite`` x1 -> v5litepod-1)."""
    gen = catalog.generation_for_device_kind(str(seen.get("device_kind", "")))
    devices = int(seen.get("devices") or 0)
    if gen is None or devices < 1 or devices % gen.devices_per_chip:
        return None
    chips = devices // gen.devices_per_chip
    return next((s for s in catalog.all_slices() if s.generation == gen and s.chips == chips), None)


def measure_environment() -> dict[str, str]:
    """This process's environment as it is (libtpu's settings kept), output unbuffered."""
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def run_measure(
    request: dict[str, Any],
    slices: list[catalog.Slice],
    allow_cpu: bool = False,
    started: Callable[[subprocess.Popen[str]], None] | None = None,
) -> Measurement:
    """Run the measuring worker for ``request`` (program, function, mesh, steps); raise
    :class:`NoTpuHere` or :class:`BadInput` where it cannot measure one of ``slices``."""
    if allow_cpu:
        request = {**request, "allow_cpu": True, "cpu_devices": slices[0].devices}
    with tempfile.TemporaryFile("w+") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tpuwizard.core.plan.program_measure"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=measure_environment(),
        )
        if started is not None:
            started(proc)
        assert proc.stdin is not None and proc.stdout is not None
        measurement: Measurement | None = None
        try:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            for line in proc.stdout:
                if not line.startswith(MARK):
                    continue
                said = json.loads(line[len(MARK) :])
                if "no_tpu" in said:
                    seen = said["no_tpu"]
                    raise NoTpuHere(
                        NEEDS_TPU.format(
                            what=f"this computer's JAX sees {seen['devices']} "
                            f"{seen['platform']} device(s) ({seen['device_kind']}), no TPU"
                        )
                    )
                if "problem" in said:
                    raise ProgramInputError(said["message"], said["problem"])
                if "at_hand" in said:
                    measurement = _matched(said["at_hand"], slices, allow_cpu)
                    proc.stdin.write(
                        json.dumps({"go": True, "slice": measurement.slice_name}) + "\n"
                    )
                    proc.stdin.flush()
                elif "measured" in said and measurement is not None:
                    return Measurement(
                        measurement.slice_name,
                        measurement.platform,
                        measurement.device_kind,
                        measurement.devices,
                        said["measured"],
                    )
        except BrokenPipeError:
            pass
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        stderr.seek(0)
        tail = " | ".join([ln for ln in stderr.read().splitlines() if ln.strip()][-3:])
    if measurement is None:
        raise NoTpuHere(NEEDS_TPU.format(what=f"JAX could not start here: {tail}"))
    return Measurement(
        measurement.slice_name,
        measurement.platform,
        measurement.device_kind,
        measurement.devices,
        {"error": f"the measuring process exited with {proc.returncode}: {tail}"},
    )


def _matched(seen: dict[str, Any], slices: list[catalog.Slice], allow_cpu: bool) -> Measurement:
    platform, kind, count = seen["platform"], seen["device_kind"], int(seen["devices"])
    if platform != "tpu":
        if not allow_cpu:
            raise NoTpuHere(NEEDS_TPU.format(what=f"JAX sees {platform} devices only"))
        return Measurement(slices[0].name, platform, kind, count)
    found = slice_at_hand(seen)
    if found is None:
        raise BadInput(
            f"The TPU at hand ({count} device(s) of {kind}) is no slice in tpuwizard's catalog, "
            "so its figures cannot stand beside a prediction: leave out --measure."
        )
    if found.name not in {s.name for s in slices}:
        raise BadInput(
            f"--measure measures the TPU at hand, {found.name} ({count} device(s) of {kind}), "
            f"and the slices asked for ({', '.join(s.name for s in slices)}) do not include it: "
            f"add {found.name} to --slices."
        )
    return Measurement(found.name, platform, kind, count)


def from_node(said: dict[str, Any], code: int, node_slice: catalog.Slice) -> Measurement:
    """What the measuring worker said on a kept node (``fit --measure --node``), for the node's
    slice: CPU devices on a practice node stand in for it, labelled so; a TPU whose devices are
    not the slice the node was recorded as is bad input, as on a TPU at hand."""
    if "problem" in said:
        raise ProgramInputError(said["message"], said["problem"])
    seen = said.get("at_hand")
    if seen is None:
        return Measurement(
            node_slice.name, "unknown", "", 0, {"error": f"the measuring job exited with {code}"}
        )
    platform, kind, count = seen["platform"], str(seen["device_kind"]), int(seen["devices"])
    if platform == "tpu":
        found = slice_at_hand(seen)
        if found is None or found.name != node_slice.name:
            raise BadInput(
                f"The node's devices ({count} of {kind}) are not {node_slice.name}, as it was "
                "kept: its figures cannot stand beside that slice's prediction."
            )
    record = said.get("measured") or {"error": f"the measuring job exited with {code}"}
    return Measurement(node_slice.name, platform, kind, count, record)


def with_measurement(
    result: SliceProgramFit, slice_: catalog.Slice, run: Measurement, route: str
) -> SliceProgramFit:
    """``result`` with what the run on the devices at hand gave beside it: the peak (in use plus
    reserved), the median step and, on a TPU, the price of 1000 steps at that time. A practice
    run on CPU devices is labelled so and priced at nothing."""
    record = run.record
    measured: dict[str, Any] = {
        "on": "tpu" if run.on_tpu else "cpu-practice",
        "label": run.label,
        "device_kind": run.device_kind,
        "devices": run.devices,
    }
    if "error" in record:
        measured.update(fits=None, note=f"not measured: {record['error']}")
    elif "out_of_memory" in record:
        how = (
            "the compiler refused it for lack of HBM"
            if record.get("when") == "compile"
            else "it ran out of memory while running"
        )
        measured.update(fits=False, note=f"does not fit: {how}: {record['out_of_memory']}")
    else:
        measured.update(fits=True, note="")
        for key in (
            "peak_bytes",
            "peak_bytes_in_use",
            "peak_bytes_reserved",
            "bytes_limit",
            "step_seconds",
            "steps_timed",
            "step_seconds_all",
            "first_step_seconds",
            "compile_seconds",
            "donated",
        ):
            if key in record:
                measured[key] = record[key]
        price = cost.at_most_hourly(slice_, route) if run.on_tpu else None
        step = record.get("step_seconds")
        measured["usd_per_1000_steps"] = (
            None if price is None or step is None else float(f"{price * step * 1000 / 3600:.4g}")
        )
        predicted_peak = result.per_device_bytes.get("peak")
        if run.on_tpu and predicted_peak and measured.get("peak_bytes"):
            measured["peak_predicted_over_measured"] = round(
                predicted_peak / measured["peak_bytes"], 3
            )
        if run.on_tpu and result.step_seconds and step:  # a CPU's time says nothing of a TPU's
            measured["step_measured_over_predicted"] = round(step / result.step_seconds, 3)
    return replace(result, measured=measured)
