"""The garbage collector while a command line starts.

A command's start imports some 150 modules, and the classes, functions and constants made on the
way live until the process ends: collecting among them finds nothing, yet the collector walks
them each time enough objects have been made, and all of them once more as the process exits
(about a tenth of ``tpuwizard fit 48 --json``'s instructions, counted with callgrind; issue 54).
So the entry holds collections off while the parser and the command's module are imported, then
moves what exists by then out of the collector's sight (``gc.freeze``) and lets it run again:
what the command itself makes is collected, and finalized at exit, as before.
"""

from __future__ import annotations

import gc

_HELD: list[bool] = []  # one entry while collections are held off by hold_during_start


def hold_during_start() -> None:
    """The entry's first step for a command line: no collection until collect_from_here()."""
    gc.disable()
    _HELD.append(True)


def collect_from_here() -> None:
    """Once the command's module is loaded: what exists now is set aside for good, and the
    collector runs again. Nothing changes where hold_during_start() did not run (a test that
    calls the parser in its own process keeps its collector as it was)."""
    if _HELD:
        _HELD.clear()
        gc.freeze()
        gc.enable()
