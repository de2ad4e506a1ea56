"""A practice launch on a project with OS Login on, over a real sshd: the VM ignores the
``ssh-keys`` metadata, so the launch succeeds only because tpuwizard imported its key into the
OS Login profile and logged in as the POSIX user that answered; after the verified teardown the
key is gone from the profile."""

import json
import os
from pathlib import Path

from tests.integration.launch_helpers import launch, ledger_all_gone, sandbox_is_empty


def test_a_launch_under_os_login_imports_its_key_and_deletes_it_after_teardown(sshd, tmp_path):
    home = Path(os.environ["TPUWIZARD_HOME"])
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-4",
        TPUWIZARD_SANDBOX_FAULTS="oslogin=1",
        TPUWIZARD_SANDBOX_SSH_PORT=str(sshd.port),
        TPUWIZARD_SANDBOX_AUTHORIZED_KEYS=str(sshd.authorized_keys),
    )
    assert code == 0, stderr
    assert "tpuwizard imports its SSH key into your OS Login profile" in stderr
    assert any(e["event"] == "receipt_saved" and e["ok"] for e in events)
    names = [e["event"] for e in events]
    assert names.index("teardown_verified") < names.index("login_key_forgotten")
    (forgotten,) = [e for e in events if e["event"] == "login_key_forgotten"]
    assert forgotten["problem"] is None
    state = json.loads((home / "sandbox" / "state.json").read_text())
    profiles = state.get("oslogin", {})
    assert profiles and all(keys == {} for keys in profiles.values())  # imported, then deleted
    assert sandbox_is_empty(home) and ledger_all_gone(home)
    assert sshd.authorized_keys.read_text() == ""


def test_a_practice_launch_without_sshd_promises_no_key_under_os_login(tmp_path):
    """Without an OpenSSH server, practice reaches its workers through a local shell: nothing
    logs in, so the preflight says no key is imported (it used to promise an import), no key
    reaches the OS Login profile, and there is none to delete after teardown."""
    home = Path(os.environ["TPUWIZARD_HOME"])
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", TPUWIZARD_SANDBOX_FAULTS="oslogin=1"
    )
    assert code == 0, stderr
    said = stderr + json.dumps(events)
    assert "imports its SSH key" not in said
    assert "local shell, not SSH, so no key is imported" in said
    assert not [e for e in events if e["event"] == "login_key_forgotten"]
    state = json.loads((home / "sandbox" / "state.json").read_text())
    assert all(keys == {} for keys in state.get("oslogin", {}).values())  # none was imported
    assert sandbox_is_empty(home) and ledger_all_gone(home)
