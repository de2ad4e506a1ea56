"""``status`` and ``teardown`` for the sessions the Colab ledger holds (``launch --route
colab``): listed as the colab CLI lists them, stopped with ``colab stop`` where tpuwizard made
them, verified by listing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from tpuwizard.commands.common import ask_yes_no, print_json, say, show, stdin_is_terminal
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_OK, EXIT_TEARDOWN


def ledger_path() -> Path:
    from tpuwizard.core import paths
    from tpuwizard.core.colab.ledger import LEDGER_FILE

    return paths.state_dir() / LEDGER_FILE


def never_used() -> bool:
    """No Colab ledger at all: nothing to list or stop, and Colab's machinery not even loaded
    (status's start)."""
    return not ledger_path().exists()


def ledger_unread(done: str) -> str | None:
    """Why the Colab ledger cannot be read, said (its sessions not ``done``; the TPUs go on);
    None when it can."""
    from tpuwizard.core.kaggle.ledger import unreadable
    from tpuwizard.words.kaggle_text import unread_ledger_line

    path = ledger_path()
    why = unreadable(path)
    if why is not None:
        say(unread_ledger_line("Colab", path, why, "sessions", done))
    return why


def colab_status(as_json: bool) -> tuple[list[dict[str, Any]], bool]:
    """The Colab ledger's sessions, shown (or returned for ``--json``), and whether any could
    not be checked. Nothing is called when the ledger holds none."""
    if never_used():
        return [], False
    if (why := ledger_unread("checked")) is not None:
        return [{"ledger": str(ledger_path()), "problem": why}], True
    from tpuwizard.session.free.colab_records import held_on_colab
    from tpuwizard.words.colab_text import held_lines

    seen = held_on_colab()
    if not as_json:
        for one in seen:
            for line in held_lines(one):
                show(line)  # checked with colab: part of status's answer, so on stdout
    unchecked = any(one.state in ("unchecked", "read-only-home") for one in seen)
    return [one.to_dict() for one in seen], unchecked


def colab_named(name: str) -> list[dict[str, Any]]:
    if never_used() or ledger_unread("looked up") is not None:
        return []
    from tpuwizard.session.free.colab_records import records_named

    return records_named(name)


def colab_held() -> list[dict[str, Any]] | None:
    """The Colab ledger's sessions that may still run; None where it cannot be read (said)."""
    if never_used():
        return []
    if ledger_unread("stopped") is not None:
        return None
    from tpuwizard.session.free.colab_records import held_records

    return held_records()


def teardown_colab(records: list[dict[str, Any]], yes: bool, as_json: bool) -> bool:
    """Stop the sessions and verify by listing that each is gone; False where one is not."""
    from tpuwizard.session.free.colab_records import tear_down_sessions
    from tpuwizard.words.colab_text import torn_lines

    listing = ", ".join(str(r["kernel"]) for r in records)
    if not yes:
        if not stdin_is_terminal():
            raise BadInput(f"Would stop {listing}: add --yes to confirm without a terminal.")
        if not ask_yes_no(f"Stop the Colab session {listing}?"):
            say("Nothing stopped.")
            raise click.exceptions.Exit(EXIT_OK)
    say(f"Stopping {listing} (colab stop) and checking that it is gone...")
    results = tear_down_sessions(records)
    for seen in results:
        for line in torn_lines(seen):
            say(line)
    if as_json:
        print_json({"colab": [seen.to_dict() for seen in results]})
    return all(seen.stopped for seen in results)


def teardown_colab_or_exit(records: list[dict[str, Any]], yes: bool, as_json: bool) -> None:
    if not teardown_colab(records, yes, as_json):
        raise click.exceptions.Exit(EXIT_TEARDOWN)
