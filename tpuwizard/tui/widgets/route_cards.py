"""The routes side by side, one card each; the chosen card is the answer (← →, or a click).

The cards are the choice itself, so the first step draws each route once, and a click on what
the user is reading picks it. Which card is chosen and which is recommended is said in words on
its border, not by colour alone.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Static

from tpuwizard.core.plan.routes import RouteInfo

CHOSEN, RECOMMENDED = "▸ chosen", "recommended"


def card_text(info: RouteInfo, compact: bool = False) -> str:
    if compact:
        return f"[b]{info.title}[/b]\n{info.cost}\nruns {info.max_run}"
    return (
        f"[b]{info.title}[/b]\ncost: {info.cost}\nwait: {info.wait}\n"
        f"runs: {info.max_run}\nchips: {info.chips}\nneeds: {info.account}"
    )


class RouteCards(Horizontal, can_focus=True):
    DEFAULT_CSS = """
    RouteCards {
        height: auto;
    }
    RouteCards > .route-card {
        width: 1fr;
        height: auto;
        padding: 0 1;
        margin: 0 1 1 0;
        border: round $foreground-muted;
        border-subtitle-color: $success;
    }
    RouteCards > .route-card.recommended {
        border: round $success;
    }
    RouteCards > .route-card.chosen {
        border: heavy $foreground;
    }
    RouteCards:focus > .route-card.chosen {
        border: heavy $accent;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "step(1)", "Next route", show=False),
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

    def compose(self) -> ComposeResult:
        for info in self.routes:
            card = Static(
                card_text(info, self.compact),
                classes="route-card",
                id=f"card-{info.key}",
                name=info.key,
            )
            self.mark(card)
            yield card

    def mark(self, card: Static) -> None:
        chosen, recommended = card.name == self.chosen, card.name == self.recommended
        card.set_class(chosen, "chosen")
        card.set_class(recommended, "recommended")
        card.border_title = CHOSEN if chosen else ""
        card.border_subtitle = RECOMMENDED if recommended else ""

    def show(self, chosen: str, recommended: str) -> None:
        """Mark the chosen and the recommended route (the program's pick: no message)."""
        self.chosen, self.recommended = chosen, recommended
        for card in self.query(".route-card").results(Static):
            self.mark(card)

    def set_compact(self, compact: bool) -> None:
        """Below 100 columns the cards keep only cost and run time."""
        self.compact = compact
        for info in self.routes:
            self.query_one(f"#card-{info.key}", Static).update(card_text(info, compact))

    def choose(self, route: str) -> None:
        """The user's pick: marked, and said to the screen."""
        if route != self.chosen:
            self.show(route, self.recommended)
            self.post_message(self.Changed(self, route))

    def action_step(self, by: int) -> None:
        keys = [info.key for info in self.routes]
        self.choose(keys[(keys.index(self.chosen) + by) % len(keys)])

    def on_click(self, event: events.Click) -> None:
        node = event.widget
        while node is not None and node is not self:
            if isinstance(node, Static) and node.has_class("route-card") and node.name:
                self.choose(node.name)
                return
            node = node.parent  # type: ignore[assignment]
