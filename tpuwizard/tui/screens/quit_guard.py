"""The quit guard: while something may bill, quitting means deciding what happens to it."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from tpuwizard.core.launch.records.billing_state import Billed
from tpuwizard.tui.host import host
from tpuwizard.tui.widgets.typed_input import TypedInput
from tpuwizard.words.bill_words import keep_billing, may_still_be_billing
from tpuwizard.words.figures import about
from tpuwizard.words.kept_text import guard_gone_words, kept_end_row


def keep_word(undecided: list[Billed]) -> str:
    """What to type to keep: the name when there is one, else 'keep all'."""
    return undecided[0].name if len(undecided) == 1 else "keep all"


class QuitGuard(ModalScreen[str | None]):
    """Dismissed with "delete", "keep" (the name was typed) or None (stay).

    ``existing`` is everything that may bill; ``undecided`` the part nobody chose to keep or
    leave, for which keeping needs the name typed. Leftovers already left running need no typing.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "stay", "Stay")]

    def __init__(self, existing: list[Billed], undecided: list[Billed]) -> None:
        super().__init__()
        self.existing, self.undecided = existing, undecided

    def guard_text(self) -> str:
        """The resources with their state, age and cost, re-read from the core each second."""
        practice = host(self).state.practice
        now = self.still_there(self.existing)
        if not now:
            return guard_gone_words(self.existing)
        running = "running" if practice else "billing"  # practice bills nothing
        so_far = "if it were real" if practice else "so far"
        rows = "\n".join(
            f"  {b.name}  {b.zone}  {b.accelerator}  {b.state or '?'}  "
            + (
                f"{running} {int(b.costing_s())} s, "
                f"{about(b.cost_usd(), b.cost_at_most_usd())} {so_far}"
                if b.costing_since is not None
                else f"exists {int(b.age_s())} s, not {running} yet (no VM is running)"
            )
            + ("  (left running)" if b.left else "")
            for b in now
        )
        if self.still_there(self.undecided):
            return (
                f"[b]These {may_still_be_billing(practice)}:[/b]\n"
                f"{rows}\n(estimates)\n\n"
                "Delete now (then tpuwizard quits), or keep running: to keep, type "
                f"[b]{keep_word(self.undecided)}[/b]; {self.until_words()}."
            )
        ends = "".join(f"\n{kept_end_row(b, practice)}" for b in now if b.kept_since is not None)
        return (
            f"[b]You chose to leave these running; they {keep_billing(practice)}:[/b]\n"
            f"{rows}{ends}\n\n"
            "Quit and leave them, delete them now, or stay."
        )

    def until_words(self) -> str:
        """What ends what is kept: the launch's watchdog, once armed, as the parting line says;
        Google, for Flex-start; a node kept earlier, its deadline; else only a delete."""
        from tpuwizard.words.kept_text import guard_until_words

        state = host(self).state
        now = self.still_there(self.undecided)
        minutes = state.deadline.max_run(state.route)
        deadline = state.watchdog_deadline
        return guard_until_words(now, state.launching, deadline, minutes, state.practice)

    def still_there(self, items: list[Billed]) -> list[Billed]:
        """Of ``items``, what the billing state still holds, as it holds it now: a node that
        left it (its zone's last listing lacks it) has no row, no figure, nothing to keep."""
        billing = host(self).billing
        return [now for now in (billing.get(b.name) for b in items) if now is not None]

    def on_mount(self) -> None:
        self.set_interval(1.0, self.tick)

    def tick(self) -> None:
        self.query_one("#guard-text", Static).update(self.guard_text())

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            text = self.guard_text()
            yield Static(text, id="guard-text")
            if self.undecided:
                yield TypedInput(
                    placeholder=f"type {keep_word(self.undecided)} here to keep it running",
                    id="confirm-name",
                )
            yield Static(id="guard-error")
            with Horizontal():
                yield Button("Delete now", id="delete", variant="error")
                yield Button("Keep it running" if self.undecided else "Quit, leave them", id="keep")
                yield Button("Stay", id="stay")

    @on(Button.Pressed, "#delete")
    def delete(self) -> None:
        self.dismiss("delete")

    @on(Button.Pressed, "#keep")
    def keep(self) -> None:
        if not self.undecided:
            self.dismiss("keep")
            return
        if not self.still_there(self.undecided):  # gone meanwhile: nothing left to keep
            self.dismiss("keep")
            return
        word = keep_word(self.undecided)
        if self.query_one("#confirm-name", Input).value.strip() == word:
            self.dismiss("keep")
        else:
            self.query_one("#guard-error", Static).update(
                f"Type {word} exactly to keep it running."
            )

    @on(Button.Pressed, "#stay")
    def action_stay(self) -> None:
        self.dismiss(None)
