"""Review's part on what of the script's folder is sent: its size on the script field's border,
the secrets that stay here in a note, and on Create a question when it is large (its copy to the
workers takes billed time)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from textual.widgets import Input

from tpuwizard.core.remote.sync import folder_sent_if_fine
from tpuwizard.words.sent_text import field_words, large_question, secrets_note, size_words

if TYPE_CHECKING:
    from tpuwizard.tui.host import WizardHost


def show_folder(screen: Any, script: Path | None, told: tuple[str, ...]) -> tuple[str, ...]:
    """Say on ``screen``'s script field what goes; note the secrets left out when they are not
    those ``told`` already. Returns the secrets now told."""
    sent = folder_sent_if_fine(script)
    words = field_words(sent) if sent is not None else "optional"
    screen.query_one("#script", Input).border_subtitle = escape(words)
    if sent is None or not sent.secrets or sent.secrets == told:
        return told
    screen.notes.say(screen.app, escape(secrets_note(sent)), "Your script's folder")
    return sent.secrets


async def folder_agreed(app: WizardHost, script: Path | None) -> bool:
    """True unless the folder is over the large mark and the user chose Back."""
    from tpuwizard.tui.screens.confirm import ConfirmScreen

    sent = folder_sent_if_fine(script)
    if sent is None or not sent.large:
        return True
    ask = ConfirmScreen(large_question(sent), f"Send {size_words(sent.size)}", "Back")
    agreed = await app.push_screen_wait(ask)
    return agreed
