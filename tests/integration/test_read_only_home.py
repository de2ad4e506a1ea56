"""A read-only TPUWIZARD_HOME (issue 56, item 8): `status` still lists what exists and `down`
still deletes it and verifies it gone, holding the ledger's record in a folder of this user's
alone under the temporary folder, and saying so; the first command whose disk takes the record
again moves it into the ledger.

The home is made read-only for the command's own process by a real read-only mount (a bind
mount remounted ``ro`` in a mount namespace of its own, ``unshare -rm``), which refuses writes
as root too, where ``chmod`` does not. Where this machine allows no such namespace, the test is
skipped: there is no other way to show it. The practice cloud is a `sandbox serve` outside the
home (a read-only home cannot hold the practice sandbox's own state)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.iterate_helpers import up
from tests.integration.launch_helpers import env
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread

pytestmark = pytest.mark.rotating("kept-node-e2e")

TOKEN = "read-only-home-token"
# Run the command with $1 mounted read-only: its own mount namespace, nothing else changes.
READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def read_only_mounts() -> bool:
    """This machine lets a process mount a folder read-only in a namespace of its own."""
    if shutil.which("unshare") is None:
        return False
    probe = Path(__file__).parent  # any folder: the mount is gone with the namespace
    try:
        proc = subprocess.run(
            ["unshare", "-rm", "sh", "-c", READ_ONLY, "sh", str(probe), "true"],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


@pytest.fixture
def served(tmp_path):
    """A practice cloud outside the home, as `sandbox serve` gives one; the commands' settings."""
    if not read_only_mounts():
        pytest.skip("this machine allows no read-only mount in a namespace of its own")
    server = make_server(tmp_path / "serve", delay=0.3, token=TOKEN)
    start_in_thread(server)
    (tmp_path / "tmp").mkdir()
    yield {
        "TPUWIZARD_TPU_ENDPOINT": server.endpoint,
        "TPUWIZARD_SANDBOX_TOKEN": TOKEN,
        "TMPDIR": str(tmp_path / "tmp"),
    }
    server.shutdown()
    server.server_close()


def cli_read_only(home: Path, cwd: Path, extra: dict[str, str], *args: str):
    """Run ``tpuwizard ARGS`` with ``home`` mounted read-only for it alone."""
    argv = ["unshare", "-rm", "sh", "-c", READ_ONLY, "sh", str(home), *tpuwizard_cmd(*args)]
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=240, env=env(**extra)
    )


def ledger_ops(home: Path) -> list[str]:
    lines = (home / "sandbox" / "ledger.jsonl").read_text().splitlines()
    return [json.loads(line)["op"] for line in lines if line.strip()]


def test_status_and_down_list_and_delete_from_a_read_only_home(tmp_path, home, served):
    kept = up(tmp_path, "--name", "ro1", **served)
    assert kept["name"] == "ro1"
    before = ledger_ops(home)

    shown = cli_read_only(home, tmp_path, served, "status", "--sandbox", "--json")
    assert shown.returncode == 0, shown.stderr
    assert [k["name"] for k in json.loads(shown.stdout)["kept"]] == ["ro1"]
    said = " ".join(shown.stderr.split())
    assert f"{home} is read-only" in said, said
    # The refused zone's note cannot be remembered in a read-only home: at most once a run,
    # never "Said once" (issue 56). A second run says it again, as its words promise.
    for run in (shown, cli_read_only(home, tmp_path, served, "status", "--sandbox")):
        said = " ".join(run.stderr.split())
        assert said.count("Not searched: europe-west1-b.") == 1, said  # the sandbox refuses it
        assert "Said once" not in said and "Not noted as said" in said, said

    down = cli_read_only(home, tmp_path, served, "down", "ro1", "--yes", "--sandbox")
    said = " ".join(down.stderr.split())
    assert down.returncode == 0, said
    assert "verified gone" in said and f"{home} is read-only" in said, said
    assert "could not record" in said and ".held" in said, said  # where its record waits
    assert ledger_ops(home) == before  # nothing written into the read-only home...
    held = list((tmp_path / "tmp").glob("tpuwizard-*/*.held"))
    assert held, said  # ...its record is held

    after = subprocess.run(  # writable again: the held record moves in, nothing is left
        tpuwizard_cmd("status", "--sandbox", "--json"),
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env(**served),
    )  # fmt: skip
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["kept"] == []
    assert ledger_ops(home)[-1] == "gone"
