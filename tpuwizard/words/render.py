"""Rich renderings for the command line (the TUI has its own widgets)."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO, cast

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tpuwizard.core.cloud.backends import TPU_API, Backend
from tpuwizard.core.plan.fit import SliceFit, gib_text
from tpuwizard.words import figures

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tpuwizard.core.plan.catalog import Slice
    from tpuwizard.session.kept.lines import KeptInfo

# The price each route pays, in the words launch uses for the routes.
ROUTE_PRICE = {
    "vm": "vm (on-demand)",
    "spot": "spot",
    # cost.FLEX_PRICE_NOTE's rule: no Flex-start figure, on-demand's is the most it costs.
    "flex": "flex: at most (<=) the on-demand",
}


def console() -> Console:
    # A command's result goes to stdout (notes go to stderr); only without --json, so stdout is
    # the table or the JSON, never both. NO_COLOR is honoured by rich itself.
    no_color = bool(os.environ.get("NO_COLOR"))
    if sys.stdout.isatty():
        return Console(no_color=no_color)
    return Console(file=cast(TextIO, LineEnds(sys.stdout)), no_color=no_color)


class LineEnds(io.TextIOBase):
    """Text for a pipe or a file: rich pads tables and wrapped lines with spaces to their width,
    which a terminal hides and a file keeps; here each line loses them."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.pending = out, ""

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + text).split("\n")
        for line in lines:
            self.out.write(line.rstrip(" ") + "\n")
        return len(text)

    def flush(self) -> None:
        self.out.write(self.pending)  # a line without its end yet: as it is
        self.pending = ""
        self.out.flush()


def print_table(
    out: Console,
    title: str | None,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    wrap: Sequence[str] = (),
) -> None:
    """A table when it fits the terminal (or the 80 columns of a pipe), else one record per row.

    Names, types, states and money are never cut: only the ``wrap`` columns may wrap, at spaces,
    and when even that does not fit, each row is printed as its own short paragraph.
    """
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        pad_edge=False,
        show_edge=False,
    )
    for i, header in enumerate(headers):
        table.add_column(
            header,
            justify="left" if i == 0 or header in wrap else "right",
            no_wrap=header not in wrap,
        )
    for row in rows:
        table.add_row(*row)
    if _narrowest(headers, rows, wrap) <= out.width:
        out.print(table)
        return
    if title:
        out.print(title)
    for row in rows:
        out.print(f"[b]{row[0]}[/b]")
        pairs = zip(headers[1:], row[1:], strict=True)
        details = "; ".join(f"{h}: {v}" for h, v in pairs if v)  # an empty cell says nothing
        out.print(Padding(Text.from_markup(details), (0, 0, 0, 2)))


def _narrowest(headers: Sequence[str], rows: Sequence[Sequence[str]], wrap: Sequence[str]) -> int:
    """Columns the table needs with nothing cut: whole cells, or the longest word of a wrap
    column, and the two-column gap between columns."""

    def need(text: str, wraps: bool) -> int:
        plain = Text.from_markup(text).plain
        return max((cell_len(w) for w in plain.split()), default=0) if wraps else cell_len(plain)

    widths = [
        max(need(h, h in wrap), *(need(row[i], h in wrap) for row in rows))
        for i, h in enumerate(headers)
    ]
    return sum(widths) + 2 * (len(widths) - 1)


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
    title = f"Training state {gib_text(state_gib, 2)} GiB"
    if bytes_per_param is not None:
        title += f" ({recipe}: {bytes_per_param:g} bytes per parameter)"
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
    rows = [
        (
            f.name,
            str(f.chips),
            str(f.vms),
            f"{f.hbm_gib_per_chip:g}",
            f"{f.total_hbm_gib:g}",
            f"{f.usable_gib_per_chip:.2f}" + ("?" if f.usable_from == "unconfirmed" else ""),
            _mark(f.fits_sharded),
            _mark(f.fits_replicated),
            _mark(f.fits_total),
            gib_text(f.headroom_gib),
            _price(f.price_per_hour_usd, f.price_at_most_usd),
        )
        for f in fits
    ]
    print_table(out, title, headers, rows)
    out.print(
        "[dim]HBM, usable and spare: GiB per chip; all: GiB in the slice. usable: "
        f"{_usable_words(fits)}. shard: the state split over every chip fits; repl: a full copy "
        "fits one device; total: the slice's HBM >= the state. $/h: "
        f"{ROUTE_PRICE.get(route, route)} price.[/]"
    )
    out.print(verdict)
    out.print(f"[dim]{note} Prices are approximate list prices; check the pricing page.[/]")


