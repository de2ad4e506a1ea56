"""The end-of-run summary: folded by the core from the events, printed the same everywhere."""

from tests.lifecycle_events import planned
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.colab import ColabPlanned, ColabSessionStopped
from tpuwizard.core.launch.events.kaggle import KernelPlanned, KernelPushed
from tpuwizard.core.launch.events.summary import LAST_LINES, RunSummary
from tpuwizard.words.summary_text import summary_lines


def fold(*events: ev.Event, practice: bool = False) -> RunSummary:
    """A real launch's summary (what it says bills), unless ``practice``."""
    summary = RunSummary()
    for event in (planned(practice=practice), *events):
        summary.apply(event)
    return summary


def test_a_good_run_lists_every_check_the_receipt_script_files_cost_and_nothing_billing():
    script = [ev.ScriptLine(0, f"step {i}") for i in range(LAST_LINES + 3)]
    summary = fold(
        ev.Check(0, "import", True, "jax 0.10", ""),
        ev.Check(0, "placement", True, "8x3 ok", ""),
        ev.ReceiptSaved("runs/r1/receipt.json", True, "a9b1672804f8c62d"),
        *script,
        ev.ScriptFinished(0),
        ev.FileFetched("runs/r1/files/report.json"),
        ev.FileNotFetched("odd dir", "not a regular file (dir)"),
        ev.TeardownVerified("tpuwizard-r1", "node", 12.0, 0.02),
        ev.Finished(True, 0, "runs/r1", 0.02, []),
    )
    text = "\n".join(summary_lines(summary))
    assert "Checks: 2 of 2 PASS" in text
    assert "PASS import: jax 0.10" in text and "PASS placement: 8x3 ok" in text
    assert "Receipt a9b1672804f8c62d: runs/r1/receipt.json (proves the run)" in text
    assert "Your script: exit 0" in text
    assert f"| step {LAST_LINES + 2}" in text and "| step 2\n" not in text  # the last lines only
    assert "Copied back: runs/r1/files/report.json" in text
    assert "Not copied back: 'odd dir': not a regular file (dir)" in text
    assert "about $0.02 (estimate) for 12 s of billing" in text
    assert "Nothing is billing. tpuwizard-r1 verified gone." in text
    assert "Exit code 0. Run folder: runs/r1" in text
    assert summary.nothing_billing and summary.checks_passed


def test_a_failed_check_a_failing_script_and_a_kept_node_say_so_in_words():
    kept = ev.Kept("tpuwizard-r1", "us-central1-a", "tpuwizard teardown tpuwizard-r1", 4.8)
    summary = fold(
        ev.Check(0, "import", True, "ok", ""),
        ev.Check(0, "contract", False, "sum 1 != 2", "numeric"),
        ev.ScriptFinished(3),
        ev.Failed("script", Diagnosis("script_failed", "Your script failed", "It exited 3.")),
        kept,
        ev.Finished(False, 1, "runs/r1", None, ["tpuwizard-r1"]),
    )
    text = "\n".join(summary_lines(summary))
    assert "Checks: 1 of 2 PASS" in text and "FAIL contract: sum 1 != 2" in text
    assert "Receipt: none was saved." in text
    assert "Your script: exit 3" in text and "(no output)" in text
    assert "Failed during script: Your script failed" in text
    assert "STILL BILLING: tpuwizard-r1." in text
    assert "End it with: tpuwizard down tpuwizard-r1." in text and "teardown" not in text
    assert not summary.nothing_billing and not summary.checks_passed


def test_the_wizards_summary_says_still_billing_and_how_to_delete_as_the_cli_does():
    """The wizard's own lines (its zone list) come after, never in place of, what still bills."""
    kept = ev.Kept("tpuwizard-r1", "us-central1-a", "tpuwizard teardown tpuwizard-r1", 4.8)
    summary = fold(kept, ev.Finished(False, 1, "runs/r1", None, ["tpuwizard-r1"]))
    text = "\n".join(summary_lines(summary, "wizard"))
    assert "STILL BILLING: tpuwizard-r1." in text
    assert "End it with: tpuwizard down tpuwizard-r1." in text and "teardown" not in text
    unfinished = "\n".join(summary_lines(fold(), "wizard"))
    assert "The launch did not finish: check with tpuwizard status." in unfinished


def test_a_refused_create_says_nothing_was_created():
    failed = ev.Failed("create", Diagnosis("quota", "Quota", "No TPU quota in this zone."))
    summary = fold(failed, ev.Finished(False, 3, "runs/r1", None))
    text = "\n".join(summary_lines(summary))
    assert "Checks: none ran." in text and "Nothing is billing. Nothing was created." in text
    assert "Your script" not in text


