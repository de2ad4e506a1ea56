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
