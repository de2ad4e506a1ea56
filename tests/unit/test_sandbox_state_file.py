"""The sandbox reads a state file saved by an older tpuwizard, and keeps writing that format.

``data/sandbox_state_9f1c784.json`` was saved by the sandbox at commit 9f1c784, before its state
was split into parts: a READY node, a node being deleted, an ACTIVE Flex-start request whose run
has ended and a spot request whose queueing policy has expired since (it was saved in 2023).
"""

import json
import os
import shutil
from pathlib import Path

import pytest

from tpuwizard.sandbox.faults import parse_faults
from tpuwizard.sandbox.model import EMPTY_TYPE, public
from tpuwizard.sandbox.state import SandboxState

SAVED = Path(__file__).parent / "data" / "sandbox_state_9f1c784.json"
ZONE = "us-central2-b"
KEPT = f"projects/p/locations/{ZONE}/nodes/kept"
GOING = f"projects/p/locations/{ZONE}/nodes/going"
FLEX = "projects/p/locations/us-east5-a/queuedResources/flex"
SPOT = f"projects/p/locations/{ZONE}/queuedResources/spot"
KEPT_CREATE = f"projects/p/locations/{ZONE}/operations/operation-2"
GOING_DELETE = f"projects/p/locations/{ZONE}/operations/operation-7"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A sandbox home holding the old state file."""
    folder = tmp_path / "sandbox"
    folder.mkdir()
    shutil.copy(SAVED, folder / "state.json")
    return folder


def test_what_an_old_state_file_holds_is_answered_as_it_was_stored(home: Path) -> None:
    before = json.loads(SAVED.read_text())
    state = SandboxState(home, parse_faults(""))
    assert state.nodes.get_node("p", ZONE, "kept") == public(before["nodes"][KEPT])
    assert [n["name"] for n in state.nodes.list_nodes("p", ZONE)] == [GOING, KEPT]
    assert state.queued.get_queued("p", "us-east5-a", "flex", "v2alpha1") == public(
        before["queued"][FLEX]
    )
    assert "runDuration" not in state.queued.get_queued("p", "us-east5-a", "flex", "v2")
    assert state.operations.get_operation(KEPT_CREATE) == public(before["operations"][KEPT_CREATE])


def test_an_old_state_file_moves_on_with_the_clock_and_is_saved_in_its_format(
    home: Path, tmp_path: Path
) -> None:
    before = json.loads(SAVED.read_text())
    keys = tmp_path / "authorized_keys"
    state = SandboxState(home, parse_faults(""), authorized_keys=keys)
    with state.store.transaction():
        state.tick()
    text = (home / "state.json").read_text()
    after = json.loads(text)
    assert text == json.dumps(after, indent=1, sort_keys=True)
    assert after.keys() == before.keys()
    assert after["nodes"] == {KEPT: before["nodes"][KEPT]}  # going deleted, Flex-start's run over
    assert after["operations"][GOING_DELETE]["done"] is True
    assert after["operations"][GOING_DELETE]["response"] == {"@type": EMPTY_TYPE}
    assert after["queued"][FLEX]["state"] == {"state": "SUSPENDED", "stateInitiator": "SERVICE"}
    assert after["queued"][SPOT]["state"]["state"] == "FAILED"  # validUntilDuration has passed
    assert keys.read_text() == "ssh-ed25519 AAAAkept tpuwizard\n"

    body = {"acceleratorType": "v4-8", "runtimeVersion": "tpu-ubuntu2204-base"}
    op = state.nodes.create_node("p", ZONE, "next", body, "v2")
    # Ids go on from the saved counter (8): the node takes 9, its operation 10.
    assert op["name"] == f"projects/p/locations/{ZONE}/operations/operation-10"
    assert state.nodes.get_node("p", ZONE, "next")["id"] == "7000000000000000009"


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _endless(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _folder(path: Path) -> None:
    path.mkdir()


def _too_large(path: Path) -> None:
    path.write_text('{"nodes": {}, "queued": {}, "pad": "' + "x" * 2048 + '"}')


def _cut_short(path: Path) -> None:
    path.write_text('{"nodes": {')


@pytest.mark.parametrize(
    ("put", "said"),
    [
        (_fifo, "it is a named pipe (FIFO), not a regular file"),
        (_endless, "it is a character device (such as /dev/zero), not a regular file"),
        (_folder, "it is a folder, not a regular file"),
        (_too_large, "it is larger than 1 KiB"),
        (_cut_short, "it is damaged ("),
    ],
)
def test_a_state_file_that_is_no_small_json_file_is_said_never_read_without_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, put, said
) -> None:
    """Issue 56 (reliability round 6, G7): a FIFO hung status and teardown, /dev/zero grew a
    teardown to 24 GB. Each is refused at once, saying what the file is, and left in place."""
    from tpuwizard.sandbox import store
    from tpuwizard.sandbox.model import ApiError

    monkeypatch.setattr(store, "STATE_LIMIT_BYTES", 1024)
    home = tmp_path / "sandbox"
    home.mkdir()
    put(home / "state.json")
    state = store.StateStore(home)  # a damaged file is said on each request, not at the start
    with pytest.raises(ApiError) as caught, state.transaction():
        pass
    assert caught.value.http == 500 and said in caught.value.message
    assert f"cannot read its state file {home / 'state.json'}" in caught.value.message
    assert "move that file aside" in caught.value.message
    assert (home / "state.json").is_symlink() or (home / "state.json").exists()
