"""Reading a ledger looks for held lines (tests/unit/test_ledger_held.py) without tempfile or
hashlib where none is held: every command reads the ledger at its end (issue 54, item 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tpuwizard.core.launch.records import ledger_file
from tpuwizard.core.launch.records.ledger_file import nothing_held_anywhere

FOLDER = f"tpuwizard-{os.getuid()}"


@pytest.fixture
def places(tmp_path, monkeypatch):
    """Every place the system's temporary folder can be, under ``tmp_path``, and tempfile not
    yet loaded (as at a command's start): {name: folder}."""
    named = {name: tmp_path / name for name in ("env", "fixed", "cwd")}
    for folder in named.values():
        folder.mkdir()
    for name in ledger_file.TEMP_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TMPDIR", str(named["env"]))
    monkeypatch.setattr(ledger_file, "TEMP_FOLDERS", (str(named["fixed"]),))
    monkeypatch.chdir(named["cwd"])
    monkeypatch.delitem(sys.modules, "tempfile")
    return named


HELD = "ledger.jsonl.0123456789abcdef.held"  # a held file's name, its digest made up


@pytest.mark.parametrize(
    ("where", "what", "nothing_held"),
    [
        (None, None, True),  # no fallback folder anywhere: nothing can be held
        ("fixed", "empty folder", True),  # its lines all moved into their ledgers since
        ("fixed", "another ledger's", True),  # a Kaggle ledger's held file
        ("env", "held", False),  # under $TMPDIR
        ("fixed", "held", False),  # under /tmp and its like
        ("cwd", "held", False),  # tempfile's last resort, the working folder
        ("fixed", "link", False),  # a link to a folder holding one: tempfile is asked, and
        # _private then refuses the link
        ("env", "file", True),  # a file of the folder's name holds nothing
    ],
)
def test_a_held_file_in_any_place_tempfile_can_answer_is_looked_for(
    places, tmp_path, where, what, nothing_held
):
    if where is not None:
        folder = places[where] / FOLDER
        if what == "link":
            (tmp_path / "elsewhere").mkdir()
            (tmp_path / "elsewhere" / HELD).write_text("")
            folder.symlink_to(tmp_path / "elsewhere")
        elif what == "file":
            folder.write_text("")
        else:
            folder.mkdir()
            held = {"held": HELD, "another ledger's": f"kaggle-{HELD}"}.get(what)
            if held:
                (folder / held).write_text("")
    assert nothing_held_anywhere("ledger.jsonl") is nothing_held


def test_once_tempfile_is_loaded_its_own_answer_is_used(places, monkeypatch):
    import tempfile

    monkeypatch.setitem(sys.modules, "tempfile", tempfile)
    assert nothing_held_anywhere("ledger.jsonl") is False


def test_temp_env_names_and_folders_are_tempfiles_own():
    # The places looked at are those tempfile tries, in its order (a private function of
    # tempfile's, read here only to hold this list to it).
    import tempfile

    expected = tempfile._candidate_tempdir_list()  # type: ignore[attr-defined]  # private: no stub
    assert ledger_file._temp_candidates() == expected


# A process writes a line its ledger's disk refuses (held under $TMPDIR), as a command does;
# a fresh process, tempfile not loaded, reads the ledger as every command's end does.
HOLD = """
import errno, sys
from pathlib import Path
from tpuwizard.core.launch.records.ledger import Ledger, Resource
def full(path, data):
    raise OSError(errno.ENOSPC, "No space left on device", str(path))
node = Resource("node", "my-project", "us-central1-a", "tpu-a", "v5litepod-1", "r1")
Ledger(Path(sys.argv[1])).record("intent", node)
Ledger(Path(sys.argv[1]), append=full).record("kept", node)
"""
READ = """
import json, sys
from pathlib import Path
from tpuwizard.core.launch.records import ledger_file
ledger_file.TEMP_FOLDERS = ()  # this machine's /tmp may hold a fallback folder of its own
from tpuwizard.core.launch.records.ledger import Ledger
ops = [e.op for e in Ledger(Path(sys.argv[1])).entries()]
print(json.dumps({"ops": ops, "loaded": [m for m in ("tempfile", "hashlib") if m in sys.modules]}))
"""


def read_in_a_fresh_process(path, env, cwd):
    done = subprocess.run(
        [sys.executable, "-c", READ, str(path)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=cwd,
    )
    return json.loads(done.stdout)


def test_a_held_line_is_read_by_the_next_command_and_none_costs_no_lookup(tmp_path):
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    for name in ledger_file.TEMP_ENV[1:]:
        env.pop(name, None)
    path = tmp_path / "home" / "ledger.jsonl"
    path.parent.mkdir()
    args = {"env": env, "cwd": tmp_path}
    assert read_in_a_fresh_process(path, **args) == {"ops": [], "loaded": []}
    subprocess.run([sys.executable, "-c", HOLD, str(path)], check=True, **args)
    held = list((tmp_path / "tmp" / FOLDER).glob("ledger.jsonl.*.held"))
    assert len(held) == 1  # held: the disk refused it
    # Read with the held line (the disk takes it now, so the read moves it into the ledger).
    assert read_in_a_fresh_process(path, **args) == {
        "ops": ["kept"],
        "loaded": ["tempfile", "hashlib"],
    }
    assert not held[0].exists()
    # The folder stays, empty: the next read asks neither again.
    assert read_in_a_fresh_process(path, **args) == {"ops": ["kept"], "loaded": []}
