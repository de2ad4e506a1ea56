"""Plain-text lines for lifecycle events, shared by the CLI, the wizard and plain mode.

Each line is worded for its ``audience`` (words/choice_words.py): a remedy that names a choice says
the CLI's flag to the CLI and the wizard's own control to the wizard.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.cloud.types import UP_STATES
from tpuwizard.core.errors import BadInput, PlanRefused
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.colab import (
    ColabAccount,
    ColabAssignmentsAfter,
    ColabPlanned,
    ColabSessionReady,
    ColabSessionStopped,
)
from tpuwizard.core.launch.events.kaggle import (
    KernelDeleted,
    KernelLeftRunning,
    KernelPlanned,
    KernelPushed,
    KernelState,
)
from tpuwizard.core.plan.jax_versions import differs_words
from tpuwizard.core.routes import Route
from tpuwizard.core.terminal_text import visible
from tpuwizard.words import bill_words
from tpuwizard.words.choice_words import Audience, plain_data, words
from tpuwizard.words.colab_text import colab_lines
from tpuwizard.words.course_text import OUTPUT_WORDS, not_fetched_hint, sigterm_words
from tpuwizard.words.figures import about, count, money
from tpuwizard.words.held_chip_text import chip_event_lines, rerun_refused_lines
from tpuwizard.words.held_record_text import held_record_words
from tpuwizard.words.kaggle_text import kaggle_lines
from tpuwizard.words.kept_end import end_it_words, kept_end_sentence
from tpuwizard.words.oslogin_text import login_key_words
from tpuwizard.words.resume_text import chain_event_lines
from tpuwizard.words.sent_text import folder_sentence, left_out_lines, size_words

if TYPE_CHECKING:
    from tpuwizard.core.launch.records.ledger import Resource

# How each front end stops a wait (the CLI's bound is a flag, Flex-start's its own: see
# provision.py; the others stop by hand).
FLEX_WAIT_BOUND = "--queue-wait bounds the wait"
STOP_WAITING = {
    "cli": "--ready-timeout bounds the wait",
    "wizard": "Ctrl+Q stops the wait and deletes the request",
    "plain": "Ctrl+C stops the wait and deletes the request",
}


EACH = "to each worker"  # where a TPU route's copy of the folder goes

# How the summary marks the script's own last lines (printed as they are, never re-wrapped).
SCRIPT_TAIL = "    | "

# Queued-resource states that mean "no capacity yet" (spot and Flex-start can wait a long time).
# A queued request, or a Compute Engine Flex-start VM (PENDING), waiting for capacity.
QUEUE_WAITING = ("ACCEPTED", "WAITING_FOR_RESOURCES", "PENDING")


def describe(event: ev.Event, audience: Audience = "cli") -> list[str]:
    """What to print for ``event``; an empty list means nothing worth a line. Worker text in it
    (output lines, file names, check details) shows its control characters as ``cat -v`` does."""
    return [visible(line) for line in _describe(event, audience)]


def _describe(event: ev.Event, audience: Audience) -> list[str]:
    """``event``'s lines, from the one family of events it belongs to; [] when none has it."""
    for family in _FAMILIES:
        lines = family(event, audience)
        if lines is not None:
            return lines
    return []


# Each family below gives the lines of its own events, and None for any other event.


def _creating_lines(event: ev.Event, audience: Audience) -> list[str] | None:
    """From the plan to a node that answers: the create, its wait, billing's start."""
    match event:
        case ev.Planned():
            return _planned_lines(event)
        case ev.Provisioning():
            return [_provisioning_line(event, audience)]
        case ev.ResourceExists(kind="queued"):
            # Its name (the node's plus "-qr") shows up later in deletes and listings.
            return [
                f"  Asked for {event.name}: the queued request that asks Google for the node "
                "(spot and Flex-start go through one); it is deleted with the node."
            ]
        case ev.CreateRefused():
            return [f"  {event.name} was not created: nothing exists and nothing is billing."]
        case ev.BillingStarted():
            price = _per_hour(event.price_per_hour_usd, event.price_at_most_usd, event.price_source)
            billing = bill_words.billing_from_now(event.practice, price)
            return [f"  {event.name} is up{_in(event.zone)}: {billing}."]
        case ev.FanOutStarted():
            return [_fan_out_line(event)]
        case ev.FanOutWon():
            loser_zones = ", ".join(event.losers) or "no other zone"
            return [
                f"  {event.name} in {event.zone} was READY first: kept. Deleting the requests in "
                f"{loser_zones} ({_each_bills(event.practice)})."
            ]
        case ev.ZoneFailover():
            return [f"  {event.reason}: trying {event.to_zone} instead of {event.from_zone}"]
        case ev.Ready():
            return [f"Ready: {event.workers} worker(s) at {', '.join(event.endpoints)}"]
        case ev.SshReady():
            return ["Connected to every worker."]
    return None


