"""``status`` and ``teardown`` for the kernels the Kaggle ledger holds (``launch --route
kaggle``): listed with Kaggle's state for each, deleted where this user's run pushed them and
their session ended."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from tpuwizard.commands.common import ask_yes_no, print_json, say, show, stdin_is_terminal
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_OK, EXIT_TEARDOWN

if TYPE_CHECKING:
    from tpuwizard.core.kaggle.records import KernelRecord, KernelTorn


def kaggle_status(as_json: bool) -> tuple[list[dict[str, Any]], bool]:
    """The Kaggle ledger's kernels, shown (or returned for ``--json``), and whether any could
    not be checked. Nothing is asked of Kaggle when the ledger holds none."""
    from tpuwizard.core import paths
    from tpuwizard.core.kaggle.ledger import LEDGER_FILE

    if not (paths.state_dir() / LEDGER_FILE).exists():
        return [], False  # never used: Kaggle's machinery is not even loaded (status's start)
    if (why := ledger_unread("checked")) is not None:
        return [{"ledger": str(paths.state_dir() / LEDGER_FILE), "problem": why}], True
    from tpuwizard.session.free.kaggle_records import held_on_kaggle
    from tpuwizard.words.kaggle_text import held_lines

    held = held_on_kaggle()
    if held is None:
        return [], False
    if not as_json:
        for seen in held.seen:
            for line in held_lines(seen):
                show(line)  # checked with Kaggle: part of status's answer, so on stdout
    data = [seen.to_dict() for seen in held.seen]
    if held.unchecked:
        names = ", ".join(r.kernel for r in held.not_checked)
        say(f"Kaggle kernels not checked ({names}): {held.unchecked}.")
        data += [{"kernel": r.kernel, "problem": held.unchecked} for r in held.not_checked]
    unchecked = bool(held.unchecked) or any(seen.problem for seen in held.seen)
    return data, unchecked


def ledger_unread(done: str) -> str | None:
    """Why the Kaggle ledger cannot be read, said (its kernels not ``done``; the TPUs go on);
    None when it can."""
    from tpuwizard.core import paths
    from tpuwizard.core.kaggle.ledger import LEDGER_FILE, unreadable
    from tpuwizard.words.kaggle_text import unread_ledger_line

    path = paths.state_dir() / LEDGER_FILE
    why = unreadable(path)
    if why is not None:
        say(unread_ledger_line("Kaggle", path, why, "kernels", done))
    return why


def kernels_named(name: str) -> list[KernelRecord]:
    """The Kaggle ledger's kernels named ``name``; none where it cannot be read (said)."""
    from tpuwizard.session.free.kaggle_records import kernels_named as named

    if ledger_unread("looked up") is not None:
        return []

    return named(name)


def _tear_down_confirmed(records: list[KernelRecord], yes: bool) -> list[KernelTorn] | str | None:
    """Each kernel deleted where its record proves it this user's run and its session ended,
    verified with Kaggle, each said; why Kaggle could not be asked; or None: the user said no."""
    from tpuwizard.session.free.kaggle_records import tear_down_kernels
    from tpuwizard.words.kaggle_text import torn_lines

    listing = ", ".join(r.kernel for r in records)
    if not yes:
        if not stdin_is_terminal():
            raise BadInput(f"Would delete {listing}: add --yes to confirm without a terminal.")
        if not ask_yes_no(f"Delete the Kaggle kernel {listing}?"):
            return None
    say(f"Deleting {listing} from Kaggle and checking that it is gone...")
    results = tear_down_kernels(records)
    if isinstance(results, str):
        say(f"Nothing was deleted on Kaggle: {results}.")
        return results
    for torn in results:
        for line in torn_lines(torn):
            say(line)
    return results


def teardown_kaggle(records: list[KernelRecord], yes: bool, as_json: bool) -> None:
    """``teardown NAME`` of a kernel: deleted (each only where its record proves it this user's
    run and its session ended) and verified gone. Exit 4 where one is not."""
    results = _tear_down_confirmed(records, yes)
    if results is None:
        say("Nothing deleted.")
        raise click.exceptions.Exit(EXIT_OK)
    if isinstance(results, str):
        if as_json:
            print_json({"kaggle": [], "problem": results})
        raise click.exceptions.Exit(EXIT_TEARDOWN)
    if as_json:
        print_json({"kaggle": [torn.to_dict() for torn in results]})
    if not all(torn.verified for torn in results):
        raise click.exceptions.Exit(EXIT_TEARDOWN)


def teardown_all_kaggle(yes: bool) -> tuple[dict[str, Any], bool]:
    """``teardown --all``: every kernel the Kaggle ledger holds, ended where it can be, and
    why not where it cannot (a running one: its page, and until when it may run). Returns the
    part of the command's JSON document ({} where the ledger holds none: nothing is asked of
    Kaggle) and whether every one is verified gone."""
    from tpuwizard.session.free.kaggle_records import kernels_held

    if (why := ledger_unread("deleted")) is not None:
        return {"kaggle": [], "kaggle_problem": why}, False
    records = kernels_held()
    if not records:
        return {}, True
    results = _tear_down_confirmed(records, yes)
    if results is None:
        say("No Kaggle kernel deleted.")
        return {"kaggle": []}, True
    if isinstance(results, str):
        return {"kaggle": [], "kaggle_problem": results}, False
    return {"kaggle": [t.to_dict() for t in results]}, all(t.verified for t in results)
