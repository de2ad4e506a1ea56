"""The ``tpuwizard`` command's entry: the wizard straight away when it is asked for on a terminal
(``tpuwizard``, ``tpuwizard --sandbox``), everything else through the command line's parser
(:mod:`tpuwizard.cli`).

Why not always the parser: click and the command tree cost the wizard's first frame about 0.07x
of a bare Textual app's start (issue 38: the first frame through the command at most 1.3x), and
for these two command lines the parser has nothing to decide. What it would do for them is done
here the same way: output to a gone terminal dropped, then the wizard, its exit code the
command's. Without a terminal, or with anything else on the line (``--plain``, ``--help``, a
command), the parser answers as before.
"""

from __future__ import annotations

import sys

# The command lines that mean "the wizard" and nothing else, and whether each is practice.
WIZARD_LINES = {(): False, ("--sandbox",): True}


def run() -> None:
    """The ``tpuwizard`` console script (and ``python -m tpuwizard``)."""
    line = tuple(sys.argv[1:])
    if line in WIZARD_LINES and sys.stdin.isatty() and sys.stdout.isatty():
        from tpuwizard.session.gone_terminal import drop_output_to_gone_terminals
        from tpuwizard.tui.app import run_wizard

        drop_output_to_gone_terminals()
        sys.exit(run_wizard(WIZARD_LINES[line]))
    from tpuwizard.session.collector import hold_during_start

    hold_during_start()  # until the command's module is loaded: see session/collector.py
    from tpuwizard.session.dataclass_code import keep_during_command

    keep_during_command()  # the dataclasses' methods, compiled by an earlier start
    from tpuwizard.cli import main

    main()
