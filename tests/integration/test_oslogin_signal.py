"""A stop signal the moment tpuwizard's key lands in the OS Login profile (the launch's first
call under OS Login, before any create), over a real sshd: the launch exits 128 + the signal,
whatever it made (if its create had begun) is deleted and verified gone, and the key it
imported is not left behind in the profile. test_oslogin_launch.py is the launch that is not
stopped."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import (
    ZONE,
    env,
    ledger_all_gone,
    sandbox_is_empty,
    status,
)
from tests.integration.signal_drill import stop_at
from tpuwizard.session.login import PRACTICE_ACCOUNT


def profile_keys(home: Path) -> dict:
    path = home / "sandbox" / "state.json"
    state = json.loads(path.read_text()) if path.exists() else {}
    return state.get("oslogin", {}).get(PRACTICE_ACCOUNT, {})


def test_a_stop_once_the_key_is_imported_leaves_no_key_and_nothing_billing(sshd, tmp_path, home):
    extra = {
        "TPUWIZARD_SANDBOX_FAULTS": "oslogin=1",
        "TPUWIZARD_SANDBOX_SSH_PORT": str(sshd.port),
        "TPUWIZARD_SANDBOX_AUTHORIZED_KEYS": str(sshd.authorized_keys),
        "TPUWIZARD_SANDBOX_DELAY": "0.05",
    }
    argv = tpuwizard_cmd(
        "launch", "--sandbox", "--json", "--zone", ZONE, "--accelerator", "v5litepod-1"
    )
    stopped = stop_at(
        argv,
        tmp_path,
        env(**extra),
        lambda stream, line: False,  # the point is on disk: the profile holds the key
        signal.SIGINT,
        on_disk=lambda: bool(profile_keys(home)),
    )
    said = [text for stream, text in stopped.lines if stream == "err"]
    assert stopped.reached and stopped.code == 128 + signal.SIGINT, said[-5:]
    events = [json.loads(text) for stream, text in stopped.lines if stream == "out"]
    kinds = [e["event"] for e in events]
    assert kinds[-1] == "finished" and events[-1]["exit_code"] == 128 + signal.SIGINT
    # Made or not (the create may have begun), nothing is left, and only then the key goes.
    made = kinds.count("resource_exists")
    assert kinds.count("teardown_verified") == made
    (forgotten,) = [e for e in events if e["event"] == "login_key_forgotten"]
    assert forgotten["problem"] is None
    assert kinds.index("login_key_forgotten") > max(
        (i for i, kind in enumerate(kinds) if kind == "teardown_verified"), default=-1
    )
    assert profile_keys(home) == {}
    assert sshd.authorized_keys.read_text() == ""
    assert status(tmp_path, **extra) == []
    assert sandbox_is_empty(home) and ledger_all_gone(home)
