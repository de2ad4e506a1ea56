"""A ledger record the disk refuses (full, read-only, the path not a file) is held, read with the
others and moved into the ledger once the disk allows; an intent is never held (issue 48, 1)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest

from tpuwizard.core.errors import LedgerUnwritable
from tpuwizard.core.kaggle.ledger import KernelLedger
from tpuwizard.core.launch.records import ledger_file
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.records.ledger_file import append_lines, fallback_folder


def node(name="tpu-a", run_id="run-1"):
    return Resource("node", "practice-project", "us-central1-a", name, "v5litepod-1", run_id)


class Disk:
    """The ledger file's disk, full (ENOSPC) while ``full`` is set; other files are written."""

    def __init__(self) -> None:
        self.full = False

    def __call__(self, path, data):
        if self.full and path.name == "ledger.jsonl":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        append_lines(path, data)


@pytest.fixture
def path(tmp_path):
    return tmp_path / "state" / "ledger.jsonl"


@pytest.fixture
def base(tmp_path):
    (tmp_path / "tmp").mkdir()
    return tmp_path / "tmp"


@pytest.fixture(autouse=True)
def _no_memory_left(monkeypatch):
    """Lines held in memory are this process's: none from one test reaches the next."""
    monkeypatch.setattr(ledger_file, "_IN_MEMORY", {})


def ops(ledger):
    return [(e.resource.name, e.op) for e in ledger.entries()]


def on_file(path):
    return [json.loads(line)["op"] for line in path.read_bytes().splitlines() if line.strip()]


def test_a_full_disk_holds_the_record_in_a_private_file_read_with_the_others(path, base):
    disk = Disk()
    ledger = Ledger(path, base, disk)
    ledger.record("intent", node())
    ledger.record("created", node())
    disk.full = True
    held = ledger.record("kept", node(), deadline=123.0)
    assert held is not None and held.reason == "No space left on device"
    assert held.kept_in is not None and held.kept_in.parent == base / f"tpuwizard-{os.getuid()}"
    assert oct(held.kept_in.parent.stat().st_mode & 0o777) == "0o700"
    assert on_file(path) == ["intent", "created"]  # the ledger itself has not changed
    # Every reader sees it: a fresh Ledger, as the next command opens it, while the disk is full.
    assert ops(Ledger(path, base, disk)) == [("tpu-a", "kept")]
    assert Ledger(path, base, disk).open_entries()[0].extra["deadline"] == 123.0
    assert ledger.record("gone", node()) is not None  # still full: held after the kept one
    assert ops(ledger) == [("tpu-a", "gone")]
    disk.full = False
    assert ops(Ledger(path, base, disk)) == [("tpu-a", "gone")]  # a read moves them in
    assert on_file(path) == ["intent", "created", "kept", "gone"]  # in their order
    assert not held.kept_in.exists()


def test_the_next_record_moves_the_held_ones_in_before_itself(path, base):
    disk = Disk()
    ledger = Ledger(path, base, disk)
    ledger.record("intent", node())
    disk.full = True
    ledger.record("created", node())
    disk.full = False
    assert ledger.record("kept", node()) is None
    assert on_file(path) == ["intent", "created", "kept"]


