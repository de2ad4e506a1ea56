"""Worker text made harmless for a terminal (issue 39, item 10): a script printing a title
escape, a clear-screen escape and a bare carriage return, or a file named with an escape and a
newline, shows those characters as `cat -v` does in the CLI, plain mode and the wizard's logs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from textual.app import App, ComposeResult

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.terminal_text import visible, without_sgr
from tpuwizard.plain.walk import PlainWizard
from tpuwizard.tui.widgets.checks_panel import ChecksPanel
from tpuwizard.tui.widgets.follow_log import FollowLog
from tpuwizard.words.event_text import describe
from tpuwizard.words.summary_text import summary_lines

HOSTILE = "\x1b]0;pwned\x07title \x1b[2Jclear \rforged"
SHOWN = "^[]0;pwned^Gtitle ^[[2Jclear ^Mforged"
NAME = "files/a\x1b[31mred\nx.txt"
NAME_SHOWN = "files/a^[[31mred^Jx.txt"


def harmless(text: str) -> bool:
    """No character that acts on a terminal (tabs aside)."""
    return all(c == "\t" or (c.isprintable() and c not in "\u202e\u2066") for c in text)


@pytest.mark.parametrize(
    "raw, shown",
    [
        (HOSTILE, SHOWN),
        ("bell\x07 nul\x00 del\x7f", "bell^G nul^@ del^?"),
        ("c1 \x9b2J", "c1 M-^[2J"),
        ("evil\u202etxt.exe", "evil<U+202E>txt.exe"),
        ("tab\tkept, ünïcode kept", "tab\tkept, ünïcode kept"),
    ],
)
def test_control_characters_are_shown_as_cat_v_shows_them(raw, shown):
    assert visible(raw) == shown
    assert visible(shown) == shown  # shown twice is shown once


def test_only_colour_escapes_are_taken_out_of_a_printout():
    assert without_sgr("\x1b[1;32mreceipt_sha256\x1b[0m: ab") == "receipt_sha256: ab"
    assert without_sgr("\x1b[38;5;208mx\x1b[m") == "x"
    assert without_sgr("\x1b]0;t\x07x") == "\x1b]0;t\x07x"


@pytest.mark.parametrize(
    "event",
    [
        ev.ScriptLine(0, HOSTILE),
        ev.VerifierLine(1, HOSTILE, 2),
        ev.BootstrapLine(0, HOSTILE),
    ],
    ids=["script", "verifier", "bootstrap"],
)
def test_every_worker_line_is_harmless_in_the_event_lines(event):
    (line,) = describe(event)
    assert SHOWN in line and harmless(line)


def test_fetched_file_names_are_harmless():
    assert describe(ev.FileFetched(NAME)) == [f"Copied back {NAME_SHOWN}"]
    (line,) = describe(ev.FileNotFetched(NAME, "a link \x1b[2J"))
    assert harmless(line) and "^[[2J" in line


def test_the_summary_shows_the_scripts_last_lines_and_file_names_harmlessly():
    summary = RunSummary(name="n", script_ran=True, script_exit_code=0)
    summary.script_tail.append(HOSTILE)
    summary.fetched.append(NAME)
    lines = summary_lines(summary)
    assert all(harmless(line) for line in lines)
    assert any(SHOWN in line for line in lines) and any(NAME_SHOWN in line for line in lines)


def test_plain_mode_prints_the_workers_lines_harmlessly():
    printed: list[str] = []
    stream = [ev.ScriptLine(0, HOSTILE), ev.FileFetched(NAME), ev.Finished(True, 0, "r", None)]
    # A launch that has ended by the time its events are read: nothing to stop or wait for.
    handle = SimpleNamespace(
        events=lambda: iter(stream),
        summary=RunSummary(),
        stop_and_wait=lambda: None,
        handed_over=None,  # nothing was kept: a stop would delete
    )
    wizard = PlainWizard(echo=printed.append)
    wizard.say_kept = lambda: None  # type: ignore[method-assign]  # no ledger here
    assert wizard.launch(handle) == 0  # type: ignore[arg-type]
    assert all(harmless(line) for line in printed)
    assert SHOWN in printed and f"Copied back {NAME_SHOWN}" in printed


class Logs(App[None]):
    def compose(self) -> ComposeResult:
        yield FollowLog(id="log")
        yield ChecksPanel()


async def test_the_wizards_log_and_checks_show_worker_text_harmlessly():
    app = Logs()
    async with app.run_test() as pilot:
        log = app.query_one(FollowLog)
        log.write_lines([HOSTILE])
        app.query_one(ChecksPanel).record("numeric\x1b[2J", False, "[b]x[/b]\x07", "numeric")
        await pilot.pause()
        assert log.lines == [SHOWN]
        shown = str(app.query_one(ChecksPanel).render())
        assert "numeric^[[2J" in shown and "[b]x[/b]^G" in shown
        assert all(harmless(line) for line in shown.splitlines())


def test_the_clis_own_words_show_what_a_file_said_harmlessly(tmp_path):
    # A chain (or receipt) is written by the worker's side: `receipt check` repeats its fields.
    from click.testing import CliRunner

    from tpuwizard.cli import main
    from tpuwizard.core.evidence.chain import ChainEntry, append_entry

    entry = ChainEntry(1, "us-central1-a", HOSTILE, 1.0, 2.0, "finished", None, 0, None, None)
    append_entry(tmp_path, "r1", entry)
    result = CliRunner().invoke(main, ["receipt", "check", str(tmp_path / "chain.json")])
    assert result.exit_code == 0, result.output
    assert SHOWN in result.stdout and all(harmless(line) for line in result.output.splitlines())
