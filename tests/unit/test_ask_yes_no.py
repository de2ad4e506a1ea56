"""Ctrl+C at a question (`down`'s "Delete ...?", watch's "Tear down ...?") does nothing and
exits 130, as a stop signal does; it is not click's "Aborted!" with exit 1."""

import click
import pytest

from tpuwizard.commands.common import ask_yes_no


def answer_with(monkeypatch, behaviour):
    def prompt(_text: str) -> str:
        if isinstance(behaviour, BaseException):
            raise behaviour
        return behaviour

    monkeypatch.setattr(click.termui, "visible_prompt_func", prompt)


def test_ctrl_c_at_the_question_exits_130_and_says_nothing_was_done(monkeypatch, capsys):
    answer_with(monkeypatch, KeyboardInterrupt())
    with pytest.raises(click.exceptions.Exit) as leaving:
        ask_yes_no("Delete tpu-a?")
    assert leaving.value.exit_code == 130
    assert "Nothing done" in capsys.readouterr().err


@pytest.mark.parametrize(("typed", "meant"), [("y", True), ("n", False), ("", False)])
def test_an_answer_is_the_answer(monkeypatch, typed, meant):
    answer_with(monkeypatch, typed)
    assert ask_yes_no("Delete tpu-a?") is meant


def test_end_of_input_answers_no(monkeypatch):
    answer_with(monkeypatch, EOFError())
    assert ask_yes_no("Delete tpu-a?") is False