def _usable_words(fits: list[SliceFit]) -> str:
    """Where the usable column's figures come from, as few words as the table needs."""
    said = {f.usable_from for f in fits}
    words = []
    if "catalog" in said:
        words.append("measured on a chip or named by the compiler, per generation")
    if "unconfirmed" in said:
        words.append("? nominal x 0.94, unconfirmed")
    if "usable" in said:
        words.append("--usable's fraction of nominal")
    if "receipt" in said:
        words.append("the receipt's bytes_limit")
    return "; ".join(words)


def render_zones(
    table: dict[str, list[str]],
    label: str,
    accelerator: str | None,
    runtime: str | None,
    note: str,
    failures: dict[str, str],
    unconfirmed: frozenset[str] = frozenset(),
    offers: list | None = None,
    survey_source: str = "documented",
    last_tried: dict[str, str] | None = None,
    route: str = "vm",
    unusable: dict[str, str] | None = None,
    quoted: dict | None = None,
    slice_: Slice | None = None,
) -> None:
    """``slice_``: ``accelerator`` parsed, which the offline prices need. ``quoted``: zone ->
    cost.ZonePrice from the Billing Catalog where read (else the offline
    table's are computed here). With ``offers`` (backend_choice.ZoneOffer, one per zone of
    ``table``), a backends column: each backend that offers the type there, its source named
    where it is not the survey's. ``route``'s price is shown; with ``unusable`` (``zones
    --route``), a column says for each zone whether the route can use it, or why not."""
    out = console()
    title = f"Zones offering {accelerator}" if accelerator else "TPU types by zone"
    out.print(f"[bold]{title}[/] ({label})")
    if not table:
        out.print(f"No zone offers {accelerator}." if accelerator else "No zones found.")
    second = "runtime version" if accelerator else "accelerator types"
    by_zone = {o.zone: o.backends for o in offers or []}
    prices: dict = {}  # zone -> cost.ZonePrice, where the table has a price column

    def zone_cell(zone: str) -> str:
        return zone + (" (unconfirmed)" if zone in unconfirmed else "")

    def backends_cell(zone: str) -> str:
        said = by_zone.get(zone, ())
        return ", ".join(b + (f" ({src})" if src != survey_source else "") for b, src in said)

    if accelerator and offers is not None:
        # The runtime version is the TPU API's; a zone only Compute Engine offers has none.
        from tpuwizard.core.plan import cost

        prices = quoted or (
            {zone: cost.zone_price(slice_, route, zone) for zone in table} if slice_ else {}
        )

        def price_cell(zone: str) -> str:
            price = prices[zone]
            return figures.price_cell(price.hourly, price.note, price.at_most)

        headers: tuple[str, ...] = ("zone", second, "backends", "$/h")
        rows: list[tuple[str, ...]] = [
            (
                zone_cell(zone),
                (runtime or "") if any(b == TPU_API for b, _ in by_zone.get(zone, ())) else "",
                backends_cell(zone),
                price_cell(zone),
            )
            for zone in table
        ]
        if unusable is not None:
            headers += (f"for {ROUTE_WORDS.get(route, route)}",)
            rows = [
                (*row, unusable.get(zone) or "usable")
                for row, zone in zip(rows, table, strict=True)
            ]
        tried = last_tried or {}
        if any(zone in tried for zone in table):  # a column only once something was tried
            headers += ("last tried",)
            rows = [(*row, tried.get(zone, "")) for row, zone in zip(rows, table, strict=True)]
    else:
        headers = ("zone", second)
        rows = [
            (zone_cell(zone), (runtime or "") if accelerator else ", ".join(types))
            for zone, types in table.items()
        ]
    if table:
        print_table(out, None, headers, rows, wrap=(second, "backends"))
        footnote = figures.price_footnote([p.note for p in prices.values()])
        if footnote:
            out.print(f"[dim]$/h: {ROUTE_WORDS.get(route, route)}. {footnote}[/]")
    for zone, error in failures.items():
        out.print(f"[yellow]{zone}: not surveyed ({error})[/]")
    out.print(f"[dim]{note}[/]")


ROUTE_WORDS = {"vm": "on demand", "spot": "spot", "flex": "Flex-start"}


def kept_ends(infos: Sequence[KeptInfo]) -> dict[str, str]:
    """How each kept node ends without you, by name, for status's table: words/kept_end.py's
    one sentence, as its Kept line says it (issue 55.11: the table had no deadline)."""
    from tpuwizard.core.deadlines import EndedBy
    from tpuwizard.words.kept_end import kept_end_sentence

    ends = {}
    for info in infos:
        idle_minutes = info.idle_s / 60 if info.idle_s else None
        by = None if idle_minutes or info.max_deadline else EndedBy.NOTHING
        ends[info.name] = kept_end_sentence(idle_minutes, info.max_deadline, by, info.practice)
    return ends


