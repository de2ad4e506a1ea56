"""What may still bill, and ending it: ``status``, and ``teardown`` (``down`` under its iterating
name, cli.py registers it)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from tpuwizard.commands.choosing import (
    OTHERS_TITLE,
    confirm_theirs,
    result_data,
    say_kept_gone,
    say_preempted,
    say_skipped,
    say_stopped,
    say_unchecked,
)
from tpuwizard.commands.common import (
    ask_yes_no,
    cloud_errors,
    kept_now,
    open_session,
    print_json,
    project_option,
    sandbox_option,
    say,
    show,
    stdin_is_terminal,
)
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_OK, EXIT_TEARDOWN
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.launch.records.ledger import Resource
    from tpuwizard.core.launch.teardown.choice import TeardownChoice
    from tpuwizard.core.launch.teardown.verified import TeardownResult, Unchecked
    from tpuwizard.session.session import Session
    from tpuwizard.session.signals import StopSignals


@click.command()
@project_option
@sandbox_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def status(project: str | None, sandbox: bool, as_json: bool) -> None:
    """Everything tpuwizard created that may still bill, from the ledger and labels. Exit 3
    when a zone could not be checked, 4 when a preempted kept node could not be deleted."""
    from tpuwizard.commands.catalog_prices import NOT_READ, price_entry, use_cached_prices
    from tpuwizard.commands.kaggle_records import kaggle_status
    from tpuwizard.core.cloud.diagnose.diagnosis import Context
    from tpuwizard.core.plan import cost

    _work_read_only()
    kaggle, kaggle_unchecked = kaggle_status(as_json)  # its own ledger, its own credentials
    from tpuwizard.commands.colab_records import colab_status

    colab, colab_unchecked = colab_status(as_json)  # its own ledger, its own program
    session = open_session(project, sandbox)
    book = use_cached_prices(session)  # every cost at the cached catalog read's prices, no call
    if book[0] is None and book[1] != NOT_READ:  # a saved read set aside: said, not hidden
        say(f"Prices: the offline table's figures, because {book[1]}.")
    with cloud_errors(Context(project=session.project)):
        kept = session.check_kept()  # first: a preempted kept node is deleted, not listed
        found = session.find_leftovers()
    shown = list(found)
    say_skipped(found, session.project)
    say_preempted(kept.preempted, session.practice)
    say_kept_gone(kept.gone)
    say_stopped(found.stopped_ended, session.practice)
    if as_json:
        print_json(
            {
                "resources": [{**b.to_dict(), "price": price_entry(b, book)} for b in shown],
                "kept": [k.to_dict() for k in kept.infos],
                "kept_gone": [g.info.to_dict() for g in kept.gone],
                "others": [{**b.to_dict(), "price": price_entry(b, book)} for b in found.others],
                "unchecked": [u.to_dict() for u in found.unchecked],
                "preempted": [result_data(r) for r in kept.preempted],
                "stopped_deleted": [result_data(r) for r in found.stopped_ended],
                "skipped_zones": found.skipped,
                "unreadable_ledger_lines": [
                    {"line": number, "why": why} for number, why in found.unreadable
                ],
                "kaggle_kernels": kaggle,
                "colab_sessions": colab,
            }
        )
    else:
        from tpuwizard.words.render import kept_ends, render_status

        if found:
            flex = any(b.resource.route == Route.FLEX for b in found)  # its caveat only where shown
            ends = kept_ends(kept.infos)  # a kept node's row says how it ends, as its Kept line
            render_status(shown, cost.label(flex), practice=session.practice, ends=ends)
        elif not found.unchecked and (kaggle or colab):  # listed above: they exist, unbilled
            show("No Cloud TPU you created with tpuwizard exists any more: none is billing.")
        elif not found.unchecked:
            show("Nothing you created with tpuwizard exists any more: nothing of yours is billing.")
        from tpuwizard.words.kept_end import kept_info_line

        for info in kept.infos:  # kept for iterating: what they cost, when they delete themselves
            show(
                kept_info_line(info)
            )  # checked with the cloud: part of status's answer, so on stdout
        if found.others:
            flex = any(b.resource.route == Route.FLEX for b in found.others)
            label = cost.label(flex)
            render_status(found.others, label, title=OTHERS_TITLE, practice=session.practice)
    say_unchecked(found.unchecked, session.practice)  # last, after all that could be checked
    if not all(r.verified for r in [*kept.preempted, *found.stopped_ended]):
        raise click.exceptions.Exit(EXIT_TEARDOWN)
    if found.unchecked or kaggle_unchecked or colab_unchecked:
        raise click.exceptions.Exit(EXIT_CLOUD)


@click.command()
@click.argument("name", required=False)
@click.option("--all", "everything", is_flag=True, help="Everything tpuwizard created.")
@click.option("--zone", help="Only in this zone (for a name held in several).")
@project_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--other-owner",
    is_flag=True,
    help="With NAME and --yes: delete it although another tpuwizard user made it.",
)
@sandbox_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def teardown(
    name: str | None,
    everything: bool,
    zone: str | None,
    project: str | None,
    yes: bool,
    other_owner: bool,
    sandbox: bool,
    as_json: bool,
) -> None:
    """Delete what tpuwizard created (NAME, or --all) and verify by listing that it is gone.
    NAME may be a Kaggle kernel launch --route kaggle pushed (deleted once its session ended),
    or a Colab session launch --route colab made (stopped); --all takes every such kernel and
    session too, and names each running kernel it cannot end.
    Exit 4 if anything could not be verified gone (or checked)."""
    command = click.get_current_context().info_name or "teardown"  # said back as it was typed
    if bool(name) == everything and not (command == "down" and not name):
        raise BadInput(f"Name one resource (tpuwizard {command} NAME) or use --all.")
    _work_read_only()
    if name and _ended_free_route(name, yes, as_json):
        return
    free = _end_free_routes(yes) if everything else FreeEnded()
    session = open_session(project, sandbox)
    if not name and not everything:
        name = _only_kept_node(session)
    choice = _chosen(session, name, everything, zone)
    confirm_theirs(choice.theirs, yes, other_owner, command)
    if not choice.mine and not choice.theirs:
        _nothing_to_delete(session, everything, choice.unchecked, free, as_json)
        return
    _confirm_mine(choice.mine, yes)
    targets = [(r, False) for r in choice.mine] + [(b.resource, True) for b in choice.theirs]
    results, stop = _delete_each(session, targets)
    if as_json:
        print_json(_document(results, choice.unchecked, free))
    if stop.first is not None:
        _say_stopped(targets[len(results) :], session.practice)
        raise click.exceptions.Exit(stop.exit_code(EXIT_TEARDOWN))
    _say_zone_lists(session, results, as_json)
    _end_verified(session, everything, results, choice.unchecked, free)


def _work_read_only() -> None:
    """A read-only home does not stop what lists and deletes (issue 56, item 8); said first,
    with where this command's records are held meanwhile: the free routes' records (Kaggle's,
    Colab's) are closed before the TPUs' session opens. (A practice cloud in the home then
    refuses with its own words, exit 2.)"""
    from tpuwizard.session.ledgers import allow_read_only_home, read_only_home
    from tpuwizard.words.session_text import read_only_home_words

    allow_read_only_home()
    if (read_only := read_only_home()) is not None:
        say(read_only_home_words(*read_only))


@dataclass(frozen=True)
class FreeEnded:
    """What ``--all`` did with the free routes before the TPUs: the Kaggle kernels' part of
    the JSON document ({} where the ledger holds none), whether each kernel is verified gone,
    and whether each Colab session is verified stopped."""

    kaggle: dict[str, Any] = field(default_factory=dict)
    kaggle_gone: bool = True
    colab_ok: bool = True


def _ended_free_route(name: str, yes: bool, as_json: bool) -> bool:
    """NAME held by the Kaggle ledger (a kernel) or the Colab ledger (a session): ended there,
    and True; no TPU is looked for. Exit 4 where a Colab session could not be stopped."""
    from tpuwizard.commands.kaggle_records import kernels_named, teardown_kaggle

    if kernels := kernels_named(name):
        teardown_kaggle(kernels, yes, as_json)
        return True
    from tpuwizard.commands.colab_records import colab_named, teardown_colab_or_exit

    if sessions := colab_named(name):
        teardown_colab_or_exit(sessions, yes, as_json)
        return True
    return False


def _end_free_routes(yes: bool) -> FreeEnded:
    """``--all``: the Kaggle ledger's kernels first (quick: a delete each, or why not), their
    part of the one JSON document kept for the end; then the Colab sessions (their words on
    stderr). The TPUs come after."""
    from tpuwizard.commands.colab_records import colab_held, teardown_colab
    from tpuwizard.commands.kaggle_records import teardown_all_kaggle

    kaggle, kaggle_gone = teardown_all_kaggle(yes)
    held = colab_held()  # None: its ledger could not be read (said): not verified stopped
    colab_ok = held is not None and (teardown_colab(held, yes, False) if held else True)
    return FreeEnded(kaggle, kaggle_gone, colab_ok)


def _chosen(
    session: Session, name: str | None, everything: bool, zone: str | None
) -> TeardownChoice:
    """What to delete, each part of it said: the ledger's one record of NAME where it holds
    one, else what the survey finds (core/launch/teardown/choice.py)."""
    from tpuwizard.core.cloud.diagnose.diagnosis import Context
    from tpuwizard.core.launch.teardown.choice import TeardownChoice, choose

    recorded = session.recorded(name, zone) if name else []
    if len(recorded) == 1:
        # The ledger knows where this install's resource is: act on that record first, so a
        # zone that cannot be surveyed (or a slow survey of all of them) never stands in the way.
        return TeardownChoice(recorded)
    with cloud_errors(Context(project=session.project)):
        found = session.find_leftovers()
    say_skipped(found, session.project)
    choice = choose(found, name, everything, zone)
    for b in choice.left_alone:
        say(f"Left alone: {b.resource.name} ({b.resource.zone}), made by another user.")
    say_unchecked(
        choice.unchecked, session.practice
    )  # each on its own line; everything else is still deleted
    return choice


def _nothing_to_delete(
    session: Session,
    everything: bool,
    unchecked: list[Unchecked],
    free: FreeEnded,
    as_json: bool,
) -> None:
    """No TPU to delete: said so where nothing is unchecked, and exit 4 where something is,
    or a kernel or Colab session is not verified ended."""
    if not unchecked and free.colab_ok:
        say("No TPU to delete: none tpuwizard created exists." if free.kaggle else NOTHING)
        _end_practice(session, everything)
    if as_json:
        print_json(_document([], unchecked, free))
    if unchecked or not free.kaggle_gone or not free.colab_ok:
        raise click.exceptions.Exit(EXIT_TEARDOWN)


def _confirm_mine(mine: list[Resource], yes: bool) -> None:
    """Without --yes, a person at a terminal says yes first; without a terminal, exit 2."""
    if not mine or yes:
        return
    listing = ", ".join(f"{r.name} ({r.zone})" for r in mine)
    if not stdin_is_terminal():
        raise BadInput(f"Would delete {listing}: add --yes to confirm without a terminal.")
    if not ask_yes_no(f"Delete {listing}?"):
        say("Nothing deleted.")  # the user's answer, not a failure: exit 0
        raise click.exceptions.Exit(EXIT_OK)


def _delete_each(
    session: Session, targets: list[tuple[Resource, bool]]
) -> tuple[list[TeardownResult], StopSignals]:
    """Each target deleted and verified gone in turn, each result said (``True``: another
    user's, confirmed). A stop signal (Ctrl+C, a closed terminal) lets the delete under way
    finish and be verified, its ledger record with it; the next one is not started."""
    from tpuwizard.session.signals import StopSignals
    from tpuwizard.words.teardown_text import teardown_lines

    results = []
    with StopSignals(say, FINISHING_WORDS) as stop:
        for resource, confirmed in targets:
            if stop.first is not None:
                break
            say(f"Deleting {resource.name} and checking that it is gone...")
            (result,) = session.delete([resource], others_confirmed=confirmed)
            results.append(result)
            for line in teardown_lines(result, session.owner, session.practice):
                say(line)
    return results, stop


def _document(
    results: list[TeardownResult], unchecked: list[Unchecked], free: FreeEnded
) -> dict[str, object]:
    """``teardown --json``: one document."""
    return {
        "results": [result_data(r) for r in results],
        "unchecked": [u.to_dict() for u in unchecked],
        "kept": kept_now(),  # what still bills after this (also said on stderr)
        **free.kaggle,
    }


def _end_verified(
    session: Session,
    everything: bool,
    results: list[TeardownResult],
    unchecked: list[Unchecked],
    free: FreeEnded,
) -> None:
    """Exit 4 unless every result is verified gone, nothing asked for is unchecked, and the
    free routes' kernels and sessions are ended; said so where they are."""
    if unchecked:
        names = ", ".join(f"{u.resource.name} ({u.resource.zone})" for u in unchecked)
        say(f"Not checked, so not verified gone: {names}; see above.")
    if unchecked or not all(r.verified for r in results) or not free.colab_ok:
        raise click.exceptions.Exit(EXIT_TEARDOWN)
    say("Nothing tpuwizard deleted is billing any more.")
    if not free.kaggle_gone:  # said above: a Kaggle kernel not deleted (its session still runs)
        raise click.exceptions.Exit(EXIT_TEARDOWN)
    _end_practice(session, everything)


def _end_practice(session: Session, everything: bool) -> None:
    """After --all in practice, everything verified gone: the lasting sandbox ends too."""
    if everything and session.practice:
        from tpuwizard.session.practice.lasting_end import end_lasting_sandbox

        if words := end_lasting_sandbox():
            say(words)


# `down`, the pair of `up`: the same command, with help in its own words (click prints a
# docstring as it is, so the help is plain text, without the reST quotes of the code's comments).
down = copy.copy(teardown)
down.name = "down"  # the reference lists it under its own name
down.help = (
    "Delete the node kept by up (NAME, or without it the only kept node) and verify by listing "
    "that it is gone. Exit 4 if anything could not be verified gone (or checked)."
)


NOTHING = "Nothing to delete: nothing tpuwizard created exists."
FINISHING_WORDS = "finishing the delete under way and checking that it is gone; then stopping."


def _say_stopped(not_started: list[tuple[Resource, bool]], practice: bool) -> None:
    """After a stop signal: what was not deleted, since the stop came before its turn."""
    if not not_started:
        return
    from tpuwizard.words.bill_words import may_still_bill

    names = ", ".join(f"{r.name} ({r.zone})" for r, _ in not_started)
    flag = " --sandbox" if practice else ""
    may = may_still_bill(practice)
    say(f"Stopped before deleting {names}: {may}; `tpuwizard status{flag}` lists it.")


def _say_zone_lists(session: Session, results: list[TeardownResult], as_json: bool) -> None:
    """What each zone's TPU list shows now, as the course's last step looks: ours and, said as
    such, TPUs tpuwizard did not make (it never deletes them). A list that fails costs only
    its lines: what was deleted was verified already."""
    from tpuwizard.words.event_text import zone_listed_lines

    for zone, backend in sorted({(r.resource.zone, r.resource.backend) for r in results}):
        try:
            listed = session.zone_listed(zone, backend)
        except Exception as err:
            say(f"Could not list {zone} now ({type(err).__name__}); what was deleted stays so.")
            continue
        for line in zone_listed_lines(listed):
            (say if as_json else show)(line)


def _only_kept_node(session: Session) -> str:
    """``down`` without a name: the only kept node (as ``run`` uses it), or why there is none."""
    from tpuwizard.session.kept.lines import node_id

    kept = [node_id(e.resource) for e in session.kept.entries()]
    if len(kept) == 1:
        say(f"The only kept node: {kept[0]}.")
        return kept[0]
    down = "tpuwizard down" + (" --sandbox" if session.practice else "")
    if not kept:
        raise BadInput(
            f"No kept node to end: name what to delete ({down} NAME) or use --all; "
            f"`tpuwizard status{' --sandbox' if session.practice else ''}` lists what exists."
        )
    raise BadInput(
        f"{len(kept)} kept nodes ({', '.join(kept)}): name one ({down} NAME) or use --all."
    )
