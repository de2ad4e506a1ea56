"""``fit --program``'s table for the command line: bytes, fit, step time and price per slice, and
with ``--measure`` the measured slice's run beside its prediction."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from tpuwizard.core.plan import program_advice
from tpuwizard.words.render import ROUTE_PRICE, _mark, console


def _short(count: int | None) -> str:
    if count is None:
        return "-"
    for unit, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if count >= scale:
            return f"{count / scale:.3g}{unit}"
    return f"{count}B"


def _duration(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g}{unit}"
    return f"{seconds / 1e-9:.3g}ns"


def _dollars(usd: float) -> str:
    return "<0.01" if usd < 0.005 else f"{usd:.2f}"


_BYTE_KEYS = ("arguments", "outputs", "temporaries", "aliased", "code", "peak")
_BYTE_HEADERS = dict(zip(_BYTE_KEYS, ("args", "out", "temp", "alias", "code", "peak"), strict=True))


def render_program_fit(
    program: str, method: str, results: list, route: str, advice: list[str]
) -> None:
    """``fit --program``: per-device bytes, fit, step time and price per slice; with
    ``--measure``, the measured slice's run in a row of its own under its prediction."""
    out = console()
    table = Table(
        title=f"{program} ({method})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        show_edge=False,
        pad_edge=False,
    )
    # The aliased column only when something is aliased (donated), to stay within 80 columns.
    keys = [k for k in _BYTE_KEYS if k != "aliased" or any(r.per_device_bytes[k] for r in results)]
    # A predicted time is a lower bound: the headers say "at least" (>=), as "<=" says "at most".
    headers = (
        "slice",
        "dev",
        *(_BYTE_HEADERS[k] for k in keys),
        "usable",
        "fits",
        ">=step",
        ">=$/1k",
    )
    for header in headers:
        table.add_column(header, justify="left" if header == "slice" else "right", no_wrap=True)
    for r in results:
        b = r.per_device_bytes
        fits = "?" if r.fits is None else _mark(r.fits)
        step = "?" if r.step_seconds is None else _duration(r.step_seconds)
        usd = "?" if r.usd_per_1000_steps is None else _dollars(r.usd_per_1000_steps)
        unconfirmed = "?" if r.extra.get("usable_from") == "unconfirmed" else ""
        table.add_row(
            r.name,
            str(r.devices),
            *(_short(b[k]) for k in keys),
            _short(r.usable_bytes_per_device) + unconfirmed,
            fits,
            step,
            usd,
        )
        if r.measured is not None:
            table.add_row(*_measured_row(r.measured, keys, r.devices))
    out.print(table)
    measured = [r for r in results if r.measured is not None]
    out.print(
        "[dim]Bytes per device (K, M, G: KiB, MiB, GiB). peak = args + out + temp - alias + "
        "code. usable: the generation's usable HBM (? where unconfirmed: nominal x 0.94). "
        ">=step and >=$/1k: at least these: XLA's estimate of one step is a lower bound, and "
        f"$/1k steps at the {ROUTE_PRICE.get(route, route)} price is built on it."
        + (
            " A 'ran' row is measured (its step and $/1k are the run's own); rows without one "
            "are predictions."
            if measured
            else ""
        )
        + "[/]"
    )
    for r in measured:
        out.print(measured_words(r), markup=False, highlight=False)
    for line in program_advice.slice_notes(results):
        out.print(line, markup=False, highlight=False)
    for line in advice:
        out.print(line)


def _measured_row(m: dict, keys: list[str], devices: int) -> tuple[str, ...]:
    """The run's row: its peak under the prediction's, its median step, its price."""
    on_tpu = m.get("on") == "tpu"
    peak = _short(m.get("peak_bytes")) if m.get("peak_bytes") else "-"
    step = "-" if m.get("step_seconds") is None else _duration(m["step_seconds"])
    usd = "-" if m.get("usd_per_1000_steps") is None else _dollars(m["usd_per_1000_steps"])
    ran = {True: "ran", False: "[red]no[/]", None: "?"}[m.get("fits")]
    cells = ["-" if k != "peak" else peak for k in keys]
    label = "  ran" if on_tpu else "  ran (CPU)"
    return (label, str(m.get("devices", devices)), *cells, "", ran, step, usd)


def measured_words(r: Any) -> str:
    """The measured slice's sentence: its run beside its prediction."""
    m = r.measured
    where = f"{r.name}, {m['label']}"
    if m.get("fits") is not True:
        return f"{where}: {m.get('note') or 'not measured'}"
    parts = []
    predicted_peak = r.per_device_bytes.get("peak")
    if m.get("peak_bytes"):
        peak = program_advice.size_text(m["peak_bytes"])
        said = f"peak {peak} per device (in use + reserved)"
        if predicted_peak:
            said += f" against {program_advice.size_text(predicted_peak)} predicted"
        parts.append(said)
    elif m.get("on") != "tpu":
        parts.append("no memory figures (a CPU device has none)")
    step = m.get("step_seconds")
    if step is not None:
        said = f"a step took {_duration(step)} (median of {m.get('steps_timed', '?')})"
        if r.step_seconds:
            said += f" against at least {_duration(r.step_seconds)} predicted"
        parts.append(said)
    if m.get("usd_per_1000_steps") is not None:
        parts.append(f"${_dollars(m['usd_per_1000_steps'])} per 1000 steps at that time")
    predicted = bool(predicted_peak or r.step_seconds)  # without libtpu: none was made
    tail = (
        ""
        if m.get("on") == "tpu"
        else "; the prediction above stands"
        if predicted
        else "; a CPU's run says nothing of a TPU's memory or step time"
    )
    return f"{where}: {'; '.join(parts)}{tail}."


def program_verdict(program: str, row: Any) -> str:
    """Review's fit line for a slice picked from ``program``'s table (a SliceProgramFit): the
    program's own figures per device, never the size box's untouched default."""
    size = program_advice.size_text
    state, usable = size(row.state_bytes_per_device), size(row.usable_bytes_per_device)
    peak = row.per_device_bytes.get("peak")
    if row.fits is False:
        return (
            f"Your program {program} needs {size(peak or row.state_bytes_per_device)} per device "
            f"on {row.name}, of {usable} usable: it does not fit."
        )
    held = "fits" if row.fits else "may fit (not known)"
    step = f"; its step's peak {size(peak)}" if peak is not None else ""
    return (
        f"Your program {program}: its state, {state} per device{step}, {held} on {row.name} "
        f"({usable} usable per device)."
    )
