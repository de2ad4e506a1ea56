"""Step 1: how to get a TPU. The routes side by side, and a recommendation from four answers."""

from __future__ import annotations

from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Button, RadioButton, RadioSet, Static

from tpuwizard.core.plan.routes import BUDGETS, RUN_LENGTHS, RouteInfo, recommend, route_table
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.choice import Choice
from tpuwizard.tui.widgets.pick_list import PickList

CHIPS = (1, 4, 8, 16, 64)
ASK = "A few questions for a recommendation (change an answer with ← →):"
ASK_SHORT = "Change an answer with ← →; Enter goes on."


class RouteScreen(WizardScreen):
    STEP = "1 Route"
    CAN_GO_BACK = False
    HELP = (
        "Pick how you will get a TPU. Answer the four questions for a recommendation (Tab moves "
        "between them; the arrow keys, Space or a click change an answer); the choice stays yours. "
        "The free notebook route needs no billing account."
    )
    # Enter on a question goes on; the list and the buttons answer Enter themselves first.
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "go_on", "Next", show=False)]

    def __init__(self, current: str, answers: dict[str, object] | None = None) -> None:
        super().__init__()
        self.current = current
        # The four answers, kept in the wizard's state so that Back finds them as they were.
        # Empty on the first visit: then the recommendation is preselected.
        self.answers: dict[str, object] = answers if answers is not None else {}
        self.seen = dict(self.answers)  # the answers the current pick was made under
        self.recommended = ""
        self.chosen = current  # the route picked, by the user or by a new recommendation

    def compose_body(self) -> ComposeResult:
        a = self.answers
        yield Static("[b]How will you get a TPU?[/b]", classes="title", id="route-title")
        with Horizontal(id="routes"):
            for info in route_table():
                yield Static(card_text(info), classes="route-card", id=f"card-{info.key}")
        yield Static(ASK, id="ask")
        with Horizontal(id="questions"):
            yield Choice([(b, b) for b in BUDGETS], a.get("budget", "normal"), "Budget", "budget")
            yield Choice(
                [(_chips(c), c) for c in CHIPS], a.get("chips", 4), "Chips needed", "chips"
            )
            yield Choice(
                [(r, r) for r in RUN_LENGTHS], a.get("length", "1-4 hours"), "Run length", "length"
            )
            yield Choice(
                [("yes", True), ("no", False)], a.get("billing", True), "Billing acct", "billing"
            )
        yield Static(id="advice")
        with Horizontal(id="pick"):
            with PickList(id="route"):
                for info in route_table():
                    yield RadioButton(info.title, value=info.key == self.current, name=info.key)
            yield Button("Next", id="next", variant="primary")

    def on_mount(self) -> None:
        self.update_advice()
        self.query_one("#budget", Choice).focus()

    def on_resize(self, event: events.Resize) -> None:
        # Below 100 columns the cards keep cost and run time, so 80x24 holds the whole step
        # (F1 and the 100-column view have the rest).
        compact = event.size.width < 100
        for info in route_table():
            self.query_one(f"#card-{info.key}", Static).update(card_text(info, compact))
        self.query_one("#ask", Static).update(ASK_SHORT if compact else ASK)
        self.query_one("#route-title", Static).display = not compact

    @on(Choice.Changed)
    def update_advice(self) -> None:
        now = {
            k: self.query_one(f"#{k}", Choice).value
            for k in ("budget", "chips", "length", "billing")
        }
        changed, self.seen = now != self.seen, now
        self.answers.update(now)
        advice = recommend(
            self.answers["budget"],  # type: ignore[arg-type]
            int(self.answers["chips"]),  # type: ignore[call-overload]
            self.answers["length"],  # type: ignore[arg-type]
            bool(self.answers["billing"]),
        )
        self.recommended = advice.route
        title = next(i.title for i in route_table() if i.key == advice.route)
        self.query_one("#advice", Static).update(f"Recommended: [b]{title}[/b]. {advice.reason}")
        for card in self.query(".route-card"):
            # A border colour and a word: nothing is said by colour alone.
            card.set_class(card.id == f"card-{advice.route}", "recommended")
            card.border_subtitle = "recommended" if card.id == f"card-{advice.route}" else ""
        if changed:
            # A new answer preselects its recommendation; coming back (Esc) keeps the pick.
            self.chosen = advice.route
            self.query_one(PickList).pick(advice.route)
        self.mark_choice()

    @on(RadioSet.Changed)
    def picked(self, event: RadioSet.Changed) -> None:
        self.chosen = str(event.pressed.name)
        self.mark_choice()

    def mark_choice(self) -> None:
        """Say which route is picked and which is recommended in words, not by colour alone."""
        for radio, info in zip(self.query(RadioButton), route_table(), strict=True):
            words = [
                w
                for w, on_ in (
                    ("chosen", info.key == self.chosen),
                    ("recommended", info.key == self.recommended),
                )
                if on_
            ]
            radio.label = info.title + (f" ({', '.join(words)})" if words else "")

    def action_go_on(self) -> None:
        self.query_one("#next", Button).press()

    @on(Button.Pressed, "#next")
    def choose(self) -> None:
        self.dismiss(self.chosen)


def card_text(info: RouteInfo, compact: bool = False) -> str:
    if compact:
        return f"[b]{info.title}[/b]\n{info.cost}\nruns {info.max_run}"
    return (
        f"[b]{info.title}[/b]\ncost: {info.cost}\nwait: {info.wait}\n"
        f"runs: {info.max_run}\nchips: {info.chips}\nneeds: {info.account}"
    )


def _chips(count: int) -> str:
    return f"{count} chip" if count == 1 else f"{count} chips"
