"""Practice never bills, and no sentence in practice says it does (issue 49, the newcomer's round
5): a practice launch said "nothing is billed", then of its kept node "Still running and
billing", "it keeps billing", "STILL BILLING". The one decision (practice or real: the runtime's,
carried on the plan's events, the session's, the wizard's state) now drives every such word:
the same launch, real, says what bills; in practice, what runs and that it is not billed."""

from __future__ import annotations

import re
import time
from dataclasses import replace

import pytest

from tests.fakes import MemoryCloud, proven_workers
from tests.unit.test_launch_safety import ZONE, make_plan, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.core.launch.teardown.verified import TeardownResult
from tpuwizard.session.kept.lines import kept_info
from tpuwizard.tui.screens.summary import headline
from tpuwizard.tui.widgets.status_bar import meter_text
from tpuwizard.words.event_text import describe
from tpuwizard.words.kept_end import kept_info_line
from tpuwizard.words.kept_text import guard_until_words, kept_line
from tpuwizard.words.summary_text import summary_lines
from tpuwizard.words.teardown_text import teardown_lines

# A sentence that says something bills (a negation, "Nothing is billing", says the opposite).
BILLS = re.compile(
    r"[Ss]till running and billing|[Kk]eeps? billing|\b[Ii]t bills\b|\b[Tt]hey bill\b|"
    r"\bBILLING\b|[Bb]illing from now|\b[Ii]t billed\b|[Mm]ay still bill|s of billing|"
    r"[Ss]till billing",
)


def kept_launch(tmp_path, practice: bool):
    """A launch that keeps its node (as `up` does), with the runtime's practice or real."""
    cloud = MemoryCloud()
    plan = replace(make_plan(tmp_path), deadline=Deadline(keep=True))
    rt = replace(make_runtime(tmp_path, cloud), practice=practice)
    events: list[ev.Event] = []
    run_launch(plan, rt, events.append, CancelToken())
    assert (ZONE, "tpu-a") in cloud.nodes
    return events


def said(events: list[ev.Event], practice: bool) -> list[str]:
    """Every sentence the three front ends say of this launch: its event lines, its summary,
    the wizard's headline, meter, quit guard and kept line, status's Kept line."""
    summary, billing = RunSummary(), BillingState()
    for event in events:
        summary.apply(event)
        billing.apply(event)
    lines = [line for e in events for line in describe(e)]
    lines += [line for e in events for line in describe(e, "wizard")]
    lines += summary_lines(summary) + summary_lines(summary, "wizard", ["tpu-b (kept earlier)"])
    lines.append(headline(summary, ["tpu-b"]))
    lines.append(meter_text(billing, practice=practice))
    (node,) = billing.existing()
    lines.append(kept_line(node, practice))
    lines.append(guard_until_words([node], "tpu-a", None, 120, practice))
    return lines


@pytest.mark.parametrize("practice", [True, False])
def test_one_decision_says_what_bills_and_practice_bills_nothing(tmp_path, monkeypatch, practice):
    proven_workers(monkeypatch)
    lines = said(kept_launch(tmp_path, practice), practice)
    claims = [line for line in lines if BILLS.search(line)]
    if practice:
        assert claims == [], claims
        text = "\n".join(lines)
        assert "Still running (practice: not billed): tpu-a." in text  # the launch's last line
        assert "STILL RUNNING (practice: not billed): tpu-a." in text  # the summary's
        assert "it keeps running (practice: not billed" in text
        assert "RUNNING tpu-a" in text and "if real" in text  # the wizard's meter
    else:  # the same launch, real: every one of them says it bills
        text = "\n".join(claims)
        for real in (
            "Still running and billing: tpu-a.",
            "STILL BILLING: tpu-a.",
            "it keeps billing",
            "billing from now",
            "BILLING tpu-a",
            "it bills until you delete it",
        ):
            assert real in text, real


@pytest.mark.parametrize("practice", [True, False])
def test_status_and_teardown_lines_follow_the_session(practice):
    from tests.unit.test_two_backends import ZONE as Z
    from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
    from tpuwizard.core.launch.records.ledger import Entry, Resource

    r = Resource("node", "p", Z, "tpu-a", "v5litepod-4", "run-1")
    failed = TeardownResult(r, False, Diagnosis("x", "still listed", "it is listed"))
    now = time.time()
    info = kept_info(Entry(r, "kept", now, now - 60, {"kept_at": now}), "READY", {}, practice)
    lines = [*teardown_lines(failed, "owner", practice), kept_info_line(info)]
    claims = [line for line in lines if BILLS.search(line) or "bills until" in line]
    assert (claims == []) if practice else claims, lines
    if practice:
        assert "not billed ($" in lines[-1] and "[practice] Kept:" in lines[-1]
