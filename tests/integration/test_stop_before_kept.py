"""A stop is a stop until the node is handed over: `up` and `launch --keep` stopped by a signal
while the node is being made delete it, verify it gone and exit 128 + the signal."""

from __future__ import annotations

import signal
import subprocess

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import (
    ZONE,
    env,
    ledger_all_gone,
    ledger_holds,
    sandbox_is_empty,
)
from tests.waiting import wait_until

COMMANDS = {
    "up": ("up", "--sandbox", "--zone", ZONE, "--accelerator", "v5litepod-1"),
    "launch --keep": (
        "launch",
        "--sandbox",
        "--zone",
        ZONE,
        "--accelerator",
        "v5litepod-1",
        "--keep",
    ),
}


@pytest.mark.parametrize(
    ("command", "sig"),
    [("up", signal.SIGTERM), ("launch --keep", signal.SIGHUP)],
)
def test_a_signal_while_a_kept_node_is_made_deletes_it(tmp_path, home, command, sig):
    proc = subprocess.Popen(
        tpuwizard_cmd(*COMMANDS[command]),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(TPUWIZARD_SANDBOX_DELAY="4"),  # long enough to be stopped while CREATING
    )
    try:
        wait_until(lambda: ledger_holds(home, "created") or proc.poll() is not None, 120)
        assert proc.poll() is None, "the command ended before the node was being made"
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, err
    assert "deleting what this run created" in err
    assert not ledger_holds(home, "kept"), "a node stopped before hand-over was kept"
    assert ledger_all_gone(home) and sandbox_is_empty(home), err