def render_status(
    found: list,
    cost_label: str,
    title: str | None = None,
    practice: bool = False,
    ends: Mapping[str, str] | None = None,
) -> None:
    """The resources that may still bill; ``ends``: how each kept node among them ends (an
    ``ends`` column, only where one is listed)."""
    from tpuwizard.words import bill_words
    from tpuwizard.words.figures import spent

    if title is None:
        title = bill_words.may_still_be_billing(practice).capitalize()
    not_yet = "not running yet" if practice else "not billing yet"

    out = console()
    rows: list[tuple[str, ...]] = [
        (
            f"{b.resource.name}: {' + '.join(b.parts)}" if b.parts else b.resource.name,
            kind_words(b.resource.kind, b.parts),
            b.resource.backend,
            b.resource.zone,
            b.resource.accelerator,
            state_words(b.resource.backend, b.state, practice),
            _age(b.age_s),
            spent(b.cost_usd, b.cost_at_most_usd) if b.billing else not_yet,
        )
        for b in found
    ]
    so_far = "cost if real" if practice else "cost so far"  # practice bills nothing
    headers: tuple[str, ...] = ("name", "kind", "backend", "zone", "type", "state", "age", so_far)
    wrap: tuple[str, ...] = ()
    if ends and any(b.resource.name in ends for b in found):
        headers, wrap = (*headers, "ends"), ("ends",)
        rows = [(*row, ends.get(b.resource.name, "-")) for row, b in zip(rows, found, strict=True)]
    print_table(out, title, headers, rows, wrap)
    for line in parts_notes(found):
        out.print(f"[dim]{line}[/]")
    out.print(f"[dim]Costs are an {cost_label}. {delete_words(found, practice)}[/]")
    if practice:  # the figures are what Google would charge: nothing here is billed
        out.print("[dim]Practice: nothing is billed; the costs are what Google would charge.[/]")


def kind_words(kind: str, parts: Sequence[str]) -> str:
    """The kind column: a Compute Engine slice (a MIG of TPU VMs, Route 2B) is one node made of
    parts, and says so rather than a bare "node"."""
    if kind == "node" and "MIG" in parts:
        return "slice (MIG)"
    return kind


def parts_notes(found: Sequence) -> list[str]:
    """What a slice's parts are, once under the table, where a row lists them."""
    parts = {p for b in found for p in b.parts}
    if "MIG" not in parts and not any(p.endswith(("VM", "VMs")) for p in parts):
        return []
    notes = [
        "A slice (MIG) is Compute Engine's TPU slice: a managed instance group (MIG) of TPU "
        "VMs made from an instance template"
        + (", with the workload policy that places them" if "policy" in parts else "")
        + "."
    ]
    if "resize request" in parts:
        notes.append(
            "Its resize request is Route 2B's Flex-start ask for the VMs (the MIG grows when "
            "Google grants it)."
        )
    notes.append("Deleting the name deletes every part listed with it, and checks each is gone.")
    return notes


def delete_words(found: Sequence, practice: bool) -> str:
    """One command for one thing: where every row is a node kept on purpose, the ``down`` its
    Kept line names; else ``teardown`` (``down`` is the same verified delete under the name
    ``up`` pairs with)."""
    flag = " --sandbox" if practice else ""
    if found and all(getattr(b, "kept", False) for b in found):
        return f"Delete with: tpuwizard down{flag} NAME (or --all)"
    if any(getattr(b, "kept", False) for b in found):
        return (
            f"Delete with: tpuwizard teardown{flag} NAME (or --all); for a kept node "
            f"`tpuwizard down{flag} NAME` is the same delete"
        )
    return f"Delete with: tpuwizard teardown{flag} NAME (or --all)"


def state_words(backend: str, state: str, practice: bool = False) -> str:
    """A state as status shows it: a Compute Engine VM that Google stopped has no deadline any
    more (Google clears it on stop) and its disk still bills (not in practice)."""
    from tpuwizard.core.cloud.compute.states import STOPPED_STATES

    if backend == Backend.COMPUTE and state in STOPPED_STATES:
        disk = "disk not billed: practice" if practice else "disk still billing"
        return f"{state} (stopped by Google, {disk})"
    return state


def _age(seconds: float) -> str:
    minutes = int(seconds // 60)
    return (
        f"{minutes // 60}h{minutes % 60:02d}m"
        if minutes >= 60
        else f"{minutes}m{int(seconds) % 60:02d}s"
    )


def _price(hourly: float | None, at_most: float | None) -> str:
    if hourly is not None:
        return f"{hourly:.2f}"
    return "?" if at_most is None else f"<={at_most:.2f}"
