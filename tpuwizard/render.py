"""Rich renderings for the command line (the TUI has its own widgets)."""

from __future__ import annotations

import os

from rich import box
from rich.console import Console
from rich.table import Table

from tpuwizard.core.plan.fit import SliceFit


def console() -> Console:
    # Human output goes to stderr; NO_COLOR is honoured by rich itself.
    return Console(stderr=True, no_color=bool(os.environ.get("NO_COLOR")))


def _mark(ok: bool) -> str:
    # A word as well as a colour, so nothing is conveyed by colour alone.
    return "[green]yes[/]" if ok else "[red]no[/]"


def render_fit(
    state_gib: float,
    bytes_per_param: float | None,
    recipe: str | None,
    fits: list[SliceFit],
    route: str,
    verdict: str,
    note: str,
) -> None:
    out = console()
    title = f"Training state {state_gib:.2f} GiB"
    if bytes_per_param is not None:
        title += f" ({recipe}: {bytes_per_param:g} bytes per parameter)"
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        pad_edge=False,
        show_edge=False,
    )
    headers = (
        "slice",
        "chips",
        "VMs",
        "HBM",
        "all",
        "usable",
        "shard",
        "repl",
        "total",
        "spare",
        "$/h",
    )
    for header in headers:
        table.add_column(header, justify="left" if header == "slice" else "right", no_wrap=True)
    for f in fits:
        price = "?" if f.price_per_hour_usd is None else f"{f.price_per_hour_usd:.2f}"
        table.add_row(
            f.name,
            str(f.chips),
            str(f.vms),
            f"{f.hbm_gib_per_chip:g}",
            f"{f.total_hbm_gib:g}",
            f"{f.usable_gib_per_chip:.1f}",
            _mark(f.fits_sharded),
            _mark(f.fits_replicated),
            _mark(f.fits_total),
            f"{f.headroom_gib:.1f}",
            price,
        )
    out.print(table)
    out.print(
        "[dim]HBM, usable and spare: GiB per chip; all: GiB in the slice. shard: the state "
        "split over every chip fits; repl: a full copy fits one device; total: the slice's "
        f"HBM >= the state. $/h: {route} price.[/]"
    )
    out.print(verdict)
    out.print(f"[dim]{note} Prices are approximate list prices; check the pricing page.[/]")


def render_zones(
    table: dict[str, list[str]],
    label: str,
    accelerator: str | None,
    runtime: str | None,
    note: str,
    failures: dict[str, str],
    unconfirmed: frozenset[str] = frozenset(),
) -> None:
    out = console()
    title = f"Zones offering {accelerator}" if accelerator else "TPU types by zone"
    out.print(f"[bold]{title}[/] ({label})")
    if not table:
        out.print(f"No zone offers {accelerator}." if accelerator else "No zones found.")
    grid = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    grid.add_column("zone", no_wrap=True)
    grid.add_column("runtime version" if accelerator else "accelerator types")
    for zone, types in table.items():
        mark = " (unconfirmed)" if zone in unconfirmed else ""
        grid.add_row(zone + mark, runtime if accelerator else ", ".join(types))
    if table:
        out.print(grid)
    for zone, error in failures.items():
        out.print(f"[yellow]{zone}: not surveyed ({error})[/]")
    out.print(f"[dim]{note}[/]")


def render_status(found: list, cost_label: str, title: str = "May still be billing") -> None:
    from tpuwizard.event_text import money

    out = console()
    grid = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    for header in ("name", "kind", "zone", "type", "state", "age", "cost so far"):
        grid.add_column(header, no_wrap=header in ("name", "zone"))
    for b in found:
        r = b.resource
        grid.add_row(
            r.name, r.kind, r.zone, r.accelerator, b.state, _age(b.age_s), money(b.cost_usd)
        )
    out.print(grid)
    out.print(f"[dim]Costs are an {cost_label}. Delete with: tpuwizard teardown NAME (or --all)[/]")


def _age(seconds: float) -> str:
    minutes = int(seconds // 60)
    return (
        f"{minutes // 60}h{minutes % 60:02d}m"
        if minutes >= 60
        else f"{minutes}m{int(seconds) % 60:02d}s"
    )


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
    """``fit --program``: per-device bytes, fit, step time and price per slice."""
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
    headers = ("slice", "dev", *(_BYTE_HEADERS[k] for k in keys), "usable", "fits", "step", "$/1k")
    for header in headers:
        table.add_column(header, justify="left" if header == "slice" else "right", no_wrap=True)
    for r in results:
        b = r.per_device_bytes
        fits = "?" if r.fits is None else _mark(r.fits)
        step = "?" if r.step_seconds is None else _duration(r.step_seconds)
        usd = "?" if r.usd_per_1000_steps is None else _dollars(r.usd_per_1000_steps)
        table.add_row(
            r.name,
            str(r.devices),
            *(_short(b[k]) for k in keys),
            _short(r.usable_bytes_per_device),
            fits,
            step,
            usd,
        )
    out.print(table)
    out.print(
        "[dim]Bytes per device (K, M, G: KiB, MiB, GiB). peak = args + out + temp - alias + "
        f"code. step: XLA's estimate of one step; $/1k steps at the {route} price. An "
        "estimate: not yet held against a real TPU run.[/]"
    )
    for r in results:
        if r.note and not r.note.startswith("step time"):
            out.print(f"{r.name}: {r.note}")
        for line in r.advice[:2] if r.fits is not True else []:
            out.print(f"{r.name}: {line}")
    for line in advice:
        out.print(line)
