"""The routes side by side, one card each; the chosen card is the answer (← →, or a click).

The cards are the choice itself, so the first step draws each route once, and a click on what
the user is reading picks it. Which card is chosen and which is recommended is said in words on
its border, not by colour alone. One widget draws all four boxes: four bordered widgets took
longer to mount than the rest of the first screen together.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Size
from textual.markup import escape
from textual.message import Message
from textual.widget import Widget

from tpuwizard.core.plan.routes import RouteInfo

CHOSEN, RECOMMENDED = "▸ chosen", "recommended"
SHORT = {CHOSEN: "▸", RECOMMENDED: "rec."}  # for cards too narrow for the words
GAP = 1  # columns between cards
# Corners (top left, top right, bottom left, bottom right), then the horizontal and vertical edge.
ROUND = ("╭", "╮", "╰", "╯", "─", "│")
HEAVY = ("┏", "┓", "┗", "┛", "━", "┃")


def card_text(info: RouteInfo, compact: bool = False, note: str = "") -> str:
    """A card's words; ``note`` (plain text, read after the screen was drawn) ends it, where
    there is room: the compact cards keep 80x24 whole, so F1 and 100 columns have it."""
    if compact:
        return f"[b]{info.title}[/b]\n{info.cost}\nruns {info.max_run}"
    after = "\n" + escape(note) if note else ""
    return (
        f"[b]{info.title}[/b]\ncost: {info.cost}\nwait: {info.wait}\n"
        f"runs: {info.max_run}\nchips: {info.chips}\nneeds: {info.account}{after}"
    )


def fitted(words: str, room: int) -> str:
    """A border's words as they fit in ``room`` cells: whole, shortened, or not at all."""
    for label in (words, SHORT.get(words, "")):
        if label and len(label) + 2 <= room:
            return f" {label} "
    return ""


class RouteCards(Widget, can_focus=True):
    DEFAULT_CSS = """
    RouteCards {
        height: auto;
        margin: 0 0 1 0;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "step(1)", "Pick", key_display="← →"),  # the key bar: "← → Pick"
        Binding("left", "step(-1)", "Previous route", show=False),
    ]

    class Changed(Message):
        """The user chose another route."""

        def __init__(self, cards: RouteCards, route: str) -> None:
            super().__init__()
            self.cards = cards
            self.route = route

        @property
        def control(self) -> RouteCards:
            return self.cards

    def __init__(
        self, routes: list[RouteInfo], chosen: str, recommended: str, compact: bool, id: str
    ) -> None:
        super().__init__(id=id)
        self.routes = routes
        self.chosen, self.recommended, self.compact = chosen, recommended, compact
        self.notes: dict[str, str] = {}  # a route's last line, by its key (Kaggle's quota)
        self.drawn: tuple[tuple[object, ...], list[Content]] | None = None  # the last lines

    # -- what is shown --------------------------------------------------------------------
    def words(self, route: str) -> tuple[str, str]:
        """The words on a card's border: (top, bottom), "" where there is nothing to say."""
        return (
            CHOSEN if route == self.chosen else "",
            RECOMMENDED if route == self.recommended else "",
        )

    def show(self, chosen: str, recommended: str) -> None:
        """Mark the chosen and the recommended route (the program's pick: no message)."""
        self.chosen, self.recommended = chosen, recommended
        self.refresh()

    def set_note(self, route: str, note: str) -> None:
        """A line that ends the route's card, come after the first drawing."""
        self.notes[route] = note
        self.refresh(layout=True)

    def set_compact(self, compact: bool) -> None:
        """Below 100 columns the cards keep only cost and run time."""
        self.compact = compact
        self.refresh(layout=True)

    def choose(self, route: str) -> None:
        """The user's pick: marked, and said to the screen."""
        if route != self.chosen:
            self.show(route, self.recommended)
            self.post_message(self.Changed(self, route))

    # -- drawing ----------------------------------------------------------------------------
    def columns(self, width: int) -> list[tuple[int, int]]:
        """Each card's (first column, width) across ``width`` cells."""
        count = len(self.routes)
        room = max(count, width - GAP * (count - 1))
        spans, x = [], 0
        for i in range(count):
            w = room // count + (1 if i < room % count else 0)
            spans.append((x, w))
            x += w + GAP
        return spans

    def lines(self, width: int) -> list[Content]:
        """The cards' lines at ``width`` (measured, then drawn: worked out once for both)."""
        notes = tuple(sorted(self.notes.items()))
        key = (width, self.chosen, self.recommended, self.compact, self.has_focus, notes)
        if self.drawn is None or self.drawn[0] != key:
            self.drawn = key, self.draw(width)
        return self.drawn[1]

    def draw(self, width: int) -> list[Content]:
        columns = self.columns(width)
        bodies = [
            Content.from_markup(card_text(info, self.compact, self.notes.get(info.key, ""))).wrap(
                max(1, w - 4)
            )
            for info, (_, w) in zip(self.routes, columns, strict=True)
        ]
        height = max(len(body) for body in bodies)
        return [
            Content(" " * GAP).join(
                self.card_row(info, w, body, row, height)
                for info, (_, w), body in zip(self.routes, columns, bodies, strict=True)
            )
            for row in range(height + 2)
        ]

    def card_row(
        self, info: RouteInfo, width: int, body: list[Content], row: int, height: int
    ) -> Content:
        top, bottom = self.words(info.key)
        chosen = bool(top)
        left_top, right_top, left_bottom, right_bottom, edge, side = HEAVY if chosen else ROUND
        if chosen:
            style = "bold $accent" if self.has_focus else "bold $foreground"
        else:
            style = "$success" if bottom else "$foreground-muted"
        if row == 0:
            label = fitted(top, width - 3)
            rest = edge * max(0, width - 3 - len(label))
            return Content.assemble((left_top + edge + label + rest + right_top, style))
        if row == height + 1:
            label = fitted(bottom, width - 3)
            rest = edge * max(0, width - 3 - len(label))
            return Content.assemble((left_bottom + rest + label + edge + right_bottom, style))
        text = body[row - 1] if row - 1 < len(body) else Content("")
        return Content.assemble(
            (side + " ", style), text.pad_right(width - 4 - text.cell_length), (" " + side, style)
        )

    def render(self) -> Content:
        return Content("\n").join(self.lines(self.size.width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))

    def on_focus(self) -> None:
        self.refresh()  # the chosen card's border takes the focus colour

    def on_blur(self) -> None:
        self.refresh()

    # -- choosing ---------------------------------------------------------------------------
    def card_at(self, x: int) -> str | None:
        """The route whose card covers column ``x`` (None in a gap)."""
        for info, (start, w) in zip(self.routes, self.columns(self.size.width), strict=True):
            if start <= x < start + w:
                return info.key
        return None

    def action_step(self, by: int) -> None:
        keys = [info.key for info in self.routes]
        self.choose(keys[(keys.index(self.chosen) + by) % len(keys)])

    def on_click(self, event: events.Click) -> None:
        route = self.card_at(event.x)
        if route is not None:
            self.choose(route)
