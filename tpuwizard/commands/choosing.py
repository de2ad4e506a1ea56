"""What ``status`` and ``teardown`` say about what they found, and how teardown chooses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import EXIT_OK, say, stdin_is_terminal
from tpuwizard.core.errors import BadInput

if TYPE_CHECKING:
    from tpuwizard.core.launch.teardown import Found


OTHERS_TITLE = "Made by another tpuwizard user (left alone by teardown --all)"


def say_skipped(found: Found) -> None:
    """Zones that could not be surveyed (the rest still answered, these are unknown), and ledger
    lines that could not be read (the rest still count)."""
    for zone, why in sorted(found.skipped.items()):
        say(f"Skipped {zone}: {why}. Nothing tpuwizard made can be there unless you made it there.")
    for number, why in found.unreadable:
        say(f"Ledger line {number} could not be read ({why}); it was skipped.")
    if found.unreadable:
        say(f"The unreadable lines are kept in {found.unreadable_kept_in}.")


def select(found: Found, name: str | None, everything: bool) -> tuple[list, list]:
    """(this install's resources to delete, other owners' named exactly to delete).

    ``--all`` means all of *yours*: another user's resource is chosen only by its exact name.
    """
    if everything:
        for b in found.others:
            say(f"Left alone: {b.resource.name} ({b.resource.zone}), made by another user.")
        return list(found), []
    chosen = [b for b in found if name in (b.resource.name, b.resource.node_id)]
    theirs = [b for b in found.others if b.resource.name == name]
    if not chosen and not theirs:
        names = ", ".join(b.resource.name for b in found) or "none"
        raise BadInput(f"No tpuwizard resource called '{name}' exists (yours: {names}).")
    return chosen, theirs


def confirm_theirs(theirs: list, yes: bool, other_owner: bool) -> None:
    """Deleting another user's resource needs its exact name (already matched) and a
    confirmation: the name typed again at a terminal, or ``--yes --other-owner``."""
    if not theirs:
        return
    (b,) = theirs
    name = b.resource.name
    say(f"{name} was made by another tpuwizard user (owner {b.resource.owner or 'unknown'}).")
    if yes and other_owner:
        return
    if not stdin_is_terminal():
        raise BadInput(
            f"{name} is not yours: to delete it anyway add --yes --other-owner, "
            "or run this in a terminal and type its name."
        )
    typed = click.prompt(f"Type {name} to delete it anyway", default="", err=True)
    if typed != name:
        say("Nothing deleted.")  # the user's answer, not a failure: exit 0
        raise click.exceptions.Exit(EXIT_OK)
