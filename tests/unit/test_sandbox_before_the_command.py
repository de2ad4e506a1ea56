"""`tpuwizard --sandbox COMMAND` is practice, as `tpuwizard COMMAND --sandbox` is: `--help` lists
`--sandbox` among the main options, and a user with Google credentials who typed it first once
got a real session (a real launch would have billed)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from tpuwizard.cli import COMMANDS, main
from tpuwizard.session.session import Session


class Opened(Exception):
    pass


@pytest.fixture
def asked(monkeypatch) -> list[bool]:
    """The `sandbox` each command opened its session with (the session is never made)."""
    seen: list[bool] = []

    def open_(cls, project=None, sandbox=False, runs=None):
        seen.append(sandbox)
        raise Opened

    monkeypatch.setattr(Session, "open", classmethod(open_))
    return seen


def takes_sandbox(name: str) -> bool:
    command = main.get_command(click.Context(main), name)
    assert command is not None, name
    return any(p.name == "sandbox" for p in command.params)


COMMAND_LINES = {
    "status": [],
    "teardown": ["--all", "--yes"],
    "down": ["--yes"],
    "launch": ["--accelerator", "v5litepod-1", "--zone", "us-central1-a"],
    "up": ["--accelerator", "v5litepod-1", "--zone", "us-central1-a"],
    "run": ["train.py"],
}


def test_every_command_that_opens_a_session_is_among_those_tried():
    openers = {name for name in COMMANDS if takes_sandbox(name)}
    assert set(COMMAND_LINES) <= openers
    # The others with --sandbox read no session here by these lines (zones, preflight, fit,
    # watch, ssh): their flag reaches them the same way, by click's default map.


@pytest.mark.parametrize("name", sorted(COMMAND_LINES))
def test_sandbox_before_the_command_is_the_commands_own(home, tmp_path, monkeypatch, asked, name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    CliRunner().invoke(main, ["--sandbox", name, *COMMAND_LINES[name]])
    assert asked == [True], name
    asked.clear()
    CliRunner().invoke(main, [name, *COMMAND_LINES[name]])
    assert asked == [False], name  # without it, the command decides as before
