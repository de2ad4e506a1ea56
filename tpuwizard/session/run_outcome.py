"""``outcome.json`` in a launch's run folder: how it ended, in the launch's own record, for when
no terminal was left to show it (a closed window stops a launch, which deletes and exits 129); and
for a node the launch kept, its records brought up to date once a later command verified it gone
(:func:`close_kept_run`), so the folder never says "still running" of a node that is gone."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpuwizard.core import untrusted
from tpuwizard.core.launch.kept.end_reason import EndReason
from tpuwizard.core.launch.records.run_files import COST_FILE, read_record, write_record

if TYPE_CHECKING:
    from tpuwizard.core.cancel import CancelToken
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.events.summary import RunSummary

OUTCOME_FILE = "outcome.json"


def write_outcome(
    run_dir: Path, finished: ev.Finished, summary: RunSummary, cancel: CancelToken
) -> None:
    """What the launch came to: its exit code, what stopped it, what was verified gone and
    what still exists (kept, or not verified gone). A run folder that cannot be written costs
    this file only: the ledger holds what exists, and ``status`` reads it."""
    stopped_by = None
    if cancel.is_set() and not cancel.keep:
        stopped_by = cancel.reason or "stopped"
    record = {
        "exit_code": finished.exit_code,
        "ok": finished.ok,
        "stopped_by": stopped_by,  # "SIGHUP" for a closed terminal; None: it ran its course
        "verified_gone": list(summary.gone_names),  # names, as still_existing and the ledger
        "still_existing": list(finished.remaining),
        "kept": [k.name for k in summary.kept],
        "receipt": summary.receipt.path if summary.receipt is not None else None,
        "script_exit_code": summary.script_exit_code,
        "ended_at": time.time(),
    }
    if not run_dir.is_dir():  # the launch ended before it made its folder: nothing to add to
        return
    write_record(run_dir / OUTCOME_FILE, record)


def write_free_outcome(
    run_dir: Path, summary: RunSummary, exit_code: int, stopped_by: str | None = None
) -> None:
    """A Kaggle or Colab run's ``outcome.json``, from what its drivers reported (the same
    facts its summary says): the receipt, the checks, the script's exit, and what it left in
    the account (a Kaggle kernel stays as the run's record, free) with the command that
    deletes it, or what it ended and verified. Nothing of a free route bills."""
    flag = " --sandbox" if summary.practice else ""
    left = [*summary.free_kept, *(name for name, _ in summary.free_not_ended)]
    # Practice's Kaggle kernel lived in the stand-in's account, which ends with the run.
    gone_with_stand_in = summary.practice and summary.zone == "Kaggle"
    record = {
        "route": (summary.zone or "").lower(),  # "kaggle" or "colab"
        "practice": summary.practice,
        "exit_code": exit_code,
        "ok": summary.finished.ok if summary.finished is not None else False,
        "stopped_by": stopped_by,  # the stop signal's name; None: it ran its course
        "receipt": summary.receipt.path if summary.receipt is not None else None,
        "receipt_ok": summary.receipt.ok if summary.receipt is not None else None,
        "checks_passed": sum(c.ok for c in summary.checks.values()),
        "checks": len(summary.checks),
        "script_exit_code": summary.script_exit_code,
        "verified_gone": list(summary.free_ended),  # a kernel deleted, a session stopped
        "still_existing": [] if gone_with_stand_in else left,
        "billing": [],
        "left_in_account": [
            {
                "name": name,
                "where": "the practice stand-in's account, which ended with the run"
                if gone_with_stand_in
                else f"your {summary.zone} account",
                "delete_command": None
                if gone_with_stand_in
                else f"tpuwizard teardown {name}{flag}",
            }
            for name in left
        ],
        "not_verified_ended": [{"name": n, "why": why} for n, why in summary.free_not_ended],
        "ended_at": time.time(),
    }
    if left or summary.free_ended:  # stopped before anything came back: its record all the same
        with contextlib.suppress(OSError):
            run_dir.mkdir(parents=True, exist_ok=True)
    if run_dir.is_dir():  # a run that ended before it made anything: nothing to add to
        write_record(run_dir / OUTCOME_FILE, record)


def close_kept_run(
    run_dir: Path,
    name: str,
    gone_at: float,
    reason: EndReason = EndReason.DELETED,
    seen_by: str = "delete",
    last_seen_at: float | None = None,
    limit_at: float | None = None,
) -> None:
    """``name``, kept at the end of the run whose folder is ``run_dir``, is gone: verified gone
    by a delete, or first seen gone at ``gone_at`` by ``seen_by`` (its zone's listing lacked
    it). Its ``cost.json`` stops saying "still running" and counts what it cost from the keep
    up to ``gone_at`` (at the price it was kept at), beside the last time it was known present
    (``last_seen_at``); ``outcome.json`` lists it as gone, how that is known, the reason the
    evidence supports and when the limit that reason names passed (``limit_at``). The first to
    close it wins: a later sighting changes nothing. A folder moved or deleted since, or a file
    edited by hand, is left as it is: the ledger holds the facts, and a record that cannot be
    brought up to date costs only itself."""
    if not run_dir.is_dir():
        return
    spent = read_record(run_dir / COST_FILE)
    if spent is not None and spent.get("still_running") is True:
        closed = _cost_at_gone(spent, gone_at)
        if last_seen_at is not None:
            closed["last_seen_present_at"] = last_seen_at
        write_record(run_dir / COST_FILE, closed)
    outcome = read_record(run_dir / OUTCOME_FILE)
    if outcome is not None and name in _names(outcome.get("still_existing")):
        outcome["still_existing"] = [n for n in _names(outcome["still_existing"]) if n != name]
        outcome["verified_gone"] = [*_names(outcome.get("verified_gone")), name]
        ended = outcome.get("kept_verified_gone_at")
        outcome["kept_verified_gone_at"] = {
            **(ended if isinstance(ended, dict) else {}),
            name: gone_at,
        }
        how = outcome.get("kept_gone")
        outcome["kept_gone"] = {
            **(how if isinstance(how, dict) else {}),
            name: {
                "reason": str(reason),
                "seen_by": seen_by,
                # A delete lists the zone to verify; any other sighting is the zone's listing too.
                "known_by": "the zone's listing no longer has it",
                "seen_gone_at": gone_at,
                "last_seen_present_at": last_seen_at,
                "limit_passed_at": limit_at,
            },
        }
        write_record(run_dir / OUTCOME_FILE, outcome)


def _names(value: Any) -> list[str]:
    return [n for n in value if isinstance(n, str)] if isinstance(value, list) else []


def _cost_at_gone(spent: dict[str, Any], gone_at: float) -> dict[str, Any]:
    """``cost.json`` as of ``gone_at``: the seconds since its figures were taken, and what they
    cost at its own prices, added (a file from before ``as_of`` was written keeps its figures,
    which then stop at the keep, and says so)."""
    as_of = spent.get("as_of")
    updated = {**spent, "still_running": False, "verified_gone_at": gone_at}
    if not untrusted.number(as_of) or gone_at < as_of:
        updated["figures_until"] = "kept (the time it was kept was not recorded)"
        return updated
    more = gone_at - as_of
    if untrusted.number(spent.get("seconds")):
        updated["seconds"] = round(spent["seconds"] + more, 1)
    for figure, price in (
        ("cost_usd", "price_per_hour_usd"),
        ("cost_at_most_usd", "price_at_most_per_hour_usd"),
    ):
        if untrusted.number(spent.get(figure)) and untrusted.number(spent.get(price)):
            updated[figure] = round(spent[figure] + spent[price] * more / 3600, 4)
    updated["as_of"] = gone_at
    return updated
