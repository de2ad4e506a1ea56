"""A text field whose keys take effect in the order they were typed, however fast they come.

Textual inserts a printable key where it arrives, in the field, but runs a bound key
(Backspace, Delete, the arrows, Home, End, Enter, Tab) only once its event has bubbled up to the
App. Keys that arrive together (a fast typist, a paste, an app busy for a moment) then apply out
of order: ``fortx<Backspace>y`` became ``fortx`` with its last letter deleted, and text typed after
Tab stayed in the field Tab was leaving (Textual issue #6605). Here a bound key runs where it
arrives, in order, and a key that arrives after an earlier one moved the focus goes on to the
widget focused now.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class TypedInput(Input):
    async def _on_key(self, event: events.Key) -> None:
        focused = self.app.focused
        if focused is not self:
            # An earlier key of the same burst moved the focus (Tab, Enter, Esc): this one was
            # typed for the widget that has it now. Private, as the App's own forwarding is;
            # Textual is pinned (pyproject.toml) and tests/tui/test_fast_typing.py checks it.
            event.stop()
            event.prevent_default()
            target = focused or self.app.screen
            target._forward_event(events.Key(event.key, event.character))
            return
        # The bindings the App would run once the key had bubbled up, run now: the field's own
        # first, then its screen's and the App's (Tab). Priority bindings ran before it came.
        if not event.is_printable and await self.app._check_bindings(event.key):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)
