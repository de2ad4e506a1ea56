"""``outcome.json`` in a launch's run folder: how it ended, in the launch's own record, for when
no terminal was left to show it (a closed window stops a launch, which deletes and exits 129)."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.core.cancel import CancelToken
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.events.summary import RunSummary

OUTCOME_FILE = "outcome.json"


def write_outcome(
    run_dir: Path, finished: ev.Finished, summary: RunSummary, cancel: CancelToken
) -> None:
    """What the launch came to: its exit code, what stopped it, what was verified gone and
    what still exists (kept, or not verified gone). A run folder that cannot be written costs
    this file only: the ledger holds what exists, and ``status`` reads it."""
    stopped_by = None
    if cancel.is_set() and not cancel.keep:
        stopped_by = cancel.reason or "stopped"
    record = {
        "exit_code": finished.exit_code,
        "ok": finished.ok,
        "stopped_by": stopped_by,  # "SIGHUP" for a closed terminal; None: it ran its course
        "verified_gone": list(summary.gone),
        "still_existing": list(finished.remaining),
        "kept": [k.name for k in summary.kept],
        "receipt": summary.receipt.path if summary.receipt is not None else None,
        "script_exit_code": summary.script_exit_code,
        "ended_at": time.time(),
    }
    if not run_dir.is_dir():  # the launch ended before it made its folder: nothing to add to
        return
    with contextlib.suppress(OSError):
        part = run_dir / f".{OUTCOME_FILE}.part"
        part.write_text(json.dumps(record, indent=2) + "\n")
        part.replace(run_dir / OUTCOME_FILE)
