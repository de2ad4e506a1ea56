"""The Kaggle route's events in words (event_text.describe hands them here)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from tpuwizard.core.launch.events.kaggle import (
    KernelDeleted,
    KernelLeftRunning,
    KernelPlanned,
    KernelPushed,
    KernelState,
)
from tpuwizard.words.held_record_text import held_record_words
from tpuwizard.words.sent_text import folder_lines

if TYPE_CHECKING:  # status's and teardown's results: their module is not imported at start
    from tpuwizard.core.kaggle.records import KernelSeen, KernelTorn
    from tpuwizard.session.free.kaggle_quota import QuotaRead

KaggleEvent = KernelPlanned | KernelPushed | KernelState | KernelLeftRunning | KernelDeleted


def kaggle_lines(event: KaggleEvent) -> list[str]:
    match event:
        case KernelPlanned():
            practice = "[practice] " if event.practice else ""
            whose = " (the practice stand-in's figure)" if event.practice else ""
            quota = (
                "TPU quota left this week: not given by Kaggle"
                if event.quota_left_s is None
                else f"TPU quota left this week: {event.quota_left_s / 3600:.1f} h{whose}"
            )
            why = (
                [practice_line(event.practice_why)] if event.practice and event.practice_why else []
            )
            return [
                *why,
                f"{practice}Pushing {event.kernel} to Kaggle: private, {event.shape}, session "
                f"limit {event.max_run_minutes:g} min (Kaggle ends it then, even if this computer "
                f"is off), receipt expected on {event.expect}. {quota}. Run {event.run_id}.",
                *folder_lines(event.folder, "inside the kernel"),
            ]
        case KernelPushed():
            version = f" (version {event.version})" if event.version is not None else ""
            if event.found_after_lost_answer:
                return [
                    f"Kaggle's answer to the push was lost; {event.kernel} was found by its name, "
                    f"so it was not pushed again. {stays(event.kernel, event.practice)}"
                ]
            return [
                f"Pushed {event.kernel}{version}: {event.url}. "
                + stays(event.kernel, event.practice)
            ]
        case KernelState():
            return [
                f"  Kaggle: {event.state} after {event.elapsed_s:.0f} s "
                f"(session limit {event.limit_s / 60:g} min)"
            ]
        case KernelLeftRunning():
            if event.practice:
                return [
                    f"[practice] {event.kernel} was {event.state}: the stand-in ends with this "
                    "command, and the kernel with it. On Kaggle it would keep running: Kaggle's "
                    "public API gives no session id to cancel."
                ]
            until = time.strftime("%H:%M", time.localtime(event.ends_by))
            return [
                f"{event.kernel} is still {event.state} on Kaggle and could not be cancelled from "
                "here: Kaggle's public API gives no session id to cancel "
                "(https://github.com/Kaggle/kaggle-cli/pull/1174). Kaggle ends it by about "
                f"{until} (its session limit); until then it spends your weekly TPU quota. Stop "
                f"it sooner on its page: {event.url}"
            ]
        case KernelDeleted():
            if event.verified:
                return [f"Deleted {event.kernel} from your Kaggle account (--delete-kernel)."]
            return [
                f"{event.kernel} was NOT verified deleted: {event.detail}. It costs nothing; "
                "delete it on its page on kaggle.com if you wish."
            ]
    return []


def practice_line(why: str) -> str:
    """Why a Kaggle run is practice, and (without credentials) how to make it real."""
    line = (
        f"[practice] Using the local Kaggle stand-in because {why}: nothing reaches Kaggle and "
        "no quota is spent."
    )
    if why.startswith("no Kaggle credentials"):
        line += (
            " For Kaggle's own TPU, create a token at https://www.kaggle.com/settings/api, save "
            "it as ~/.kaggle/access_token (or export KAGGLE_API_TOKEN) and run this again."
        )
    return line


def stays(kernel: str, practice: bool = False) -> str:
    """That the kernel stays in the account, the script's folder inside it, and how it is
    deleted: tpuwizard, Kaggle's own client, or its page (``--delete-kernel`` deletes it after
    the run). The practice stand-in's kernel ends with the command."""
    how = (
        f"`tpuwizard teardown {kernel}` or `kaggle kernels delete {kernel} -y`, or on its page "
        "(Edit, then Delete); --delete-kernel deletes it after the run"
    )
    if practice:
        return (
            "[practice] The stand-in ends with this command, and the kernel with it. On Kaggle "
            "it would stay in your account as this run's record, with your script's folder "
            f"inside it, until you delete it: {how}."
        )
    return (
        "It stays in your Kaggle account as this run's record, with your script's folder inside "
        f"it (it costs nothing). Delete it with {how}."
    )