def _worker_lines(event: ev.Event, audience: Audience) -> list[str] | None:
    """What the workers say (bootstrap, verifier, script), their versions, the watchdog, the
    receipt."""
    match event:
        case ev.BootstrapLine() | ev.VerifierLine() | ev.ScriptLine():
            return [f"{_prefix(event.worker, event.workers)}{event.text}"]
        case ev.Versions():
            return _versions_lines(event)
        case ev.WatchdogAccount():
            return [f"Watchdog: {words(event.detail, audience)}"]
        case ev.Watchdog():
            return [f"Watchdog {words(event.detail, audience)}"]
        case ev.Check():
            return []  # the verifier's own lines already show each check
        case ev.ReceiptSaved():
            verdict = "proves the run" if event.ok else "does NOT prove the run"
            return [f"Receipt {event.receipt_sha256} saved to {event.path}: {verdict}"]
    return None


def _script_lines(event: ev.Event, audience: Audience) -> list[str] | None:
    """The script's run: its folder on its way, its end, the files copied back, and a run on a
    kept node (its start, its wait, its compile cache)."""
    match event:
        case ev.ScriptFinished():
            kept = f" {OUTPUT_WORDS.capitalize()}: {event.output}" if event.output else ""
            said = [f"Your script exited with code {event.exit_code}.{kept}"]
            return said + ([sigterm_words(event.sigterm)] if event.sigterm else [])
        case ev.ScriptDone():
            return _script_done_lines(event)
        case ev.FileFetched():
            return [f"Copied back {event.path}"]
        case ev.FileNotFetched():
            broke = " (it did not arrive whole: the run fails for it)" if event.incomplete else ""
            hint = not_fetched_hint(event.path)
            line = f"Not copied back: {event.path!r}: {event.reason}{broke}"
            return [line, hint] if hint else [line]
        case ev.NothingMatched():
            globs = " or ".join(repr(p) for p in event.patterns)
            asked = f"--fetch {globs}" if audience == "cli" else f"the files to copy back, {globs}"
            return [f"Nothing in the script's folder matched {asked}: nothing was copied back."]
        case ev.RunStarted():
            return [f"run {event.run_id} on {event.node} ({count(event.workers, 'worker')})"]
        case ev.WaitingForNode() | ev.HeartbeatMissed():
            return [event.detail]
        case ev.FolderSynced():
            return [synced_words(event)]
        case ev.CompileCache():
            return [compile_cache_words(event)]
        case ev.FolderProgress():
            done = f"{size_words(event.sent)} of its {size_words(event.total)} tar"
            share = f"{event.sent * 100 // event.total}%"
            return [f"{_prefix(event.worker, event.workers)}copying the folder: {done} ({share})"]
    return None


def _resume_lines(event: ev.Event, audience: Audience) -> list[str] | None:
    """--checkpoints: a spot run that survives preemption, and a kept node made again."""
    match event:
        case (
            ev.CheckpointCopied()
            | ev.CheckpointsUnusable()
            | ev.Preempted()
            | ev.Recreating()
            | ev.RunningAgain()
            | ev.Resumed()
        ):
            return chain_event_lines(event)
        case ev.KeptReplaced():
            return [
                f"{event.new_name} is kept in place of {event.old_name}, in {event.zone} "
                f"(run {event.run_id}): later commands use it (--node {event.new_name})."
            ]
    return None


