"""The watch loop: run, then wait for a save (debounced), run again; Ctrl+C ends it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tpuwizard.commands.common import say

if TYPE_CHECKING:
    from tpuwizard.core.cancel import CancelToken
    from tpuwizard.core.remote.sync import LocalFolder
    from tpuwizard.session.kept.nodes import KeptNode

POLL_S = 0.1  # how often the folder is looked at; a stat per file, hashes only for saved ones


def watch_loop(
    kept: KeptNode,
    script: Path,
    run_once: Callable[[LocalFolder, CancelToken], int],
    debounce: float,
) -> int | None:
    """Run now and after every save until Ctrl+C, SIGTERM or SIGHUP (which also stop a running
    script); returns the signal that ended it."""
    from tpuwizard.core.remote.sync import LocalFolder
    from tpuwizard.session.signals import StopScriptOnSignals

    folder = LocalFolder.of_script(script)
    with (
        # Not absorbed after the watch: Ctrl+C must reach the question that may follow.
        StopScriptOnSignals(say, "ending the watch (the node stays).", absorb_after=False) as stop,
        kept.keep_alive(say),  # heartbeats while watching, not only while running
    ):
        while not stop.ended.is_set():
            seen = folder.manifest()
            run_once(folder, stop.next_run())
            if stop.ended.is_set():
                break
            say(f"watching {folder.root} for saves (Ctrl+C ends the watch)")
            _wait_for_save(folder, seen, debounce, stop.ended)
    return stop.first


def _wait_for_save(
    folder: LocalFolder, seen: dict, debounce: float, ended: threading.Event
) -> None:
    """Return once the folder differs from ``seen`` and has been quiet for ``debounce`` s."""
    while not ended.wait(POLL_S):
        now = folder.manifest()
        if now == seen:
            continue
        # An editor writes in bursts (temp file, rename, a second save): wait for quiet.
        while not ended.wait(debounce):
            later = folder.manifest()
            if later == now:
                return
            now = later
