"""Step 1: how to get a TPU. The routes side by side, and a recommendation from four answers."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, RadioButton, RadioSet, Select, Static

from tpuwizard.core.plan.routes import BUDGETS, RUN_LENGTHS, recommend, route_table
from tpuwizard.tui.screens.base import WizardScreen

CHIPS = (1, 4, 8, 16, 64)


class RouteScreen(WizardScreen):
    STEP = "1 Route"
    CAN_GO_BACK = False
    HELP = (
        "Pick how you will get a TPU. Answer the four questions for a recommendation; the "
        "choice stays yours. The free notebook route needs no billing account."
    )

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose_body(self) -> ComposeResult:
        yield Static("[b]How will you get a TPU?[/b]", classes="title")
        with Horizontal(id="routes"):
            for info in route_table():
                yield Static(
                    f"[b]{info.title}[/b]\ncost: {info.cost}\nwait: {info.wait}\n"
                    f"runs: {info.max_run}\nchips: {info.chips}\nneeds: {info.account}",
                    classes="route-card",
                    id=f"card-{info.key}",
                )
        yield Static("A few questions for a recommendation:")
        with Horizontal(id="questions"):
            yield Select(
                [(b, b) for b in BUDGETS],
                value="normal",
                prompt="budget",
                id="budget",
                allow_blank=False,
            )
            yield Select(
                [(f"{c} chip(s)", c) for c in CHIPS], value=4, id="chips", allow_blank=False
            )
            yield Select(
                [(r, r) for r in RUN_LENGTHS], value="1-4 hours", id="length", allow_blank=False
            )
            yield Select(
                [("billing: yes", True), ("billing: no", False)],
                value=True,
                id="billing",
                allow_blank=False,
            )
        yield Static(id="advice")
        with Horizontal(id="pick"):
            with RadioSet(id="route"):
                for info in route_table():
                    yield RadioButton(info.title, value=info.key == self.current, name=info.key)
            yield Button("Next", id="next", variant="primary")

    def on_mount(self) -> None:
        self.update_advice()

    @on(Select.Changed)
    def update_advice(self) -> None:
        advice = recommend(
            self.query_one("#budget", Select).value,  # type: ignore[arg-type]
            int(self.query_one("#chips", Select).value),  # type: ignore[arg-type]
            self.query_one("#length", Select).value,  # type: ignore[arg-type]
            bool(self.query_one("#billing", Select).value),
        )
        title = next(i.title for i in route_table() if i.key == advice.route)
        self.query_one("#advice", Static).update(f"Recommended: [b]{title}[/b]. {advice.reason}")
        for card in self.query(".route-card"):
            # A border colour and a word: nothing is said by colour alone.
            card.set_class(card.id == f"card-{advice.route}", "recommended")
            card.border_subtitle = "recommended" if card.id == f"card-{advice.route}" else ""

    @on(Button.Pressed, "#next")
    def choose(self) -> None:
        pressed = self.query_one(RadioSet).pressed_button
        self.dismiss(pressed.name if pressed is not None else self.current)
