"""A RadioSet whose keyboard cursor stays on the pressed button.

Textual's RadioSet puts its cursor on the first button when it mounts, whatever is pressed, so
Enter or Space on entering the list would pick that first button. Here the cursor starts on the
pressed one, and a button pressed by the program (``pick``) moves the cursor with it.
"""

from __future__ import annotations

from textual.widgets import RadioButton, RadioSet


class PickList(RadioSet):
    def on_mount(self) -> None:
        # Runs before RadioSet's own mount handler, which moves the cursor to the first button.
        self.call_later(self.follow_pressed)

    def on_focus(self) -> None:
        self.follow_pressed()

    def follow_pressed(self) -> None:
        """Put the cursor on the pressed button, if one is."""
        if self.pressed_index >= 0:
            self._selected = self.pressed_index

    def pick(self, name: str) -> None:
        """Press the button called ``name``; the set releases the one pressed before."""
        for button in self.query(RadioButton):
            if button.name == name:
                button.value = True
