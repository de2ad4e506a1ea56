"""One folder synced three times and checked on the worker: what rsync and the tar must do."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tpuwizard.core.remote.sync import (
    RSYNC_FROM_BYTES,
    WORK_DIR,
    LocalFolder,
    SyncResult,
    sync_folder,
)
from tpuwizard.core.remote.transports import Transport

# What the tar path runs on a worker: a PATH of only these has no rsync.
TOOLS = ("bash", "sh", "mkdir", "cat", "tar", "env", "rm", "mv", "chmod", "touch")


def needs_rsync() -> None:
    if shutil.which("rsync") is None:
        pytest.skip("rsync is not installed here (scripts/install-sshd.sh installs it)")


def worker_home(folder: Path) -> Path:
    """A worker home with a bootstrapped venv's python (this interpreter)."""
    (folder / ".tpuwizard" / "venv" / "bin").mkdir(parents=True)
    (folder / ".tpuwizard" / "venv" / "bin" / "python").symlink_to(sys.executable)
    return folder


def path_without_rsync(folder: Path) -> str:
    """A PATH holding the tools a worker needs for the tar path, and no rsync."""
    folder.mkdir(parents=True)
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (folder / tool).symlink_to(found)
    assert shutil.which("rsync", path=str(folder)) is None
    return str(folder)


def sync_three_times(transport: Transport, home: Path, src: Path, method: str) -> list[str]:
    """Sync, edit one file and delete another, sync, sync again; check the worker each time.

    Returns every itemized line rsync reported (empty for the tar path). rsync is asked for
    however small the change (``rsync_from_bytes=0``): this checks what each way does.
    """
    (src / "pkg").mkdir(parents=True)
    (src / "train.py").write_text("print(1)\n")
    (src / "pkg" / "model.py").write_text("W = 2\n")
    (src / "data.txt").write_text("d" * 5000)
    (src / "odd name; $(rm -rf ~).txt").write_text("quoted, never run\n")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "x.pyc").write_bytes(b"skip")
    folder = LocalFolder(src)
    remote = home / WORK_DIR

    first = sync_folder(transport, 0, folder, rsync_from_bytes=0)
    assert first.method == method, first.why_not_rsync
    assert sorted(first.changed) == sorted(
        ["train.py", "pkg/model.py", "data.txt", "odd name; $(rm -rf ~).txt"]
    )
    assert (remote / "pkg" / "model.py").read_text() == "W = 2\n"
    assert (remote / "odd name; $(rm -rf ~).txt").exists()
    assert not (remote / "__pycache__").exists()
    (remote / "out.txt").write_text("written by the script on the worker")
    before = os.stat(remote / "data.txt")

    (src / "pkg" / "model.py").write_text("W = 3\n")
    (src / "odd name; $(rm -rf ~).txt").unlink()
    second = sync_folder(transport, 0, folder, rsync_from_bytes=0)
    assert second.method == method
    assert second.changed == ["pkg/model.py"] and second.deleted == ["odd name; $(rm -rf ~).txt"]
    assert (remote / "pkg" / "model.py").read_text() == "W = 3\n"
    assert not (remote / "odd name; $(rm -rf ~).txt").exists()  # deleted locally: gone there
    after = os.stat(remote / "data.txt")  # unchanged: not sent again, not even rewritten
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (remote / "out.txt").exists()  # the script's own output is not the copy's to delete

    third = sync_folder(transport, 0, folder, rsync_from_bytes=0)
    assert (third.changed, third.deleted, third.bytes_sent) == ([], [], 0)
    if method == "rsync":  # rsync's own account: each file it sent, and nothing else
        assert [line.split(" ", 1)[1] for line in second.itemized] == ["pkg/model.py"]
        sent = sorted(line.split(" ", 1)[1] for line in first.itemized if line[1] == "f")
        assert sent == sorted(first.changed)
        # '<f' sent to a remote host, '>f' copied on this machine, 'cd' a folder created there
        assert all(line.startswith(("<f", ">f", "cd")) for line in first.itemized)
    else:
        assert first.itemized == second.itemized == []
    return first.itemized + second.itemized


def big_edit_goes_by_rsync(transport: Transport, home: Path, src: Path) -> SyncResult:
    """A first copy and a one-line save go by tar; an edit inside a big file by rsync."""
    src.mkdir()
    weights = bytearray(os.urandom(2 * RSYNC_FROM_BYTES))
    (src / "weights.bin").write_bytes(weights)
    (src / "train.py").write_text("print(1)\n")
    folder = LocalFolder(src)
    first = sync_folder(transport, 0, folder)  # nothing there to diff against
    first_copy = "a first copy: nothing there for rsync to diff against"
    assert (first.method, first.why_not_rsync) == ("tar", first_copy)
    (src / "train.py").write_text("print(2)\n")
    small = sync_folder(transport, 0, folder)  # the usual save: one small file
    assert (small.method, small.changed) == ("tar", ["train.py"])
    assert small.why_not_rsync == "a small change: one tar is quicker"
    (src / "more.bin").write_bytes(os.urandom(RSYNC_FROM_BYTES))  # new: nothing to diff against
    added = sync_folder(transport, 0, folder)
    assert added.why_not_rsync == "new files only: nothing there for rsync to diff against"
    weights[1000:1007] = b"changed"
    (src / "weights.bin").write_bytes(weights)
    big = sync_folder(transport, 0, folder)
    assert (big.method, big.changed) == ("rsync", ["weights.bin"])
    assert (home / WORK_DIR / "weights.bin").read_bytes() == weights
    return big
