"""Step 1: how to get a TPU. The routes side by side, and a recommendation from four answers."""

from __future__ import annotations

from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Static

from tpuwizard.core.plan.routes import (
    BUDGETS,
    CHIP_COUNTS,
    RUN_LENGTHS,
    recommend,
    route_table,
    route_title,
)
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.choice import Choice
from tpuwizard.tui.widgets.route_cards import RouteCards
from tpuwizard.words.figures import count

TITLE = "[b]How will you get a TPU?[/b] Pick a card with ← → or a click; Tab goes to the questions."
ASK = "A few questions for a recommendation (change an answer with ← →):"
ASK_SHORT = "Pick a card and answer with ← → (Tab moves); Enter goes on."
COMPACT_BELOW = 100  # columns
DEFAULT_ANSWERS: dict[str, object] = {
    "budget": "normal",
    "chips": 4,
    "length": "1-4 hours",
    "billing": True,
}


class RouteScreen(WizardScreen[str]):
    STEP = "1 Route"
    CAN_GO_BACK = False
    HELP = (
        "Pick how you will get a TPU: the cards are the choice (the arrow keys, or a click on a "
        "card). Answer the four questions for a recommendation (Tab moves between them; the "
        "arrow keys, Space or a click change an answer). An answer that changes the "
        "recommendation picks the new one; otherwise your pick stays. Enter goes on with the "
        "chosen route. The free notebook route needs no billing account."
    )
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "go_on", "Next")]

    def __init__(self, current: str, answers: dict[str, object] | None = None) -> None:
        super().__init__()
        # The four answers, kept in the wizard's state so that Back finds them as they were.
        # Empty on the first visit: then the recommendation is preselected.
        self.answers: dict[str, object] = answers if answers is not None else {}
        self.seen = dict(self.answers)  # the answers the current pick was made under
        self.chosen = current  # the route picked, by the user or by a new recommendation
        self.recommended, self.advice_text = "", ""
        self.compact = False  # the layout below 100 columns

    def compose_body(self) -> ComposeResult:
        # Composed as it will look (the width's layout, the recommendation, the marks on the
        # cards): a change after mounting would lay out and draw the first screen again.
        self.compact = compact = self.app.size.width < COMPACT_BELOW
        self.take_answers({**DEFAULT_ANSWERS, **self.answers})
        a = self.answers
        title = Static(TITLE, classes="title", id="route-title")
        title.display = not compact
        yield title
        yield RouteCards(route_table(), self.chosen, self.recommended, compact, id="routes")
        yield Static(ASK_SHORT if compact else ASK, id="ask")
        with Horizontal(id="questions"):
            yield Choice([(b, b) for b in BUDGETS], a["budget"], "Budget", "budget")
            yield Choice(
                [(count(c, "chip"), c) for c in CHIP_COUNTS], a["chips"], "Chips needed", "chips"
            )
            yield Choice([(r, r) for r in RUN_LENGTHS], a["length"], "Run length", "length")
            yield Choice([("yes", True), ("no", False)], a["billing"], "Billing acct", "billing")
        yield Static(self.advice_text, id="advice")

    def on_mount(self) -> None:
        self.query_one(RouteCards).focus()  # the choice first; the questions help make it
        # The wizard's app (a test's harness has no such setting, and reads nothing): the
        # weekly Kaggle TPU quota, read in a thread once the step is drawn.
        sandbox = getattr(self.app, "force_sandbox", None)
        if sandbox is not None:
            self.call_after_refresh(self.read_kaggle_quota, bool(sandbox))

    def read_kaggle_quota(self, sandbox: bool) -> None:
        from tpuwizard.tui.kaggle_quota import read_kaggle_quota

        # A read that fails or lands late costs the card its line, never the wizard.
        self.run_worker(read_kaggle_quota(self, sandbox), group="kaggle-quota", exit_on_error=False)

    def kaggle_quota_read(self, words: str) -> None:
        """The free notebook's card ends with the weekly Kaggle TPU quota left; nothing when
        the step was left while the quota was read (its cards are gone)."""
        cards = self.query(RouteCards)
        if self.is_attached and cards:
            cards.first().set_note("notebook", words)

    def on_resize(self, event: events.Resize) -> None:
        # Below 100 columns the cards keep cost and run time, so 80x24 holds the whole step
        # (F1 and the 100-column view have the rest). Only a change of layout redraws them.
        compact = event.size.width < COMPACT_BELOW
        if compact == self.compact:
            return
        self.compact = compact
        self.query_one(RouteCards).set_compact(compact)
        self.query_one("#ask", Static).update(ASK_SHORT if compact else ASK)
        self.query_one("#route-title", Static).display = not compact

    def take_answers(self, now: dict[str, object]) -> None:
        """The answers and their recommendation; an answer that changes the recommendation
        picks it (on the first visit too), and one that leaves it as it was keeps the pick."""
        changed, self.seen, before = now != self.seen, now, self.recommended
        self.answers.update(now)
        advice = recommend(
            self.answers["budget"],  # type: ignore[arg-type]
            int(self.answers["chips"]),  # type: ignore[call-overload]
            self.answers["length"],  # type: ignore[arg-type]
            bool(self.answers["billing"]),
        )
        self.recommended = advice.route
        self.advice_text = f"Recommended: [b]{route_title(advice.route)}[/b]. {advice.reason}"
        if changed and advice.route != before:
            # Coming back (Esc) changes no answer, so it keeps the pick too.
            self.chosen = advice.route

    @on(Choice.Changed)
    def update_advice(self) -> None:
        self.take_answers(
            {
                k: self.query_one(f"#{k}", Choice).value
                for k in ("budget", "chips", "length", "billing")
            }
        )
        self.query_one("#advice", Static).update(self.advice_text)
        self.query_one(RouteCards).show(self.chosen, self.recommended)

    @on(RouteCards.Changed)
    def picked(self, event: RouteCards.Changed) -> None:
        self.chosen = event.route

    def action_go_on(self) -> None:
        self.dismiss(self.chosen)
