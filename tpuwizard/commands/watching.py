"""The watch loop: run, then wait for a save (debounced), run again; Ctrl+C ends it."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from tpuwizard.commands.common import say

if TYPE_CHECKING:
    from tpuwizard.core.cancel import CancelToken
    from tpuwizard.core.remote.sync import LocalFolder
    from tpuwizard.session.kept import KeptNode

POLL_S = 0.1  # how often the folder is looked at; a stat per file, hashes only for saved ones


def watch_loop(
    kept: KeptNode,
    script: Path,
    run_once: Callable[[LocalFolder, CancelToken], int],
    debounce: float,
) -> int | None:
    """Run now and after every save until Ctrl+C, SIGTERM or SIGHUP (which also stop a running
    script); returns the signal that ended it."""
    from tpuwizard.core.cancel import CancelToken
    from tpuwizard.core.remote.sync import LocalFolder

    folder = LocalFolder.of_script(script)
    ended = threading.Event()
    current: list[CancelToken] = []
    received: list[int] = []

    def stop(signum: int, _frame: FrameType | None) -> None:
        if not ended.is_set():
            received.append(signum)
            with contextlib.suppress(OSError):  # after SIGHUP there may be no terminal
                say(f"\n{signal.Signals(signum).name}: ending the watch (the node stays).")
        ended.set()
        for token in current:
            token.set(signal.Signals(signum).name)

    stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.signal(s, stop) for s in stops}
    try:
        with kept.keep_alive(say):  # heartbeats while watching, not only while running
            while not ended.is_set():
                seen = folder.manifest()
                token = CancelToken()
                current[:] = [token]
                run_once(folder, token)
                current.clear()
                if ended.is_set():
                    break
                say(f"watching {folder.root} for saves (Ctrl+C ends the watch)")
                _wait_for_save(folder, seen, debounce, ended)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return received[0] if received else None


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
