"""Notes a step posts about its own fields, withdrawn when the step is left.

Textual keeps a note (a toast) on the screens that follow until its timeout; at 80x24 a long one
covered the Script step's Shell and Tear down for half a minute after Review's Create."""

from __future__ import annotations

from textual.app import App
from textual.notifications import Notification, Notify


class StepNotes:
    """The notes one step posted, so that leaving it takes them away (and no others)."""

    def __init__(self) -> None:
        self.posted: list[Notification] = []

    def say(self, app: App[object], message: str, title: str, timeout: float = 30) -> None:
        """Post ``message`` (Rich markup) as ``app.notify`` would, and remember it."""
        note = Notification(message, title, "information", timeout, markup=True)
        app.post_message(Notify(note))
        self.posted.append(note)

    def withdraw(self, app: App[object]) -> None:
        """Take away those still shown. Textual has no public call that removes one note;
        clear_notifications would take other steps' notes too."""
        shown = [note for note in self.posted if note in app._notifications]
        for note in shown:
            app._unnotify(note, refresh=False)
        self.posted.clear()
        if shown:
            app._refresh_notifications()
