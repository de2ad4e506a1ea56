"""Which editor "Edit and rerun" opens: git's order, so a beginner without $EDITOR still edits."""

from __future__ import annotations

from tpuwizard.tui.screens.run import editor_argv


def on_path(*names: str):
    return lambda program: f"/usr/bin/{program}" if program in names else None


def test_visual_wins_over_editor_and_is_split_as_a_shell_would():
    environ = {"VISUAL": "code --wait", "EDITOR": "nano"}
    assert editor_argv(environ, on_path("vi")) == ["code", "--wait"]


def test_editor_when_visual_is_unset_or_blank():
    assert editor_argv({"VISUAL": "  ", "EDITOR": "emacs -nw"}, on_path()) == ["emacs", "-nw"]


def test_without_variables_the_first_of_editor_nano_vi_on_path():
    assert editor_argv({}, on_path("vi", "nano")) == ["/usr/bin/nano"]
    assert editor_argv({}, on_path("vi", "editor", "nano")) == ["/usr/bin/editor"]
    assert editor_argv({}, on_path("vi")) == ["/usr/bin/vi"]


def test_none_when_nothing_can_edit():
    assert editor_argv({}, on_path()) is None


def test_an_unbalanced_quote_is_one_program_name_not_a_crash():
    assert editor_argv({"EDITOR": "my'editor"}, on_path()) == ["my'editor"]
