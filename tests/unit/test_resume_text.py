"""A spot chain's words, folded from its events by the core's RunSummary: the attempt under way
(the wizard's line above the log), the summary's attempts, the Review field's few words; the
meter counting every attempt's billing; the wizard's screens following a new attempt."""

from __future__ import annotations

from tests.lifecycle_events import planned
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.words.resume_text import attempt_lines, attempt_words, field_words
from tpuwizard.words.summary_text import summary_lines

ZONE = "us-central1-a"


def copied(step: int) -> ev.CheckpointCopied:
    return ev.CheckpointCopied(f"step_{step:06d}", step, 2, 100, f"runs/r1/checkpoints/{step}")


def chain(*events: ev.Event) -> RunSummary:
    summary = RunSummary()
    for event in (planned(route="spot", attempts_at_most=4), *events):
        summary.apply(event)
    return summary


def test_a_launch_that_does_not_resume_has_no_attempt_words():
    summary = RunSummary()
    summary.apply(planned())
    assert attempt_words(summary) is None and attempt_lines(summary) == []
    assert not any("Attempt" in line for line in summary_lines(summary))


def test_the_attempt_under_way_in_words():
    assert attempt_words(chain()) == "Attempt 1 of 4. No checkpoint has come home yet."
    assert attempt_words(chain(copied(1200))) == "Attempt 1 of 4. Last checkpoint home: step 1200."
    gone = chain(copied(1200), ev.Preempted("n", ZONE, 1, "PREEMPTED"))
    assert attempt_words(gone) == "Attempt 1 of 4: the TPU was preempted."
    assert gone.recovering
    making = chain(copied(1200), ev.Preempted("n", ZONE, 1, None), ev.Recreating(2, 4, ZONE, "x"))
    assert not making.recovering
    making.apply(ev.Resumed(2, "step_001200", 1200))
    assert attempt_words(making) == (
        "Attempt 2 of 4, resumed from step 1200. No checkpoint has come home yet."
    )
    making.apply(copied(1500))
    assert attempt_words(making) == (
        "Attempt 2 of 4, resumed from step 1200. Last checkpoint home: step 1500."
    )


def test_before_the_set_is_back_it_says_what_it_will_resume_from_or_that_it_starts_over():
    waiting = chain(ev.Preempted("n", ZONE, 1, "PREEMPTED"), ev.Recreating(2, 4, ZONE, "step_8"))
    assert attempt_words(waiting) == (
        "Attempt 2 of 4, to resume from step_8. No checkpoint has come home yet."
    )
    afresh = chain(ev.Preempted("n", ZONE, 1, "PREEMPTED"), ev.Recreating(2, 4, ZONE, None))
    assert attempt_words(afresh) == (
        "Attempt 2 of 4, from the start (no checkpoint had come home). "
        "No checkpoint has come home yet."
    )


def test_the_summary_lists_every_attempt_with_how_it_ended():
    summary = chain(
        copied(8),
        ev.Preempted("n", ZONE, 1, "PREEMPTED"),
        ev.Recreating(2, 4, "us-west1-c", "step_000008"),
        ev.Resumed(2, "step_000008", 8),
        copied(24),
        ev.Finished(True, 0, "runs/r1", 0.12),
    )
    lines = summary_lines(summary, "wizard")
    at = lines.index("  Attempts: 2 of at most 4")
    assert lines[at + 1 : at + 3] == [
        f"    1 in {ZONE}: last checkpoint home step 8, preempted",
        "    2 in us-west1-c: resumed from step 8, last checkpoint home step 24, finished",
    ]
    gave_up = chain(ev.Preempted("n", ZONE, 1, None), ev.Finished(False, 3, "runs/r1", 0.1))
    assert attempt_lines(gave_up)[1] == f"    1 in {ZONE}: its TPU was gone"


def test_the_review_fields_few_words():
    assert field_words("", 60, 3) == "off"
    assert field_words("ckpt", 60, 3) == "every 1m; 3 restarts"
    assert field_words("ckpt", 30, 1) == "every 30s; 1 restart"


def _billed(billing: BillingState, name: str, since: float) -> None:
    billing.apply(ev.ResourceExists(name, "node", ZONE, "v5litepod-4", "spot", "r1"))
    billing.apply(ev.BillingStarted(name, since, 4.8, ZONE))


def test_the_meter_counts_the_earlier_attempts_billing():
    import time

    from tpuwizard.tui.widgets.status_bar import meter_text
    from tpuwizard.words.figures import money

    billing = BillingState()
    billing.apply(planned(route="spot", attempts_at_most=4))
    _billed(billing, "tpuwizard-r1", time.time() - 3600)
    billing.apply(ev.BillingStopped("tpuwizard-r1", 3600.0, 4.8, ZONE))
    billing.apply(ev.TeardownVerified("tpuwizard-r1", "node", 3600.0, 4.8, ZONE))
    assert billing.gone_cost_usd == 4.8 and meter_text(billing) == "Nothing is billing"
    _billed(billing, "tpuwizard-r1", time.time() - 1800)  # attempt 2, half an hour in
    text = meter_text(billing)
    now = billing.cost_usd() or 0.0  # attempt 2's half hour alone
    assert now > 0 and text.startswith("BILLING tpuwizard-r1 18")
    assert text.endswith(f"~{money(round(now + 4.8, 2))} est."), text
    billing.apply(planned(run_id="r2"))  # a new launch starts its meter afresh
    assert billing.gone_cost_usd == 0.0


def test_a_leftovers_teardown_is_not_this_launchs_cost():
    from tpuwizard.core.launch.records.billable import Billable
    from tpuwizard.core.launch.records.ledger import Resource

    billing = BillingState()
    billing.apply(planned())
    old = Resource("node", "p", ZONE, "old", "v5litepod-4", "r0")
    billing.add_leftovers([Billable(old, "READY", 600.0, 0.8, "ledger")])
    billing.apply(ev.TeardownVerified("old", "node", 600.0, 0.8, ZONE))
    assert billing.gone_cost_usd == 0.0


def test_a_preempted_nodes_teardown_stays_on_the_attempts_screens():
    from tpuwizard.tui.screens.run import (
        ProvisionScreen,
        ScriptScreen,
        TeardownScreen,
        VerifyScreen,
        phase_screen,
    )

    script = object.__new__(ScriptScreen)  # never mounted: phase_screen reads only its type
    provision = phase_screen(ev.Preempted("n", ZONE, 1, "PREEMPTED"), script)
    assert isinstance(provision, ProvisionScreen)
    for event in (
        ev.TeardownStarted("n", "node", ZONE),
        ev.TeardownVerified("n", "node", 1.0, 0.1, ZONE),
    ):
        assert phase_screen(event, provision, recovering=True) is provision
        assert isinstance(phase_screen(event, provision), TeardownScreen)
    assert isinstance(phase_screen(ev.SshReady(1), provision, recovering=False), VerifyScreen)
    # Giving up (restarts used up): the end is the end.
    done = ev.Finished(False, 3, "runs/r1", 0.1)
    assert isinstance(phase_screen(done, provision, recovering=True), TeardownScreen)
