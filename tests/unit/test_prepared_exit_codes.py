"""How the command line ends on the pipeline's questions before create (issue 55.11): each is a
refusal before any create that a flag answers, so each exits 2 (core/exit_codes.py: what was
typed cannot go on as typed), naming the flag; `up`'s node nothing would delete exited 1."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tpuwizard.commands.preflight import checked_or_exit
from tpuwizard.core.errors import PlanRefused
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT
from tpuwizard.session.prepare.outcomes import Ask, Prepared, Question, Stage
from tpuwizard.session.prepare.stages import WATCHDOG_OFF

REASON = "Refusing to keep a node that nothing would delete: the account lacks a role."


def prepared(ask: Ask, stage: Stage) -> Prepared:
    answers = SimpleNamespace()  # not read on a question
    return Prepared(answers, Question(stage, ask, (REASON,), WATCHDOG_OFF))  # type: ignore[arg-type]


def test_a_node_nothing_would_delete_exits_2_naming_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as ended:
        checked_or_exit(prepared(Ask.KEEP_UNWATCHED, Stage.KEEP), as_json=False)
    assert ended.value.code == EXIT_BAD_INPUT
    said = " ".join(capsys.readouterr().err.split())
    assert REASON in said and "(Give --no-watchdog to keep it anyway" in said


def test_the_watchdog_question_is_a_refusal_the_cli_exits_2_on() -> None:
    """Its sibling question (the watchdog asked for cannot run) exits 2 through PlanRefused."""
    with pytest.raises(PlanRefused):
        checked_or_exit(prepared(Ask.WITHOUT_WATCHDOG, Stage.WATCHDOG), as_json=False)
