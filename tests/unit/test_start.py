"""The ``tpuwizard`` command's entry (tpuwizard/start.py): on a terminal, ``tpuwizard`` and
``tpuwizard --sandbox`` start the wizard without loading the command line's parser (its first
frame waits for nothing else, issue 38); every other command line goes through the parser."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# The wizard itself stands in (it records how it was started); stdin and stdout are terminals.
ON_A_TERMINAL = """
import io, json, sys
class Terminal(io.StringIO):
    def isatty(self):
        return True
real_stdout = sys.stdout
sys.argv = ["tpuwizard", *{line!r}]
sys.stdin, sys.stdout = Terminal(), Terminal()
import tpuwizard.tui.app as app
started = []
app.run_wizard = lambda sandbox: started.append(sandbox) or 7
from tpuwizard.start import run
try:
    run()
except SystemExit as done:
    code = done.code
real_stdout.write(json.dumps({{"code": code, "started": started,
                               "click": "click" in sys.modules}}))
"""


@pytest.mark.parametrize(("line", "practice"), [([], False), (["--sandbox"], True)])
def test_the_wizard_starts_without_the_parser(line, practice):
    out = subprocess.run(
        [sys.executable, "-c", ON_A_TERMINAL.format(line=line)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out) == {"code": 7, "started": [practice], "click": False}


def test_without_a_terminal_the_parser_answers_as_before():
    done = subprocess.run(
        [sys.executable, "-m", "tpuwizard", "--sandbox"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "The wizard needs a terminal" in done.stderr


def test_the_console_script_is_this_entry():
    import tomllib

    from tests.conftest import REPO

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"tpuwizard": "tpuwizard.start:run"}