def test_a_ledger_path_that_is_a_folder_holds_the_record(path, base):
    """A real refusal, as root too: the ledger's path is a folder (EISDIR)."""
    ledger = Ledger(path, base)
    ledger.record("intent", node())
    kept_aside = path.read_bytes()
    path.unlink()
    path.mkdir()
    held = ledger.record("gone", node())
    assert held is not None and held.kept_in is not None
    path.rmdir()
    path.write_bytes(kept_aside)
    assert ops(Ledger(path, base)) == [("tpu-a", "gone")]
    assert on_file(path) == ["intent", "gone"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through a read-only mode")
def test_a_read_only_ledger_holds_the_record(path, base):
    ledger = Ledger(path, base)
    ledger.record("intent", node())
    path.chmod(0o400)
    path.parent.chmod(0o500)
    try:
        held = ledger.record("kept", node())
        assert held is not None and held.kept_in is not None
        assert ops(Ledger(path, base)) == [("tpu-a", "kept")]
    finally:
        path.parent.chmod(0o700)
        path.chmod(0o600)
    assert ops(Ledger(path, base)) == [("tpu-a", "kept")] and on_file(path) == ["intent", "kept"]


def test_a_file_size_limit_cuts_a_half_written_record_back_off(path, tmp_path):
    """A real EFBIG, as root too: the write stops at ``ulimit -f`` part way through the line."""
    Ledger(path).record("intent", node())
    size = path.stat().st_size
    probe = f"""
import resource, sys
from pathlib import Path
from tpuwizard.core.launch.records.ledger import Ledger, Resource
path = Path(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, ({size + 40}, {size + 40}))
held = Ledger(path, Path(sys.argv[2])).record(
    "kept", Resource("node", "practice-project", "us-central1-a", "tpu-a", "v5litepod-1", "run-1")
)
print(held.reason if held else "written")
"""
    (tmp_path / "tmp").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", probe, str(path), str(tmp_path / "tmp")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == os.strerror(errno.EFBIG), done.stderr
    assert path.stat().st_size == size  # no torn line left behind
    assert ops(Ledger(path, tmp_path / "tmp")) == [("tpu-a", "kept")]


def test_an_intent_the_disk_refuses_raises_and_is_held_nowhere(path, base):
    disk = Disk()
    ledger = Ledger(path, base, disk)
    disk.full = True
    with pytest.raises(LedgerUnwritable) as refused:
        ledger.record("intent", node())
    assert refused.value.errno == errno.ENOSPC and refused.value.ledger == str(path)
    assert ledger.entries() == []
    assert not list((base).rglob("*.held")) and ledger_file._IN_MEMORY == {}
    disk.full = False
    assert ledger.entries() == [] and not path.exists()


def test_no_private_folder_holds_it_in_memory_until_the_disk_allows(path, tmp_path):
    not_a_folder = tmp_path / "tmp-file"
    not_a_folder.write_text("")  # the temporary folder's place is a file: no fallback file
    disk = Disk()
    ledger = Ledger(path, not_a_folder, disk)
    ledger.record("intent", node())
    disk.full = True
    held = ledger.record("kept", node())
    assert held is not None and held.kept_in is None
    # Another Ledger of the same file in this process (a command's Kept: lines) sees it.
    assert ops(Ledger(path, not_a_folder, disk)) == [("tpu-a", "kept")]
    disk.full = False
    assert ops(ledger) == [("tpu-a", "kept")] and on_file(path) == ["intent", "kept"]


def test_lines_held_in_memory_go_to_the_fallback_file_before_a_newer_one(path, tmp_path):
    place = tmp_path / "tmp"
    place.write_text("")  # no folder yet: the first line stays in memory
    disk = Disk()
    ledger = Ledger(path, place, disk)
    ledger.record("intent", node())
    disk.full = True
    held = ledger.record("created", node())
    assert held is not None and held.kept_in is None
    place.unlink()
    place.mkdir()  # now there is one: the older line goes there first, then the newer
    held = ledger.record("kept", node())
    assert held is not None and held.kept_in is not None
    disk.full = False
    assert on_file(path)[:1] == ["intent"] and ops(ledger) == [("tpu-a", "kept")]
    assert on_file(path) == ["intent", "created", "kept"]


@pytest.mark.parametrize("kind", ["link", "open to others"])
def test_a_fallback_folder_that_is_not_private_is_never_used(tmp_path, kind):
    folder = tmp_path / f"tpuwizard-{os.getuid()}"
    if kind == "link":
        (tmp_path / "elsewhere").mkdir()
        folder.symlink_to(tmp_path / "elsewhere")
    else:
        folder.mkdir()
        folder.chmod(0o777)
    assert fallback_folder(tmp_path) is None


def test_held_lines_after_a_torn_last_line_stay_apart_from_it(path, base):
    disk = Disk()
    ledger = Ledger(path, base, disk)
    ledger.record("intent", node())
    with open(path, "ab") as f:
        f.write(b'{"op": "created", "torn')  # a crash mid-write
    disk.full = True
    ledger.record("kept", node())
    assert ops(Ledger(path, base, disk)) == [("tpu-a", "kept")]
    disk.full = False
    assert ops(Ledger(path, base, disk)) == [("tpu-a", "kept")]


def test_the_kaggle_ledger_holds_what_it_cannot_write_but_never_an_intent(tmp_path, base):
    path = tmp_path / "kaggle-ledger.jsonl"
    full = [False]

    def disk(p, data):
        if full[0]:
            raise OSError(errno.EROFS, "Read-only file system", str(p))
        append_lines(p, data)

    ledger = KernelLedger(path, base, disk)
    ledger.record("intent", "me/k", "run-1")
    full[0] = True
    held = ledger.record("pushed", "me/k", "run-1", url="u")
    assert held is not None and held.reason == "Read-only file system"
    assert ledger.last_words()[("me/k", "run-1")]["op"] == "pushed"
    assert [d["op"] for d in KernelLedger(path, base, disk).held()] == ["pushed"]
    with pytest.raises(LedgerUnwritable):
        ledger.record("intent", "me/k2", "run-2")
    full[0] = False
    assert set(KernelLedger(path, base, disk).last_words()) == {("me/k", "run-1")}
    assert [json.loads(line)["op"] for line in path.read_text().splitlines()] == [
        "intent",
        "pushed",
    ]
