"""One slice's result of ``fit --program``: the worker's numbers as the row the issue fixes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog, cost, program_advice
from tpuwizard.core.plan import fit as fitting


class ProgramInputError(BadInput):
    """The program, its function or what it returned is wrong; the message says what, and
    ``kind`` which (``no-function``: it defines no function of the name asked for)."""

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class SliceProgramFit:
    name: str
    chips: int
    devices: int
    per_device_bytes: dict[str, int | None]
    state_bytes_per_device: int
    usable_bytes_per_device: int
    fits: bool | None
    step_seconds: float | None
    usd_per_1000_steps: float | None
    note: str
    seconds: float = 0.0
    cached: bool = False
    advice: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    # ``--measure``: what running the step on the devices at hand gave (program_at_hand), for
    # the one slice they are; beside the prediction, never in its place.
    measured: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "chips": self.chips,
            "devices": self.devices,
            "per_device_bytes": self.per_device_bytes,
            "state_bytes_per_device": self.state_bytes_per_device,
            "usable_bytes_per_device": self.usable_bytes_per_device,
            "fits": self.fits,
            # A prediction is a lower bound: the names say so. The old names ("step_seconds",
            # "usd_per_1000_steps") stay, same values, for one release (README).
            "step_seconds_at_least": self.step_seconds,
            "usd_per_1000_steps_at_least": self.usd_per_1000_steps,
            "step_seconds": self.step_seconds,
            "usd_per_1000_steps": self.usd_per_1000_steps,
            "note": self.note,
            "cached": self.cached,
            "seconds": self.seconds,
            **self.extra,
            **({"measured": self.measured} if self.measured is not None else {}),
        }


def peak_bytes(numbers: dict[str, Any]) -> int:
    """arguments + outputs + temporaries - aliased + code."""
    return int(
        numbers["arguments"]
        + numbers["outputs"]
        + numbers["temporaries"]
        - numbers["aliased"]
        + numbers["code"]
    )


def usable_bytes(
    slice_: catalog.Slice,
    devices: int,
    reserve: float | None = None,
    measured_gib_per_chip: float | None = None,
) -> int:
    """Usable HBM per device: the generation's catalog figure (``fit``'s), ``reserve`` from
    nominal where given (``--usable``), a receipt's measured figure where given."""
    per_chip, _ = fitting.usable_gib_per_chip(slice_.generation, reserve, measured_gib_per_chip)
    return int(per_chip * 2**30 * slice_.chips / devices)


_SCALE = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def needed_bytes(message: str) -> int | None:
    """The bytes a RESOURCE_EXHAUSTED compile said it needed (``required ... (32.00G)``)."""
    match = re.search(r"(?:required|Used)[^(0-9]*\(?([0-9.]+)([KMGT])", message)
    if not match:
        return None
    return int(float(match.group(1)) * _SCALE[match.group(2)])


def compiler_limit_bytes(message: str) -> int | None:
    """The HBM limit a compiler's refusal names: ``exceeds available HBM (15.75G)`` or
    ``Used 16.94G of 15.75G hbm``; None where it names none."""
    match = re.search(r"available HBM \(([0-9.]+)([KMGT])\)", message) or re.search(
        r"Used [0-9.]+[KMGT] of ([0-9.]+)([KMGT]) hbm", message
    )
    if not match:
        return None
    return int(float(match.group(1)) * _SCALE[match.group(2)])


def step_estimate(slice_: catalog.Slice, record: dict[str, Any]) -> tuple[float | None, str]:
    """A lower bound on one step (on a real v5e chip the examples' steps ran 1.7-4.4x longer than
    XLA's figure, tpuwizard issue 45): XLA's ``optimal_seconds`` when it gives one (it answers a
    negative number when it has none), else a roofline: the slower of flops at peak bf16 and
    bytes at HBM bandwidth."""
    optimal = record.get("optimal_seconds")
    if optimal is not None and optimal > 0:
        return float(optimal), "step time: at least XLA's own estimate (a lower bound)"
    gen = slice_.generation
    flops, moved = record.get("flops") or 0.0, record.get("bytes_accessed") or 0.0
    if not (flops or moved):
        return None, "no step-time estimate"
    seconds = max(flops / (gen.peak_bf16_tflops * 1e12), moved / (gen.hbm_bandwidth_gbps * 1e9))
    return seconds, (
        "step time: at least a roofline from XLA's flops and bytes (XLA gave no estimate)"
    )


def summarise(
    slice_: catalog.Slice,
    record: dict[str, Any],
    method: str,
    reserve: float | None,
    route: str,
    measured_gib_per_chip: float | None = None,
) -> SliceProgramFit:
    """One worker record as the table row and JSON object the issue fixes."""
    devices = int(record.get("devices") or slice_.devices)
    usable = usable_bytes(slice_, devices, reserve, measured_gib_per_chip)
    _, usable_from = fitting.usable_gib_per_chip(slice_.generation, reserve, measured_gib_per_chip)
    state = int(record.get("state_bytes", 0))
    keys = ("arguments", "outputs", "temporaries", "aliased", "code", "peak")
    per_device: dict[str, int | None] = dict.fromkeys(keys)
    fits: bool | None
    step = None
    extra: dict[str, Any] = {"method": method, "usable_from": usable_from}
    if "error" in record:
        fits, note = None, f"not compiled: {record['error']}"
    elif method == "shapes-only":
        per_device["arguments"] = state
        fits = state <= usable
        note = "state only, from the shapes (no libtpu): outputs and temporaries not counted"
    elif "out_of_memory" in record:
        fits = False
        per_device["peak"] = needed_bytes(record["out_of_memory"])
        note = f"the compiler ran out of HBM: {record['out_of_memory']}"
        limit = compiler_limit_bytes(record["out_of_memory"])
        if limit is not None:
            # The compiler's own limit beside the catalog's: where they differ, the catalog's
            # figure (or --usable) is not what this compiler enforces.
            extra["compiler_limit_bytes"] = limit
            note += (
                f" (the compiler's limit {program_advice.size_text(limit)} per device; "
                f"usable here {program_advice.size_text(usable)})"
            )
    else:
        per_device.update({k: int(record[k]) for k in keys[:-1]})
        peak = per_device["peak"] = peak_bytes(record)
        fits = peak <= usable
        step, note = step_estimate(slice_, record)
    if devices != slice_.devices:
        note = (
            f"libtpu's compile-only topology has {devices} devices where a running "
            f"{slice_.name} shows {slice_.devices} (no megacore); bytes are per TensorCore. " + note
        ).strip()
    # Flex-start has no figure: the most it costs (on-demand's), which the table says.
    price = cost.at_most_hourly(slice_, route)
    usd = None if step is None or price is None else float(f"{price * step * 1000 / 3600:.4g}")
    for key in ("cached", "compile_seconds", "donation_saving", "sharded_over_data"):
        if key in record:
            extra[key] = record[key]
    return SliceProgramFit(
        name=slice_.name,
        chips=slice_.chips,
        devices=devices,
        per_device_bytes=per_device,
        state_bytes_per_device=state,
        usable_bytes_per_device=usable,
        fits=fits,
        step_seconds=step,
        usd_per_1000_steps=usd,
        note=note,
        seconds=float(record.get("seconds", 0.0)),
        cached=bool(record.get("cached", False)),
        advice=program_advice.for_slice(record, per_device, usable),
        extra=extra,
    )
