"""Keys typed faster than the wizard handles them (a fast typist, a paste, a busy app) still
take effect in the order typed: the real command on a pseudo-terminal, the bytes written in one
write(), as a terminal sends them (Pilot's press hands over one key at a time, so it cannot show
this)."""

from __future__ import annotations

import json
import sys

from tests.waiting import wait_until

TYPED = (
    b"fortx\x7fy"  # a typo, Backspace, the right letter
    b"\t"  # Tab to the Deadline box (its 120 selected, so typing replaces it)
    b"90"
)


def test_a_burst_of_keys_on_review_lands_in_order(terminals, tmp_path):
    terminal = terminals([sys.executable, "-m", "tests.tui.typing_on_terminal", str(tmp_path)])
    ready = tmp_path / "ready"
    wait_until(lambda: ready.exists() or terminal.proc.poll() is not None, 120, "Review")
    assert ready.exists(), f"the wizard ended first: {terminal.shown[-800:]!r}"
    terminal.type(TYPED)
    (tmp_path / "typed").write_text("")
    values = tmp_path / "values.json"
    wait_until(lambda: values.exists() or terminal.proc.poll() is not None, 120, "the values")
    assert values.exists(), f"the wizard ended first: {terminal.shown[-800:]!r}"
    # Backspace took the x, not a later letter; the digits went where Tab had moved the focus.
    assert json.loads(values.read_text()) == {
        "name": "forty",
        "max-run": "90",
        "focused": "max-run",
    }


async def test_keys_posted_together_apply_in_order_in_typed_inputs():
    """The same burst in-process: every key posted before any is handled, as the driver does."""
    from textual import events
    from textual.app import App

    from tpuwizard.tui.widgets.typed_input import TypedInput

    class Two(App[None]):
        def compose(self):
            yield TypedInput(id="first")
            yield TypedInput("120", id="second")

    app = Two()
    async with app.run_test() as pilot:
        assert app.focused is app.query_one("#first")
        keys = [*"fortx", "backspace", "y", "tab", "9", "0"]
        for key in keys:
            character = {"backspace": "\x7f", "tab": "\t"}.get(key, key)
            app.post_message(events.Key(key, character))
        await pilot.pause()
        assert app.query_one("#first", TypedInput).value == "forty"
        assert app.query_one("#second", TypedInput).value == "90"
        assert app.focused is app.query_one("#second")