def quota_words(read: QuotaRead | None) -> str:
    """The Route step's line on the free notebook's card: Kaggle's weekly TPU quota left."""
    if read is None:
        return "Kaggle TPU left: reading..."
    if read.quota is None:
        return f"Kaggle TPU left: not known ({read.problem or 'Kaggle gave no figure'})"
    left, allowed = read.quota.left_s / 3600, read.quota.allowed_s / 3600
    whose = " (the practice stand-in's figure)" if read.practice else ""
    if left <= 0:
        return f"Kaggle TPU: used up this week (of {allowed:.0f} h){whose}"
    return f"Kaggle TPU: {left:.1f} h of {allowed:.0f} h left this week{whose}"


def _until(ends_by: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ends_by))


def held_lines(seen: KernelSeen) -> list[str]:
    """``status``: one kernel the Kaggle ledger holds, as Kaggle answered for it now, and any
    record of it this look could not write."""
    return [*_seen_lines(seen), *map(held_record_words, seen.unrecorded)]


def _seen_lines(seen: KernelSeen) -> list[str]:
    record = seen.record
    if record.practice:
        return _practice_held_lines(seen)
    if seen.gone:
        return [f"{record.kernel}: no longer in your Kaggle account (Kaggle: not found)."]
    if seen.problem:
        running = (
            f" It may still run until about {_until(record.ends_by)}, spending your weekly "
            "TPU quota."
            if seen.may_run
            else ""
        )
        return [f"{record.kernel}: {seen.problem}.{running} Its page: {record.url}"]
    if seen.may_run:
        return [
            f"{record.kernel}: {seen.state} on Kaggle, left running until about "
            f"{_until(record.ends_by)} (its session limit), spending your weekly TPU quota; "
            f"no public call cancels it: stop it on its page: {record.url}"
        ]
    return [
        f"{record.kernel}: {seen.state}; kept in your Kaggle account as run {record.run_id}'s "
        f"record (it costs nothing): {record.url}. `tpuwizard teardown {record.kernel}` "
        "deletes it."
    ]


def _practice_held_lines(seen: KernelSeen) -> list[str]:
    record = seen.record
    if seen.gone:
        return [
            f"[practice] {record.kernel}: the stand-in that ran it ended with the command "
            "that pushed it, and no process of its session runs; nothing of it is left."
        ]
    if seen.held_by_command:
        if not seen.may_run:
            return [
                f"[practice] {record.kernel}: {seen.state} in the practice command that pushed "
                f"it (process {record.pid}); the stand-in forgets it when that command ends."
            ]
        return [
            f"[practice] {record.kernel}: {seen.state} in the practice command that pushed it "
            f"(process {record.pid}); it ends with that command, or at its session limit, "
            f"about {_until(record.ends_by)}, if that command is killed."
        ]
    group = (
        f" On this computer it is process group {seen.group}: `kill -- -{seen.group}` ends it "
        "sooner."
        if seen.group
        else ""
    )
    return [
        f"[practice] {record.kernel}: {seen.state} after the command that pushed it ended, as a "
        f"Kaggle kernel runs on: left running until about {_until(record.ends_by)} (its "
        f"session limit), when the practice stand-in ends it. Its page: {record.url} (the "
        f"stand-in's; on Kaggle you would stop it there).{group}"
    ]


def torn_lines(torn: KernelTorn) -> list[str]:
    """``teardown``: one kernel, deleted and verified gone, or why not; and any record of it
    the disk refused."""
    return [*_torn_lines(torn), *map(held_record_words, torn.seen.unrecorded)]


def _torn_lines(torn: KernelTorn) -> list[str]:
    kernel = torn.seen.record.kernel
    if torn.seen.record.practice:
        if torn.verified:
            return [f"[practice] {kernel}: {torn.detail}; nothing is left to delete."]
        if torn.seen.may_run and not torn.seen.held_by_command:
            return [f"[practice] {kernel}: not deleted: {torn.detail}.", *_seen_lines(torn.seen)]
        return [f"[practice] {kernel}: not deleted: {torn.detail}."]
    if torn.verified:
        return [f"Deleted {kernel} from your Kaggle account, and Kaggle no longer finds it."]
    if torn.seen.may_run and not torn.seen.problem:
        return [
            f"{kernel} was NOT deleted: {torn.detail} (Kaggle/kaggle-cli#1174). It is "
            f"{torn.seen.state}, and Kaggle ends it by about {_until(torn.seen.record.ends_by)}; "
            f"stop it sooner on its page: {torn.seen.record.url}, then run this again."
        ]
    return [f"{kernel} was NOT deleted: {torn.detail}. Its page: {torn.seen.record.url}"]


def unread_ledger_line(route: str, path: object, why: str, items: str, done: str) -> str:
    """A free route's ledger that could not be read, said beside what ``status`` or
    ``teardown`` goes on to do with the TPUs: ``items`` its records' kind ("kernels"),
    ``done`` what was not done to them ("checked")."""
    return (
        f"The {route} ledger {path} could not be read ({why}): its {items} are not {done} "
        f"here, and this goes on with the TPUs. Move that file aside (tpuwizard reads only a "
        f"regular file there), then run this again for its {items}."
    )
