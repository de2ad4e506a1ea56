"""The garbage collector while a command line starts (tpuwizard/session/collector.py): no
collection until the command's module is loaded, then what exists is frozen and the collector
runs again, for the command's own objects (issue 54, item 5)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import pytest

from tpuwizard.session import collector

# The entry as the console script runs it; each collection notes whether the command's module
# was loaded and the start's objects frozen by then.
ENTRY = """
import gc, json, sys
seen, watching = [], []
gc.callbacks.append(lambda phase, info: phase == "start" and watching and seen.append(
    (gc.get_freeze_count() > 0, {module!r} in sys.modules)))
sys.argv = ["tpuwizard", *{line!r}]
# Imported before the watch: a collection while this entry imports them is the interpreter's,
# before the console script's first line (the start holds collections from its own first step).
from tpuwizard.start import run
import tpuwizard.session.collector
watching.append(True)
try:
    run()
except SystemExit as done:
    code = done.code
made = [object() for _ in range(3)]
made.append(made)  # a cycle of the command's own: still collected after the start
before = len(seen)
gc.collect()
print(json.dumps({{"code": code, "seen": seen[:before], "enabled": gc.isenabled(),
                  "collected_later": len(seen) > before}}), file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("line", "module", "code"),
    [
        (["fit", "48", "--json"], "tpuwizard.commands.planning", 0),
        (["zones", "--offline", "--json"], "tpuwizard.commands.zones", 0),
        (["--plain"], "tpuwizard.cli", 2),  # no terminal: its one line, after the callback
    ],
)
def test_no_collection_before_the_command_is_loaded_and_the_collector_runs_after(
    tmp_path, line, module, code
):
    done = subprocess.run(
        [sys.executable, "-c", ENTRY.format(line=line, module=module)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "TPUWIZARD_HOME": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    said = json.loads(done.stderr.strip().splitlines()[-1])
    assert said["code"] == code, done.stderr
    assert said["enabled"] and said["collected_later"]
    # Every collection the command saw came after the freeze, with its module loaded.
    assert all(frozen and loaded for frozen, loaded in said["seen"]), said["seen"]


def test_without_the_entry_nothing_changes(monkeypatch):
    # A test (or a tool) that calls the parser in its own process keeps its collector.
    monkeypatch.setattr(collector, "_HELD", [])
    frozen = gc.get_freeze_count()
    collector.collect_from_here()
    assert gc.isenabled() and gc.get_freeze_count() == frozen