def test_multi_worker_checks_name_their_worker():
    summary = fold(ev.Check(0, "contract", True, "ok", ""), ev.Check(1, "contract", True, "ok", ""))
    text = "\n".join(summary_lines(summary))
    assert "PASS [w0] contract" in text and "PASS [w1] contract" in text
    assert "did not finish" in text


def test_the_end_of_a_run_is_said_once_and_the_rerun_offer_names_every_choice():
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.words.event_text import describe

    lines = [*describe(ev.ScriptFinished(3)), *describe(ev.ScriptDone(3, True, 600.0))]
    assert sum("exited" in line for line in lines) == 1
    assert lines[-1] == "Run it again, edit and rerun, open a shell, or tear down (10 min left)."
    assert describe(ev.ScriptDone(3, False, None)) == []


def test_after_run_again_the_summary_has_the_last_runs_lines_and_each_file_once():
    summary = fold(
        ev.ScriptLine(0, "first run: step 1"),
        ev.ScriptFinished(1),
        ev.FileFetched("runs/r1/files/out.txt"),
        ev.ScriptDone(1, True, 600.0),
        ev.ScriptLine(0, "second run: step 1"),
        ev.ScriptLine(0, "second run: done"),
        ev.ScriptFinished(0),
        ev.FileFetched("runs/r1/files/out.txt"),  # the same file, copied back again
        ev.ScriptDone(0, True, 500.0),
    )
    lines = summary_lines(summary)
    text = "\n".join(lines)
    assert "Your script: exit 0. Its last lines:" in text
    assert "| second run: step 1\n    | second run: done" in text and "first run" not in text
    assert lines.count("  Copied back: runs/r1/files/out.txt") == 1
    again = fold(ev.ScriptLine(0, "a"), ev.ScriptFinished(0), ev.ScriptLine(0, "b"))
    assert list(again.script_tail) == ["b"] and again.script_exit_code is None  # still running


def test_a_launch_that_created_nothing_says_it_cost_nothing():
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.words.summary_text import summary_lines

    s = RunSummary()
    for event in (
        ev.CreateRefused("tpu-a", "node", "us-central1-a"),
        ev.Finished(False, 3, "runs/x", None),
    ):
        s.apply(event)
    lines = summary_lines(s)
    assert "  Cost: nothing." in lines and not any("unknown" in line for line in lines)


def test_a_file_that_did_not_come_back_whole_is_counted_apart_from_odd_entries():
    summary = fold(
        ev.ScriptFinished(0),
        ev.FileNotFetched("odd dir", "not a regular file (directory)"),
        ev.FileNotFetched("model.bin", "the stream was cut short: 5 of 9 bytes arrived", True),
        ev.Finished(False, 1, "runs/r1", None, []),
    )
    text = "\n".join(summary_lines(summary))
    assert "Not copied back: 'model.bin': the stream was cut short: 5 of 9 bytes arrived" in text
    assert "1 file(s) did not come back whole (a run fails for it)." in text
    assert summary.incomplete == ["model.bin"]


def test_a_script_whose_files_nothing_copied_back_says_so_and_why():
    def text(*events: ev.Event, fetch: tuple[str, ...] = ()) -> str:
        summary = RunSummary()
        for event in (planned(fetch=fetch), *events):
            summary.apply(event)
        return "\n".join(summary_lines(summary))

    trace = ev.FileFetched("runs/r1/trace/t.pb")  # the deeper checks' trace, before the script
    said = text(trace, ev.ScriptFinished(0))
    assert "Nothing was copied back from your script: no files were named (--fetch" in said
    said = text(ev.ScriptFinished(0), fetch=("reports/*.json",))
    assert "Nothing was copied back from your script: no file matched reports/*.json." in said
    said = text(ev.ScriptFinished(0), ev.FileFetched("runs/r1/files/r.json"), fetch=("*.json",))
    assert "Copied back: runs/r1/files/r.json" in said and "Nothing was copied" not in said
    assert "Nothing was copied" not in text()  # no script ran: nothing to say of its files


def _colab_run(*ending: ev.Event) -> str:
    summary = RunSummary()
    events = (
        ColabPlanned("r1", "tpuwizard-r1", "v5e1", 60.0, "cpu", True, "runs/r1"),
        ev.Check(0, "import", True, "jax 0.10", "import"),
        ev.ReceiptSaved("runs/r1/receipt.json", True, "a9b1672804f8c62d"),
        ev.ScriptLine(0, "[tpuwizard] your script exited 0"),
        ev.ScriptFinished(0, "runs/r1/output.txt"),
        ev.FileFetched("runs/r1/files/result.txt"),
        *ending,
    )
    for event in events:
        summary.apply(event)
    return "\n".join(summary_lines(summary, "wizard"))


