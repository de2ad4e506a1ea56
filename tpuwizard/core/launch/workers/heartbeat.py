"""Heartbeats to the on-VM watchdog: worker 0's heartbeat file touched now and every interval,
so its idle deadline stays away while a launch's script or a kept node's run goes on (and while
the wizard is open, for every kept node). The watchdog itself, and its file, are watchdog.py's.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

from tpuwizard.core.errors import RemoteError
from tpuwizard.core.launch.workers.watchdog import HEARTBEAT_FILE
from tpuwizard.core.remote.transports import Transport, shell


def send_heartbeat(transport: Transport) -> float:
    """Touch the heartbeat file on worker 0 (the watchdog's); returns when it was sent."""
    sent = time.time()
    result = transport.run(0, shell("touch", HEARTBEAT_FILE), timeout=60, cancellable=False)
    if result.code != 0:
        raise RemoteError(f"worker 0: {result.stderr.strip() or f'exit code {result.code}'}")
    return sent


@contextlib.contextmanager
def heartbeats(
    beat: Callable[[], object], interval: float, on_error: Callable[[str], None]
) -> Iterator[None]:
    """Call ``beat`` now and every ``interval`` seconds until the block ends."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval):
            try:
                beat()
            except Exception as err:  # a missed beat is reported; the run goes on
                on_error(f"heartbeat not sent: {err}")

    beat()
    thread = threading.Thread(target=loop, name="tpuwizard-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def heartbeat_interval(idle_s: float | None) -> float:
    """Often enough that two missed beats still leave time before the idle deadline."""
    return max(1.0, min(60.0, (idle_s or 1800) / 4))
