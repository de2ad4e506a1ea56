"""The end-of-run summary: the same words in the wizard, plain mode and the CLI, every check,
the receipt, the script's last lines, the cost, and what still bills."""

from __future__ import annotations

from collections.abc import Sequence

from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.plan import cost
from tpuwizard.core.terminal_text import visible
from tpuwizard.words import bill_words
from tpuwizard.words.choice_words import Audience
from tpuwizard.words.course_text import OUTPUT_WORDS, not_fetched_hint, sigterm_words
from tpuwizard.words.event_text import (
    SCRIPT_TAIL,
    kept_guard_words,
    next_steps,
    zone_listed_lines,
)
from tpuwizard.words.figures import about
from tpuwizard.words.held_record_text import held_record_words
from tpuwizard.words.resume_text import attempt_lines


def summary_lines(
    summary: RunSummary, audience: Audience = "cli", elsewhere: Sequence[str] = ()
) -> list[str]:
    """The launch's parting summary; the script's last lines and file names made harmless."""
    return [visible(line) for line in _summary_lines(summary, audience, elsewhere)]


def _summary_lines(summary: RunSummary, audience: Audience, elsewhere: Sequence[str]) -> list[str]:
    """The end-of-run summary, the same words in the wizard, plain mode and the CLI (a failure's
    next steps each in the audience's own words). ``elsewhere``: what still bills that this run
    did not make (a node kept earlier), a line each; "nothing is billing" is then this run's."""
    s = summary
    where = f" ({s.accelerator} in {s.zone}{', practice' if s.practice else ''})" if s.name else ""
    lines = [f"Summary of {s.name or 'the launch'}{where}", *attempt_lines(s)]
    if s.checks:
        passed = sum(c.ok for c in s.checks.values())
        lines.append(f"  Checks: {passed} of {len(s.checks)} PASS")
        workers = {c.worker for c in s.checks.values()}
        for c in s.checks.values():
            who = f"[w{c.worker}] " if len(workers) > 1 else ""
            lines.append(f"    {'PASS' if c.ok else 'FAIL'} {who}{c.name}: {c.detail}")
    else:
        lines.append("  Checks: none ran.")
    if s.receipt is not None:
        verdict = "proves the run" if s.receipt.ok else "does NOT prove the run"
        lines.append(f"  Receipt {s.receipt.receipt_sha256}: {s.receipt.path} ({verdict})")
    else:
        lines.append("  Receipt: none was saved.")
    if s.script_ran:
        code = "did not finish" if s.script_exit_code is None else f"exit {s.script_exit_code}"
        lines.append(f"  Your script: {code}. Its last lines:")
        lines += [f"{SCRIPT_TAIL}{line}" for line in s.script_tail] or ["    (no output)"]
        if s.script_output:
            lines.append(f"  {OUTPUT_WORDS.capitalize()}, every worker's lines: {s.script_output}")
        if s.script_sigterm:
            lines.append(f"  {sigterm_words(s.script_sigterm)}")
    lines += _copied_back_lines(s, audience)
    for done in s.not_installed:  # a rerun's packages that did not install: named by its run
        asked = " ".join(done.not_installed)
        why = f": {done.diagnosis.title}. {done.diagnosis.explanation}" if done.diagnosis else "."
        lines.append(f"  Run {done.run}: installing {asked} failed{why}")
    if s.incomplete:
        lines.append(f"  {len(s.incomplete)} file(s) did not come back whole (a run fails for it).")
    if s.failure is not None:
        lines.append(f"  Failed during {s.failure.stage}: {s.failure.diagnosis.title}")
        lines += [f"    - {step}" for step in next_steps(s.failure.diagnosis, audience)]
    if s.deleted_on_request and s.failure is None:
        lines.append("  Deleted at your request after your script finished.")
    unseen = s.finished.unseen if s.finished is not None else []
    if s.nothing_billing and not s.gone:
        lines.append("  Cost: nothing.")
    elif s.cost_usd is None and s.cost_at_most_usd is None and not s.gone and unseen:
        lines.append("  Cost: none seen (nothing was seen running).")
    else:
        figure = about(s.cost_usd, s.cost_at_most_usd)
        spent = bill_words.cost_words(s.practice, figure, s.billed_s if s.gone else None)
        lines.append(f"  Cost: {spent}.")
        if s.cost_usd is None and s.cost_at_most_usd is not None:
            lines.append(f"    ({cost.FLEX_PRICE_NOTE}.)")
        elif s.cost_usd is None and s.route and (slice_ := s.known_slice):  # no figure: why
            why = cost.zone_price(slice_, s.route, s.zone).note
            lines += [f"    (No price: {why}.)"] if why else []
        if source := cost.catalog_source():  # the session priced it from the catalog's read
            lines.append(f"    (Prices: {source}.)")
    if s.nothing_billing:
        nothing = "Nothing from this run is billing." if elsewhere else "Nothing is billing."
        free = _free_route_lines(s)
        if free:
            lines += [f"  {nothing}", *free]
        else:
            gone = f" {gone_list(s.gone)} verified gone." if s.gone else " Nothing was created."
            lines.append(f"  {nothing}{gone}")
    elif s.finished is None:
        lines.append("  The launch did not finish: check with tpuwizard status.")
    else:
        billing = [n for n in s.still_existing if n not in unseen]
        if billing:
            lines.append(f"  {bill_words.still_running_head(s.practice)}: {', '.join(billing)}.")
        if unseen:
            lines.append(
                f"  MAY EXIST: {', '.join(unseen)} (its create's answer was lost on the network); "
                "tpuwizard status checks it once the network is back."
            )
        lines += [f"   {kept_guard_words(k)}" for k in s.kept]  # its end, and `down` for it
    if audience == "wizard":  # the CLI and plain mode print the list's own event just above
        lines += [f"  {line}" for listed in s.zone_lists for line in zone_listed_lines(listed)]
    lines += [f"  {held_record_words(h)}" for h in s.held]  # the disk refused these records
    still = "Still running" if s.practice else "Still billing"  # kept earlier, same mode
    lines += [f"  {still}: {line}" for line in elsewhere]
    if s.finished is not None:
        lines.append(f"  Exit code {s.finished.exit_code}. Run folder: {s.finished.run_dir}")
    return lines


