"""What ``status`` and ``teardown`` say about what they found (and ``zones`` about the zones
Google refuses), and how teardown confirms another user's resource (what it chooses is the
core's: core/launch/teardown/choice.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import say, stdin_is_terminal
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_OK

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tpuwizard.core.launch.teardown.verified import Found, TeardownResult, Unchecked
    from tpuwizard.session.kept.nodes import KeptGone


OTHERS_TITLE = "Made by another tpuwizard user (left alone by teardown --all)"


def say_skipped(found: Found, project: str | None) -> None:
    """Zones that could not be surveyed (the rest still answered, these are unknown), and ledger
    lines that could not be read (the rest still count). A zone (or a whole backend) where a
    record could not be checked is said with that record (:func:`say_unchecked`), not here. A
    zone Google says the project may not use is no problem (nothing can be there) and answers so
    every time: it is said once per project, quietly, and again only for a zone not said
    before."""
    from tpuwizard.core.launch.teardown.survey import BACKEND_WORDS

    # Where a record stands unchecked (a zone, or a whole backend by its name), something
    # tpuwizard made may be there: that record's own line says so, not "nothing can be there".
    recorded_in = {u.resource.zone for u in found.unchecked} | {
        BACKEND_WORDS.get(u.resource.backend, u.resource.backend) for u in found.unchecked
    }
    refused = sorted(z for z in found.refused if z not in recorded_in)
    for zone, why in sorted(found.skipped.items()):
        if zone in recorded_in or zone in refused:
            continue
        say(f"Skipped {zone}: {why}. Nothing tpuwizard made can be there unless you made it there.")
    say_refused_once(project, refused, "nothing can be there", "skipped_zones")
    for number, why in found.unreadable:
        say(f"Ledger line {number} could not be read ({why}); it was skipped.")
    if found.unreadable:
        say(f"The unreadable lines are kept in {found.unreadable_kept_in}.")


def say_refused_once(project: str | None, zones: Sequence[str], so: str, json_key: str) -> None:
    """Zones Google says ``project`` may not use: that answer is the same every time, so it is
    said once per project (``status``, ``teardown`` and ``zones`` share the memory), and again
    only for a zone not said before; ``so``: what follows for the command, ``json_key``: where
    its ``--json`` always lists them. Where the memory cannot be written (a read-only home), it
    is said at most once in this command run, and never claimed to be remembered."""
    said_here = _said_this_run()
    new, remembered = first_time_refused(project or "", zones)
    new = [z for z in new if (project, z) not in said_here]
    if not new:
        return
    said_here.update((project, z) for z in new)
    them = "it" if len(new) == 1 else "them"
    memory = (
        "Said once"
        if remembered
        else "Not noted as said: the state folder could not be written, so the next command "
        "says it again"
    )
    say(
        f"Not searched: {', '.join(new)}. Google says your project may not use {them}, so "
        f"{so}. ({memory}; --json lists {them} under {json_key}.)"
    )


def _said_this_run() -> set[tuple[str | None, str]]:
    """The refused zones said in this command run (the click context tree's shared ``meta``;
    outside a command, a memory of this call's own)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return set()
    said: set[tuple[str | None, str]] = ctx.meta.setdefault("tpuwizard.refused_zones_said", set())
    return said


def first_time_refused(project: str, zones: Sequence[str]) -> tuple[list[str], bool]:
    """Of ``zones`` (refused to ``project``), those not said before, and whether the memory in
    the state folder now holds them. A memory that cannot be read or written costs a repeat
    (every zone is new, and not remembered)."""
    import json
    import os

    from tpuwizard.core import paths, untrusted

    if not zones:
        return [], True
    try:
        memory = paths.state_dir() / "refused-zones-said.json"
        said = (  # untrusted input (core/untrusted.py): a FIFO there must not hang the command
            untrusted.read_json(memory, 1024 * 1024, max_depth=4) if memory.exists() else {}
        )
        known = set(said.get(project, []))
        new = [z for z in zones if z not in known]
        if new:
            said[project] = sorted(known | set(new))
            temporary = memory.with_suffix(f".{os.getpid()}.tmp")
            try:
                temporary.write_text(json.dumps(said, indent=1) + "\n")
                os.replace(temporary, memory)  # a FIFO in its place is replaced, not written
            finally:
                temporary.unlink(missing_ok=True)
        return new, True
    except (OSError, ValueError, AttributeError, TypeError, BadInput):
        return list(zones), False


def confirm_theirs(theirs: list, yes: bool, other_owner: bool, command: str = "teardown") -> None:
    """Deleting another user's resource needs its exact name (already matched), one place (a
    name held in several zones needs ``--zone``) and a confirmation: the name typed again at a
    terminal, or ``--yes --other-owner``."""
    if not theirs:
        return
    if len(theirs) > 1:
        name = theirs[0].resource.name
        zones = ", ".join(sorted({b.resource.zone for b in theirs}))
        raise BadInput(
            f"{name} is held by another tpuwizard user in {len(theirs)} zones ({zones}): "
            f"name the one to delete with --zone (tpuwizard {command} {name} --zone ZONE)."
        )
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


def say_unchecked(unchecked: Sequence[Unchecked], practice: bool = False) -> None:
    """Each record whose zone could not be read, on its own line: the zone, why, what to do."""
    if not unchecked:  # the words (and the events they name) are not loaded for nothing
        return
    from tpuwizard.words.event_text import unchecked_text

    for item in unchecked:
        say(unchecked_text(item.resource, item.diagnosis, practice=practice))


def say_kept_gone(gone: Sequence[KeptGone]) -> None:
    """The kept nodes found gone that no tpuwizard command here deleted: each said."""
    if not gone:
        return
    from tpuwizard.words.teardown_text import kept_gone_line

    for item in gone:
        say(kept_gone_line(item))


def say_preempted(results: Sequence[TeardownResult], practice: bool) -> None:
    """The kept nodes Google preempted that this command deleted (or could not)."""
    if not results:
        return
    from tpuwizard.words.teardown_text import preempted_lines

    for result in results:
        for line in preempted_lines(result, practice):
            say(line)


def say_stopped(results: Sequence[TeardownResult], practice: bool) -> None:
    """Compute Engine VMs Google had stopped that this command deleted (or could not)."""
    if not results:
        return
    from tpuwizard.words.teardown_text import stopped_lines

    for result in results:
        for line in stopped_lines(result, practice):
            say(line)


def result_data(result: TeardownResult) -> dict[str, object]:
    """One teardown result in a ``--json`` document."""
    from tpuwizard.words.event_text import plain_data

    r = result.resource
    return {
        "name": r.name,
        "node_id": r.node_id,  # a queued resource's node (a kept spot node's name)
        "zone": r.zone,
        "backend": r.backend,
        "verified": result.verified,
        "held_by": result.held_by,
        "diagnosis": plain_data(result.diagnosis) if result.diagnosis else None,
        "login_key_forgotten": plain_data(result.login_key) if result.login_key else None,
        # Its gone record, refused by the disk: where it is held (null: written, or only in
        # this command's memory when ``record_held`` is true).
        "record_held": result.held is not None,
        "record_kept_in": str(result.held.kept_in) if result.held and result.held.kept_in else None,
    }
