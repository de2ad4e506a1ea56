"""Advice that comes from the compiled numbers: donation, and sharding replicated state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

# Below this many bytes per device, donating or sharding is not worth a beginner's attention.
WORTH_ADVISING = 2**20


class _Fit(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def fits(self) -> bool | None: ...
    @property
    def per_device_bytes(self) -> dict[str, int | None]: ...
    @property
    def usable_bytes_per_device(self) -> int: ...
    @property
    def extra(self) -> dict[str, Any]: ...
    @property
    def note(self) -> str: ...
    @property
    def advice(self) -> list[str]: ...


def working_words(program: str, slices: int, method: str) -> str:
    """The line before the table's rows: compiling, or (without libtpu) counting the state."""
    if method == "shapes-only":
        return f"Counting {program}'s state from its shapes for {slices} slice(s)..."
    return f"Compiling {program} for {slices} slice(s) ({method})..."


def slice_notes(fits: Sequence[_Fit]) -> list[str]:
    """Each slice's own note under the table, the same in the CLI, the wizard and plain mode:
    what its numbers mean where they are not what they seem (v4-8's compile-only topology has 8
    devices, the running slice 4), why it was not compiled, and, where it does not fit, the
    first two things to try. A note every slice has is said once."""
    # the step column says "step time ..." already
    notes = {f.name: f.note for f in fits if f.note and not f.note.startswith("step time")}
    shortest = min(notes.values(), key=len, default="")
    every = len(fits) > 1 and len(notes) == len(fits)
    shared = shortest if every and all(n.endswith(shortest) for n in notes.values()) else ""
    lines = [f"Every slice: {shared}"] if shared else []
    for f in fits:
        if own := notes.get(f.name, "").removesuffix(shared).strip():
            lines.append(f"{f.name}: {own}")
        lines += [f"{f.name}: {line}" for line in (f.advice[:2] if f.fits is not True else [])]
    return lines


def size_text(count: float | None) -> str:
    """Bytes in binary units: 512 B, 3.0 KiB, 1.50 GiB."""
    if count is None:
        return "?"
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} TiB"


def _sharded_peak(variant: dict[str, Any]) -> int | None:
    if "out_of_memory" in variant or "arguments" not in variant:
        return None
    return int(
        variant["arguments"]
        + variant["outputs"]
        + variant["temporaries"]
        - variant["aliased"]
        + variant["code"]
    )


def for_slice(record: dict[str, Any], per_device: dict[str, int | None], usable: int) -> list[str]:
    """The lines of advice for one slice's compile."""
    advice = []
    saving = int(record.get("donation_saving") or 0)
    saving = saving if saving >= WORTH_ADVISING else 0
    peak = per_device.get("peak")
    if saving and peak is not None:
        argnums = tuple(record.get("donate_argnums") or ())
        then = peak - saving
        verdict = "fits" if then <= usable else "still does not fit"
        advice.append(
            f"Your step returns new copies of arguments {argnums} instead of updating them in "
            f"place: jax.jit(step, donate_argnums={argnums}) saves about {size_text(saving)} per "
            f"device (peak {size_text(peak)} -> about {size_text(then)}, which {verdict})."
        )
    variant = record.get("sharded_over_data")
    if variant is not None:
        after = _sharded_peak(variant)
        if "out_of_memory" in variant:
            shown = (
                f"; compiled that way the compiler ran out of HBM too ({variant['out_of_memory']})"
            )
        elif after is None:
            shown = " (not compiled that way: it fits with room to spare as it is)"
        else:
            shown = f"; compiled both ways: peak {size_text(peak)} -> {size_text(after)} per device"
            shown += " (fits)" if after <= usable else " (still too big)"
        advice.append(
            f"Most of the state is replicated on every device: sharding it over 'data' "
            f"(PartitionSpec('data') on its largest dimension) changes the state per device from "
            f"{size_text(record.get('state_bytes'))} to "
            f"{size_text(variant.get('state_bytes'))}{shown}."
        )
    return advice


def overall(fits: Sequence[_Fit]) -> list[str]:
    """Advice across slices: where donating or sharding would make the program fit."""
    lines = []
    donate_rescues = [
        f.name
        for f in fits
        if f.fits is False
        and f.per_device_bytes.get("peak") is not None
        and f.extra.get("donation_saving")
        and (f.per_device_bytes["peak"] or 0) - f.extra["donation_saving"]
        <= f.usable_bytes_per_device
    ]
    saving = max((int(f.extra.get("donation_saving") or 0) for f in fits), default=0)
    if saving >= WORTH_ADVISING:
        where = (
            f" It would then fit on {', '.join(donate_rescues)}, which it does not now."
            if donate_rescues
            else ""
        )
        lines.append(
            "Your step copies its state instead of updating it in place: donate_argnums would "
            f"save up to {size_text(saving)} per device.{where}"
        )
    shard_rescues = []
    for f in fits:
        variant = f.extra.get("sharded_over_data")
        if f.fits is not True and variant is not None:
            after = _sharded_peak(variant)
            if after is not None and after <= f.usable_bytes_per_device:
                shard_rescues.append(f.name)
    if shard_rescues:
        lines.append(
            "Sharding the replicated state over 'data' makes it fit on "
            f"{', '.join(shard_rescues)} (compiled that way too)."
        )
    return lines