def _ending_lines(event: ev.Event, audience: Audience) -> list[str] | None:
    """How a launch ends: the verified teardown and the zone's list after it, a node kept on
    purpose, a ledger record the disk refused, a failure, the last line."""
    match event:
        case ev.TeardownStarted():
            return [f"Deleting {event.name}{_in(event.zone)} and checking that it is gone..."]
        case ev.TeardownVerified():
            return [_teardown_verified_line(event)]
        case ev.ZoneListed():
            return zone_listed_lines(event)
        case ev.TeardownFailed():
            return _teardown_failed_lines(event, audience)
        case ev.LoginKeyForgotten():
            return [login_key_words(event)]
        case ev.Kept():
            hourly = about(event.price_per_hour_usd, event.price_at_most_usd)
            if event.practice:
                runs = f"it keeps running ({bill_words.NOT_BILLED}; on Google {hourly}/h, estimate)"
            else:
                runs = f"it keeps billing {hourly}/h (estimate)"
            return [
                f"Kept {event.name} in {event.zone} on purpose: {runs}.{kept_guard_words(event)}"
            ]
        case ev.NotKept():
            return [NOT_KEPT_WORDS[event.because].format(name=event.name)]
        case ev.LedgerRecordHeld():
            return [held_record_words(event)]
        case ev.DeletingOnRequest():
            return ["Your script finished: deleting the node, as you asked."]
        case ev.Failed():
            return [f"Failed during {event.stage}:", *_diagnosis(event.diagnosis, audience)]
        case ev.Finished():
            return [_finished_line(event)]
    return None


def _free_route_lines(event: ev.Event, audience: Audience) -> list[str] | None:
    """Kaggle's and Colab's own events, worded beside their routes."""
    match event:
        case (
            KernelPlanned() | KernelPushed() | KernelState() | KernelLeftRunning() | KernelDeleted()
        ):
            return kaggle_lines(event)
        case (
            ColabPlanned()
            | ColabSessionReady()
            | ColabSessionStopped()
            | ColabAccount()
            | ColabAssignmentsAfter()
        ):
            return colab_lines(event)
    return None


_FAMILIES = (
    _creating_lines,
    _worker_lines,
    _script_lines,
    lambda event, _audience: chip_event_lines(event),
    _resume_lines,
    _ending_lines,
    _free_route_lines,
)


def _planned_lines(event: ev.Planned) -> list[str]:
    """The plan, said before the create: what, where, at what price, until when."""
    practice = "[practice] " if event.practice else ""
    price = _per_hour(event.price_per_hour_usd, event.price_at_most_usd, event.price_source)
    chips = count(event.chips, "chip")
    minutes = event.max_run_minutes
    deadline = "no deadline" if minutes is None else f"deadline {minutes:g} min"
    if event.budget_usd is not None:
        deadline += f", budget {money(event.budget_usd)} for every attempt together"
    # What of the script's folder goes, on the plan line itself: it is said before the
    # create, and the copy takes billed time.
    folder = "" if event.folder is None else " " + folder_sentence(event.folder, EACH)
    return [
        f"{practice}Creating {event.name}: {event.accelerator} ({chips}) "
        f"in {event.zone}, route {event.route}, {price}, {deadline}. Run {event.run_id}." + folder,
        *(left_out_lines(event.folder) if event.folder is not None else []),
    ]


def _provisioning_line(event: ev.Provisioning, audience: Audience) -> str:
    """The create's state while it waits, and whether that bills (a waiting request does not)."""
    note = "" if event.state in UP_STATES else " (not billing yet)"
    if event.state in PART_WORDS:  # Compute Engine's parts, named as they are made
        note = f" (not billing yet: {PART_WORDS[event.state]}; deleted with it)"
    if event.state in QUEUE_WAITING:
        flex = audience == "cli" and event.route == Route.FLEX
        note = (
            " (waiting for capacity: a waiting request costs nothing; "
            f"{FLEX_WAIT_BOUND if flex else STOP_WAITING[audience]})"
        )
    return f"  state {event.state}{_in(event.zone)} after {event.elapsed_s:.0f} s{note}"


