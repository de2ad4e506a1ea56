"""One sentence for each fact of a kept node (issue 52, item 3; newcomer round 6, finding 4 and
D3): every front end's words for a kept node hold exactly one command that ends it (`down`) and
one sentence of how it ends without you, and both are words/kept_end.py's."""

from __future__ import annotations

import re
import time

import pytest

from tests.plans import launch_plan
from tpuwizard.commands.iterate import _kept_lines, next_script
from tpuwizard.core.deadlines import EndedBy
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.records.billing_state import Billed
from tpuwizard.core.routes import Route
from tpuwizard.session.kept.lines import KeptInfo
from tpuwizard.words.event_text import describe
from tpuwizard.words.kept_end import end_it_words, kept_end_sentence, kept_info_line
from tpuwizard.words.kept_text import kept_line
from tpuwizard.words.summary_text import summary_lines

NAME, ZONE = "tpuwizard-k", "us-central1-a"
IDLE_MIN = 30.0


def kept_event(practice: bool, deadline: float) -> ev.Kept:
    return ev.Kept(
        NAME,
        ZONE,
        "tpuwizard teardown tpuwizard-k",  # the event's own field: an alias, never said
        4.8,
        deadline,
        EndedBy.WATCHDOG,
        node=NAME,
        accelerator="v5litepod-1",
        idle_minutes=IDLE_MIN,
        practice=practice,
    )


def front_end_words(practice: bool) -> dict[str, str]:
    """What each front end says of one kept node: the launch's Kept line (CLI, plain mode and
    the wizard's log), the run's summary (CLI and wizard), the wizard's line for a node kept
    earlier (its Summary and parting words), and every command's and status's line."""
    now = time.time()
    deadline = now + 2 * 3600
    event = kept_event(practice, deadline)
    summary = RunSummary(practice=practice)
    for e in (event, ev.Finished(True, 0, "runs/r1", None, [NAME])):
        summary.apply(e)
    billed = Billed(
        NAME, "node", ZONE, "v5litepod-1", "on-demand", now, now, kept=True,
        kept_since=now, idle_s=IDLE_MIN * 60, max_deadline=deadline, last_heartbeat=now,
    )  # fmt: skip
    info = KeptInfo(
        NAME, ZONE, "v5litepod-1", "READY", now, 0.1, 1.2, deadline, IDLE_MIN * 60, now,
        practice,
    )  # fmt: skip
    return {
        "kept event": "\n".join(describe(event)),
        "cli summary": "\n".join(summary_lines(summary)),
        "wizard summary": "\n".join(summary_lines(summary, "wizard")),
        "kept earlier": kept_line(billed, practice),
        "status and every command": kept_info_line(info),
    }


@pytest.mark.parametrize("practice", [True, False])
def test_every_front_end_says_one_end_sentence_and_one_command_from_words(practice):
    deadline = time.time() + 2 * 3600
    end = kept_end_sentence(IDLE_MIN, deadline, EndedBy.WATCHDOG, practice)
    command = end_it_words(NAME, practice)
    at = time.strftime("%H:%M", time.localtime(deadline))
    assert end == f"It deletes itself after 30 minutes without a run, at the latest at {at}."
    for where, words in front_end_words(practice).items():
        assert words.count(end) == 1, (where, words)
        assert words.count(command) == 1, (where, words)
        assert len(re.findall(r"tpuwizard (down|teardown)", words)) == 1, (where, words)
        assert "deletes it at" not in words and "until you delete" not in words, (where, words)
        if practice:
            assert "billing" not in words.lower().replace("not billed", ""), (where, words)


@pytest.mark.parametrize(
    ("files", "named"),
    [
        (["main.py", "tpu01.py"], "main.py"),  # newcomer round 6: no train.py there
        (["train.py", "main.py"], "train.py"),
        (["lesson.py"], "lesson.py"),
        (["a.py", "b.py"], "SCRIPT"),
        ([], "SCRIPT"),
    ],
)
def test_the_next_step_names_a_script_in_the_folder_or_script(tmp_path, files, named):
    for name in files:
        (tmp_path / name).write_text("print(1)\n")
    assert next_script(tmp_path) == named


@pytest.mark.parametrize(
    ("route", "offered"), [(Route.SPOT, True), (Route.VM, False), (Route.FLEX, False)]
)
def test_up_offers_checkpoints_on_the_routes_that_resume(tmp_path, monkeypatch, route, offered):
    monkeypatch.chdir(tmp_path)
    plan = launch_plan("v5litepod-1", ZONE, "p", "r1", tmp_path, route, name=NAME)
    lines = _kept_lines(plan, practice=True, unrecorded=False)
    assert any("--checkpoints DIR" in line for line in lines) is offered