def test_a_colab_runs_summary_says_its_session_stopped_not_that_nothing_was_made():
    text = _colab_run(
        ColabSessionStopped("tpuwizard-r1", True), ev.Finished(True, 0, "runs/r1", None)
    )
    assert "Checks: 1 of 1 PASS" in text and "Your script: exit 0." in text
    assert "Copied back: runs/r1/files/result.txt" in text
    assert "Nothing is billing.\n  Session tpuwizard-r1 stopped: colab sessions no longer" in text
    assert "Nothing was created" not in text


def test_a_colab_session_not_verified_stopped_is_said_with_how_to_stop_it():
    text = _colab_run(
        ColabSessionStopped("tpuwizard-r1", False, "colab sessions still lists it"),
        ev.Finished(False, 4, "runs/r1", None),
    )
    assert "Session tpuwizard-r1 was NOT verified stopped (colab sessions still lists it)" in text
    assert "`tpuwizard teardown tpuwizard-r1 --sandbox` tries again" in text
    assert "Nothing was created" not in text


def test_a_practice_kaggle_kernel_is_said_kept_as_kaggle_would_keep_it():
    summary = RunSummary()
    for event in (
        KernelPlanned("r1", "practice-user/tpuwizard-r1", "TpuV5E8", 60, "cpu", True, "r", 1),
        KernelPushed("practice-user/tpuwizard-r1", "http://localhost/code/x", 1),
        ev.Finished(True, 0, "r", None),
    ):
        summary.apply(event)
    text = "\n".join(summary_lines(summary))
    assert "Kernel practice-user/tpuwizard-r1: kept as this run's record" in text
    assert "practice stand-in's, which ended with the run" in text
    assert "Nothing was created" not in text


def test_a_kaggle_run_refused_before_its_push_made_nothing_and_says_so():
    summary = RunSummary()
    for event in (
        KernelPlanned("r1", "ada/tpuwizard-r1", "TpuV5E8", 60, "tpu", False, "r", 0.0),
        ev.Finished(False, 3, "r", None),
    ):
        summary.apply(event)
    assert "Nothing is billing. Nothing was created." in "\n".join(summary_lines(summary))


def test_a_file_missed_by_every_run_is_said_once_with_how_many_runs():
    missed = ev.FileNotFetched("tpu-report.txt", "your script left no file of that name")
    summary = fold(
        ev.ScriptFinished(0), missed, ev.ScriptFinished(0), missed, ev.ScriptFinished(0), missed
    )
    lines = summary_lines(summary)
    said = [line for line in lines if "Not copied back" in line]
    assert said == [
        "  Not copied back: 'tpu-report.txt': your script left no file of that name (3 runs)"
    ]


def test_the_wizard_s_printed_summary_names_its_field_not_the_cli_flag():
    from tpuwizard.core.launch.records.billing_state import BillingState
    from tpuwizard.tui.farewell import farewell

    summary = RunSummary()
    for event in (planned(), ev.ScriptFinished(0)):
        summary.apply(event)
    said = farewell(BillingState(), None, True, summary)
    assert "'Files to copy back' names them" in said and "--fetch" not in said


def test_plain_modes_summary_names_its_own_question():
    """A walk of plain mode: it said "'Files to copy back' names them", the wizard's field,
    where plain mode asks "Files it writes, to copy back"."""
    summary = RunSummary()
    for event in (planned(), ev.ScriptFinished(0)):
        summary.apply(event)
    said = "\n".join(summary_lines(summary, "plain"))
    assert "the question 'Files it writes, to copy back' names them" in said


def test_a_free_routes_summary_never_names_a_field_its_step_lacks():
    """The wizard's and plain mode's free route ask for the script alone: the summary named
    "'Files to copy back'", a field of the TPU route's Review."""
    summary = RunSummary()
    for event in (
        KernelPlanned("r1", "practice-user/tpuwizard-r1", "TpuV5E8", 60, "cpu", True, "r", 1),
        ev.ScriptFinished(0),
    ):
        summary.apply(event)
    for audience in ("wizard", "plain"):
        said = "\n".join(summary_lines(summary, audience))
        assert "`tpuwizard launch --route kaggle --fetch GLOB` names them" in said
        assert "Files to copy back" not in said and "Files it writes" not in said


def test_a_name_made_again_for_each_attempt_is_said_once_with_how_many():
    """A resumed spot run's last line said "X-qr in us-central1-a, X-qr in us-central1-a, X-qr
    in us-central1-a verified gone" (issue 56, item 7)."""
    zone = "us-central1-a"
    summary = fold(
        *[ev.TeardownVerified("X-qr", "queued", 60.0, 0.01, zone=zone) for _ in range(3)],
        ev.TeardownVerified("Y", "node", 6.0, 0.01, zone=zone),
        ev.Finished(True, 0, "runs/r1", 0.04, []),
    )
    text = "\n".join(summary_lines(summary))
    assert f"Nothing is billing. X-qr in {zone} (each of the 3 made), Y in {zone} verified" in text
