"""A node kept by `up` on a project with OS Login on, over a real sshd: the VM ignores the
``ssh-keys`` metadata, so `run` gets in only the way `up` chose (recorded in the ledger): with
the key in the OS Login profile, imported again after it was removed, expiring at the kept node's
deadline, as the POSIX user Google names. `down` deletes the key after the verified teardown."""

import json
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest
import requests

from tests.conftest import tpuwizard_cmd
from tests.integration.iterate_helpers import down, up
from tests.integration.launch_helpers import env, ledger_all_gone, sandbox_is_empty
from tpuwizard.session.login import PRACTICE_ACCOUNT


def profile_keys(home: Path) -> dict:
    state = json.loads((home / "sandbox" / "state.json").read_text())
    return state.get("oslogin", {}).get(PRACTICE_ACCOUNT, {})


@pytest.mark.rotating("kept-node-e2e")
def test_run_on_a_node_kept_under_os_login_logs_in_as_up_chose(sshd, tmp_path, home, project):
    ssh = {
        "TPUWIZARD_SANDBOX_SSH_PORT": str(sshd.port),
        "TPUWIZARD_SANDBOX_AUTHORIZED_KEYS": str(sshd.authorized_keys),
        "TPUWIZARD_SANDBOX_DELAY": "0.05",
    }
    kept = up(tmp_path, TPUWIZARD_SANDBOX_FAULTS="oslogin=1", **ssh)
    (entry,) = [
        json.loads(line)
        for line in (home / "sandbox" / "ledger.jsonl").read_text().splitlines()
        if json.loads(line)["op"] == "intent"
    ]
    login = entry["login"]
    assert (login["way"], login["account"]) == ("os-login", PRACTICE_ACCOUNT)
    assert list(profile_keys(home)) == [login["fingerprint"]]

    # The key leaves the profile (removed by hand, or expired): the VM now refuses SSH.
    server = json.loads((home / "sandbox" / "server.json").read_text())
    removed = requests.delete(
        f"{server['endpoint']}/v1/users/{quote(PRACTICE_ACCOUNT)}/sshPublicKeys/"
        f"{login['fingerprint']}",
        headers={"Authorization": f"Bearer {server['token']}"},
        timeout=30,
    )
    assert removed.status_code == 200 and sshd.authorized_keys.read_text() == ""

    script = project / "hello.py"
    script.write_text("print('hello from the kept node')\n")
    ran = subprocess.run(
        tpuwizard_cmd("run", "--sandbox", str(script)),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(TPUWIZARD_SANDBOX_FAULTS="oslogin=1", **ssh),  # each command's own faults
    )
    assert ran.returncode == 0, ran.stderr
    assert "hello from the kept node" in ran.stdout
    (again,) = profile_keys(home).values()  # imported again, until the kept node's deadline
    assert int(again["expirationTimeUsec"]) == int(kept["deadline"] * 1_000_000)

    gone = down(tmp_path, kept["name"])
    (result,) = gone["results"]
    assert result["verified"] and result["login_key_forgotten"]["problem"] is None
    assert profile_keys(home) == {}
    assert sandbox_is_empty(home) and ledger_all_gone(home)