def _fan_out_line(event: ev.FanOutStarted) -> str:
    """--fan-out: every zone asked at once, and what that may bill until one wins."""
    n = len(event.zones)
    worst = event.worst_case_per_hour_usd
    cost_words = (
        f"at most {money(worst)}/h (estimate)"
        if worst is not None
        else "no price for it in the catalog"
    )
    quota = (
        "Quota for all of them at once was checked."
        if event.quota_checked
        else f"Quota for {n} at once was not checked (one region's or none was read)."
    )
    return (
        f"Fan-out: asking for {event.name} in {', '.join(event.zones)} at once; the first "
        f"READY is kept, the others are deleted and verified gone. Until then up to {n} "
        f"{_may_bill(event.practice, cost_words)}. {quota}"
    )


def _versions_lines(event: ev.Versions) -> list[str]:
    """A worker's JAX, jaxlib, libtpu and Python, the packages added, and this computer's JAX
    where it differs."""
    v = event.versions
    added = v.get("packages") or {}
    return (
        [
            f"{_prefix(event.worker, event.workers)}JAX {v.get('jax')}, "
            f"jaxlib {v.get('jaxlib')}, "
            f"libtpu {v.get('libtpu')}, Python {v.get('python')}"
            + (f" (tpuwizard pins {v['requested']})" if v.get("requested") else "")
            + (f"; this computer: JAX {event.laptop_jax}" if event.laptop_jax else "")
        ]
        + (
            [
                f"{_prefix(event.worker, event.workers)}Added packages: "
                + ", ".join(f"{n} {ver}" for n, ver in added.items())
            ]
            if added
            else []
        )
        + _jax_differs(event)
    )


def _script_done_lines(event: ev.ScriptDone) -> list[str]:
    """After a run of the script: a rerun refused as the TPU is held, packages that did not
    install, and the choices that remain."""
    # ScriptFinished, just before, has said how it exited; a rerun whose packages did
    # not install never ran: said here, with why (uv's lines are just above).
    failed = []
    if event.chip_held is not None:  # the rerun was refused before anything was touched
        failed = rerun_refused_lines(event.chip_held)
    elif event.not_installed:
        title = f": {event.diagnosis.title}" if event.diagnosis else ""
        failed = [
            f"Run {event.run}: installing {' '.join(event.not_installed)} failed{title}. "
            "Your script did not run."
        ]
    if not event.can_rerun:
        return failed
    return [*failed, rerun_offer(event.seconds_left)]


def _teardown_verified_line(event: ev.TeardownVerified) -> str:
    """Gone, as a listing proved; what of this launch still exists, and what it cost."""
    others = event.others_left
    now = (
        "Nothing of this launch is billing."  # a node kept earlier may still bill
        if not others
        else f"{count(others, 'other request')} of this launch still "
        + ("exists." if others == 1 else "exist.")
    )
    figure = about(event.cost_usd, event.cost_at_most_usd)
    billed = bill_words.billed_for(event.practice, event.billed_s, figure)
    return f"Verified gone: {event.name}{_in(event.zone)}. {now} {billed}."


def _teardown_failed_lines(event: ev.TeardownFailed, audience: Audience) -> list[str]:
    """A delete not verified: what may still bill or exist, and why."""
    if not event.seen:  # its create's answer was lost: no evidence that it exists
        return [
            f"NOT verified gone: {event.name}. Its create may have landed before the "
            "network failed, so it may exist; tpuwizard status checks once the network "
            "is back.",
            *_diagnosis(event.diagnosis, audience),
        ]
    return [
        f"NOT verified gone: {event.name}. It {bill_words.may_still_be_billing(event.practice)}.",
        *_diagnosis(event.diagnosis, audience),
    ]


def _finished_line(event: ev.Finished) -> str:
    """The last line: the exit code, the run folder, and what still exists or may."""
    rest = ", ".join(n for n in event.remaining if n not in event.unseen)
    running = bill_words.still_running(event.practice).capitalize()
    still = f" {running}: {rest}." if rest else ""
    if event.unseen:
        still += f" May exist (never seen): {', '.join(event.unseen)}."
    return f"Done (exit {event.exit_code}). Run folder: {event.run_dir}.{still}"