FREE_ROUTES = ("Kaggle", "Colab")  # the summary's zone for a free route's run


def gone_list(gone: Sequence[str]) -> str:
    """Each name verified gone, once: a resumed run makes its node again under the same name
    for each attempt ("X-qr in us-central1-a (each of the 3 made)"), not the name three times."""
    counted: dict[str, int] = {}
    for name in gone:
        counted[name] = counted.get(name, 0) + 1
    return ", ".join(n if k == 1 else f"{n} (each of the {k} made)" for n, k in counted.items())


def _copied_back_lines(s: RunSummary, audience: Audience) -> list[str]:
    """The script's files: copied back, not (each once, with how many runs said it), or none,
    and what names them in ``audience``'s words (a free route's step names none)."""
    lines = [f"  Copied back: {path}" for path in s.fetched]
    said: dict[tuple[str, str], int] = {}
    for missed in s.not_fetched:
        said[missed] = said.get(missed, 0) + 1
    for (path, why), runs in said.items():
        lines.append(
            f"  Not copied back: {path!r}: {why}" + (f" ({runs} runs)" if runs > 1 else "")
        )
        hint = not_fetched_hint(path)
        lines += [f"  {hint}"] if hint else []
    if s.script_exit_code is not None and not s.script_files_seen:
        how = {
            "cli": "--fetch GLOB names them",
            "plain": "the question 'Files it writes, to copy back' names them",
        }.get(audience, "'Files to copy back' names them")
        if s.zone in FREE_ROUTES and audience != "cli":  # its step asks for no files
            how = f"`tpuwizard launch --route {s.zone.lower()} --fetch GLOB` names them"
        why = f"no file matched {', '.join(s.fetch)}" if s.fetch else f"no files were named ({how})"
        lines.append(f"  Nothing was copied back from your script: {why}.")
    return lines


def _free_route_lines(s: RunSummary) -> list[str]:
    """What a Kaggle or Colab run left, or ended and verified (none of it bills); [] where it
    made nothing (then "Nothing was created" is true)."""
    lines = []
    for kernel in s.free_kept:
        if s.practice:
            lines.append(
                f"  Kernel {kernel}: kept as this run's record, as Kaggle keeps a kernel in your "
                "account (free); here in the practice stand-in's, which ended with the run."
            )
        else:
            lines.append(
                f"  Kernel {kernel}: kept in your Kaggle account as this run's record (it costs "
                f"nothing); `tpuwizard teardown {kernel}` deletes it."
            )
    for name in s.free_ended:
        if s.zone == "Colab":
            lines.append(f"  Session {name} stopped: colab sessions no longer lists it.")
        else:
            lines.append(
                f"  Kernel {name} deleted from your Kaggle account, and Kaggle no longer finds it."
            )
    for name, why in s.free_not_ended:
        if s.zone == "Colab":
            flag = " --sandbox" if s.practice else ""
            lines.append(
                f"  Session {name} was NOT verified stopped ({why}): it spends your Colab usage "
                f"until it stops; `tpuwizard teardown {name}{flag}` tries again."
            )
        else:
            lines.append(f"  Kernel {name} was NOT verified deleted ({why}); it costs nothing.")
    return lines
