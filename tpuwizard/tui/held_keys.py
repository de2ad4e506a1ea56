"""Keys typed while no step is on screen (the first frame, the moment between two steps) are held
and given to the next step once it shows, in the order typed: none is lost to the screen beneath
the steps, which has nothing to take them."""

from __future__ import annotations

from textual import events
from textual.app import App


class HeldKeys:
    def __init__(self) -> None:
        self.keys: list[events.Key] = []

    def hold(self, app: App[int], event: events.Key) -> None:
        """Keep ``event`` when it reached the App with only the screen beneath the steps shown
        (anything else on screen had its chance at it first)."""
        if len(app.screen_stack) > 1:
            return
        self.keys.append(events.Key(event.key, event.character))
        event.stop()
        event.prevent_default()  # no binding of the App's: it is the next step's key

    def give(self, app: App[int]) -> None:
        """Send what was held as if typed now, to what the step on screen has focused: one key
        a refresh, as fingers type, so that each has taken effect before the next comes (a key
        one widget handles itself would otherwise overtake a bound key typed before it)."""
        if self.keys:
            app.post_message(self.keys.pop(0))
            app.call_after_refresh(self.give, app)