def compile_cache_words(event: ev.CompileCache) -> str:
    """The kept node's compile cache after a run, as counted on worker 0 (what the count can
    and cannot know: core/launch/workers/compile_cache.py)."""
    added = event.after - event.before

    def entries(n: int) -> str:
        return f"{n} entry" if n == 1 else f"{n} entries"

    if event.hit:
        return (
            f"compile cache: hit, nothing compiled again ({entries(event.before)} "
            "kept on the node from earlier runs)"
        )
    if event.before == 0 and added == 0:
        return (
            "compile cache: empty, JAX wrote nothing to it (no compile, or the script set its own)"
        )
    if event.before == 0:
        return f"compile cache: cold, {count(added, 'compile')} saved on the node for the next run"
    if added > 0:
        # New entries are compiles the cache lacked: an edited step, or code never run here
        # (watch's first run of a script); the count cannot tell which (issue 55.11).
        return (
            f"compile cache: {entries(added)} new beside {event.before} kept "
            "(compiles the cache did not hold yet; a next run of the same code reads them)"
        )
    return f"compile cache: {entries(event.before)} before this run, {event.after} after"


def synced_words(event: ev.FolderSynced) -> str:
    """What was copied to the workers, and how (rsync, or tar and why not rsync)."""
    if not event.changed and not event.deleted:
        return "nothing changed since the last copy"
    removed = f", removed {len(event.deleted)}" if event.deleted else ""
    # The files' size, as the plan line counts the folder; then what went over the wire.
    how = ""
    if all(way == "rsync" for way in event.ways):
        how = " by rsync"
    elif not any(way == "rsync" for way in event.ways):
        how = " as a tar"
    return (
        f"copied {len(event.changed)} changed file(s), {size_words(event.files_bytes)} "
        f"({size_words(event.bytes_sent)} sent{how}){removed} to "
        f"{count(event.workers, 'worker')} in {event.seconds:.2f} s ({'; '.join(event.ways)})"
    )


def zone_listed_lines(event: ev.ZoneListed) -> list[str]:
    """The zone's TPU list now, as the course checks it after deleting: each TPU with who made
    it; one tpuwizard did not make is never deleted by it, and this says how to end it."""
    shown = f" (as `{event.command}` shows it)" if event.command else ""
    head = f"The TPU list of {event.zone} now{shown}:"
    if not event.tpus:
        return [f"{head} empty. No TPU, yours or anyone's, is there."]
    lines = [f"{head} {count(len(event.tpus), 'TPU')}."]
    for tpu in event.tpus:
        line = f"  {tpu.name}  {tpu.accelerator}  {tpu.state}  {tpu.made_by}"
        if tpu.made_by == "not made by tpuwizard":
            how = (
                f"gcloud compute instances delete {tpu.name} --zone {event.zone}"
                if event.backend == Backend.COMPUTE
                else f"gcloud compute tpus tpu-vm delete {tpu.name} --zone {event.zone}"
            )
            bills = (
                bill_words.bills_until_deleted(event.practice)
                if event.practice
                else ("it bills until you do")
            )
            line += f": tpuwizard never deletes it; {bills}: {how}"
        lines.append(line)
    return lines


def _may_bill(practice: bool, cost_words: str) -> str:
    """Fan-out's requests until the first is READY: what they may bill (real), or run."""
    if practice:
        return f"may run ({bill_words.NOT_BILLED}; on Google {cost_words})"
    return f"may bill: {cost_words}"


def _each_bills(practice: bool) -> str:
    if practice:
        return f"each runs until verified gone; {bill_words.NOT_BILLED}"
    return "each bills until verified gone"


def _clock(epoch: float) -> str:
    import time

    return time.strftime("%H:%M", time.localtime(epoch))


def _prefix(worker: int, workers: int = 1) -> str:
    return f"[w{worker}] " if workers > 1 else ""


def _jax_differs(event: ev.Versions) -> list[str]:
    """Said once (worker 0's line) when this computer's JAX is not the worker's."""
    differs = differs_words(event.laptop_jax, event.versions.get("jax"))
    return [differs] if differs and event.worker == 0 else []


def _diagnosis(d: Diagnosis, audience: Audience) -> list[str]:
    lines = [f"  {d.title}", f"  {d.explanation}"]
    return lines + [f"    - {step}" for step in next_steps(d, audience)]


def next_steps(d: Diagnosis, audience: Audience) -> list[str]:
    """A diagnosis's next steps in ``audience``'s words."""
    return [words(step, audience) for step in d.next_steps]


def diagnosis_text(d: Diagnosis, audience: Audience = "cli") -> str:
    """A diagnosis as the CLI prints it: title, explanation, each next step."""
    lines = [d.title, d.explanation]
    lines += [f"  - {words(step, audience)}" for step in d.next_steps]
    return "\n".join(lines)


def unchecked_text(
    resource: Resource, d: Diagnosis, audience: Audience = "cli", practice: bool = False
) -> str:
    """A record whose zone could not be read: on its own line, with why and what to do."""
    head = f"Could not check {resource.name} in {resource.zone}: {d.title}; it may still exist"
    tail = f" ({bill_words.NOT_BILLED})." if practice else " and bill."
    return diagnosis_text(replace(d, title=head + tail), audience)


def refusal_text(err: BadInput, audience: Audience = "cli") -> str:
    """A BadInput's message; a refused plan's problems each in ``audience``'s words."""
    if isinstance(err, PlanRefused):
        return " ".join(words(p, audience) for p in err.problems)
    return str(err)


# Why a node the plan was to keep is deleted instead (the teardown's own lines follow).
NOT_KEPT_WORDS = {
    ev.NotKeptBecause.NEVER_CREATED: (
        "Not kept: {name} was never seen created, so nothing of this run is handed over; "
        "deleting whatever of it may exist, verified by listing."
    ),
    ev.NotKeptBecause.UNPROVEN: (
        "Not kept: {name} failed its setup or its checks (said above), so no run could use "
        "it; deleting it now, verified by listing."
    ),
    ev.NotKeptBecause.UNGUARDED: (
        "Not kept: {name}'s watchdog, which the plan promised, was never armed (the run "
        "ended first, or arming failed); deleting it now, verified by listing (only "
        "--no-watchdog keeps a node unguarded)."
    ),
}


def handed_over_stop_words(event: ev.Kept, exit_code: int | None = None) -> str:
    """A stop signal after the node was handed over: it stays, and what ends it; with
    ``exit_code``, the code the command now ends with (its summary was said already)."""
    ended = f" Exit code {exit_code}." if exit_code is not None else ""
    return f"{event.name} was handed over already: it stays kept.{kept_guard_words(event)}{ended}"


def kept_guard_words(event: ev.Kept) -> str:
    """How a kept node ends without us, and the one command that ends it now (two sentences,
    each from words/kept_end.py, with a leading space)."""
    end = kept_end_sentence(event.idle_minutes, event.deadline, event.ended_by, event.practice)
    return f" {end} {end_it_words(event.node or event.name, event.practice)}"


def json_event(event: ev.Event) -> dict[str, Any]:
    """``launch --json``'s line: the event's fields, every remedy in the CLI's words."""
    return {"event": event.event_name(), **plain_data(event)}


def _per_hour(hourly: float | None, at_most: float | None, source: str) -> str:
    """A launch's price per hour, "(estimate)", and whose price it is where the event says."""
    prices = f"; prices: {source}" if source else ""
    return f"{about(hourly, at_most)}/h (estimate{prices})"


def _in(zone: str) -> str:
    return f" in {zone}" if zone else ""


def rerun_offer(seconds_left: float | None) -> str:
    """The choices after a run, with the minutes left before the node's deadline (said again
    with the minutes then, after a shell on the node)."""
    left = f" ({seconds_left / 60:.0f} min left)" if seconds_left else ""
    return f"Run it again, edit and rerun, open a shell, or tear down{left}."


# What a Compute Engine slice's build states make (Route 2B and bulk slices), said as the
# state shows: each part is named the node's name, and teardown deletes it with the node.
PART_WORDS = {
    "CREATING_POLICY": "the workload policy that places the slice's VMs",
    "CREATING_TEMPLATE": "the instance template the VMs are made from",
    "CREATING_MIG": "the instance template and the MIG (managed instance group) that holds the VMs",
    "REQUESTING": "the MIG's resize request, Flex-start's ask for the VMs",
}
