"""Copying files back: streamed in chunks, verified by size and SHA-256, links never walked.

The worker side runs for real in a local shell (the sandbox's transport); faults on the way are
made by wrapping its command (a stream cut short, a byte changed, a stream gone quiet), and the
short writes a kernel makes on big buffers by the injected ``max_write``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from tpuwizard.core.remote.fetch import (
    FetchFailed,
    FetchLimits,
    FetchOutcome,
    fetch_file,
    fetch_matching,
)
from tpuwizard.core.remote.transports import LocalTransport

PYTHON = sys.executable
SMALL = FetchLimits(chunk=4096, max_write=1000, idle_s=30)


class WrappedTransport(LocalTransport):
    """The sandbox's local shell, with the fetch's stream passed through ``around``."""

    def __init__(self, home: Path, around: str) -> None:
        super().__init__([home])
        self.around = around

    def argv(self, worker: int, command: str) -> list[str]:
        # Only the sender's stream is cut; the listing goes as it is.
        if "changed while it was being copied" not in command:
            return super().argv(worker, command)
        return ["bash", "-c", self.around.format(command=f"( {command}\n)")]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "w0" / "run").mkdir(parents=True)
    return tmp_path / "w0"


def put(home: Path, rel: str, data: bytes) -> Path:
    path = home / "run" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.part"))


def test_short_reads_and_writes_on_both_ends_still_bring_every_byte(home, tmp_path):
    data = os.urandom(300_000)
    put(home, "out/model.bin", data)
    target = tmp_path / "dest" / "out" / "model.bin"
    # Each write takes at most 1000 bytes, as a kernel takes at most ~2 GiB of a bigger one.
    size = fetch_file(LocalTransport([home]), 0, "run", PYTHON, "out/model.bin", target, SMALL)
    assert size == len(data) and target.read_bytes() == data
    assert leftovers(tmp_path / "dest") == []


def test_a_stream_cut_short_leaves_nothing_at_the_destination(home, tmp_path):
    put(home, "model.bin", os.urandom(300_000))
    target = tmp_path / "dest" / "model.bin"
    target.parent.mkdir()
    target.write_bytes(b"an older copy")  # not what the worker holds now: it goes too
    cut = WrappedTransport(home, "{command} | head -c 5000")
    with pytest.raises(FetchFailed, match=r"cut short: .* of 300000 bytes arrived"):
        fetch_file(cut, 0, "run", PYTHON, "model.bin", target, SMALL)
    assert not target.exists() and leftovers(tmp_path / "dest") == []


def test_a_changed_byte_fails_the_sha256_and_nothing_is_kept(home, tmp_path):
    put(home, "model.bin", b"a" * 10_000)
    flip = (
        "{command} | python3 -c \"import sys; d = sys.stdin.buffer.read(); i = d.index(b'aaaa');"
        " sys.stdout.buffer.write(d[:i] + b'b' + d[i + 1:])\""
    )
    target = tmp_path / "dest" / "model.bin"
    with pytest.raises(FetchFailed, match="SHA-256 differs"):
        fetch_file(WrappedTransport(home, flip), 0, "run", PYTHON, "model.bin", target, SMALL)
    assert not target.exists() and leftovers(tmp_path / "dest") == []


def test_more_bytes_than_announced_are_refused(home, tmp_path):
    put(home, "model.bin", b"x" * 100)
    extra = WrappedTransport(home, "{command}; printf more")
    with pytest.raises(FetchFailed, match="more than the 100 bytes"):
        fetch_file(extra, 0, "run", PYTHON, "model.bin", tmp_path / "model.bin", SMALL)
    assert not (tmp_path / "model.bin").exists()


def test_a_stream_gone_quiet_is_given_up_after_the_idle_time(home, tmp_path):
    put(home, "model.bin", b"x" * 100_000)
    quiet = WrappedTransport(home, "{command} | head -c 2000; sleep 60")
    limits = FetchLimits(chunk=4096, idle_s=1)
    with pytest.raises(FetchFailed, match="no data came for 1 s"):
        fetch_file(quiet, 0, "run", PYTHON, "model.bin", tmp_path / "model.bin", limits)
    assert not (tmp_path / "model.bin").exists()


def test_what_the_worker_side_says_is_the_reason(home, tmp_path):
    with pytest.raises(FetchFailed, match=r"exited 1 before sending: .*No such file"):
        fetch_file(LocalTransport([home]), 0, "run", PYTHON, "gone.bin", tmp_path / "g", SMALL)
    os.symlink("/etc/hostname", home / "run" / "sneaky")  # made a link after it was listed
    with pytest.raises(FetchFailed, match="outside the folder"):
        fetch_file(LocalTransport([home]), 0, "run", PYTHON, "sneaky", tmp_path / "s", SMALL)


def test_a_link_to_etc_is_reported_once_and_never_walked(home, tmp_path):
    put(home, "out/a.txt", b"a")
    put(home, "out/deep/b.txt", b"b")
    put(home, ".hidden/c.txt", b"c")  # glob's rule: '**' does not match names starting with '.'
    os.symlink("/etc", home / "run" / "etc")
    os.symlink("/etc", home / "run" / "out" / "etc")
    os.symlink(".", home / "run" / "out" / "loop")  # inside the folder, and a cycle
    outcomes: list[FetchOutcome] = []
    fetch_matching(
        LocalTransport([home]), "run", PYTHON, ["**"], tmp_path / "dest", outcomes.append
    )
    kinds = {o.rel: (o.local is not None, o.reason) for o in outcomes}
    assert kinds == {
        "etc": (False, "not a regular file (link outside the folder)"),
        "out/a.txt": (True, ""),
        "out/deep/b.txt": (True, ""),
        "out/etc": (False, "not a regular file (link outside the folder)"),
        "out/loop": (False, "not a regular file (link to a folder, not followed)"),
    }
    assert not any(o.incomplete for o in outcomes)  # nothing that should have come back failed
    assert (tmp_path / "dest" / "out" / "deep" / "b.txt").read_bytes() == b"b"


def test_a_link_in_the_middle_of_a_pattern_is_not_walked_either(home, tmp_path):
    os.symlink("/etc", home / "run" / "conf")
    outcomes: list[FetchOutcome] = []
    patterns = ["conf/*", "*/passwd", "conf/hostname"]
    fetch_matching(LocalTransport([home]), "run", PYTHON, patterns, tmp_path / "d", outcomes.append)
    assert [(o.rel, o.reason) for o in outcomes] == [
        ("conf", "not a regular file (link outside the folder)")
    ]


def test_a_file_that_broke_off_is_incomplete_and_costs_no_other(home, tmp_path):
    put(home, "a.txt", b"a" * 100)
    put(home, "big.bin", b"b" * 50_000)
    os.symlink("/nonexistent", home / "run" / "dangling.bin")
    # The stream of any file over 1000 bytes is cut short.
    cut = WrappedTransport(home, "{command} | head -c 1000")
    outcomes: list[FetchOutcome] = []
    fetch_matching(cut, "run", PYTHON, ["*"], tmp_path / "dest", outcomes.append, limits=SMALL)
    by_rel = {o.rel: o for o in outcomes}
    assert by_rel["a.txt"].local and Path(by_rel["a.txt"].local).read_bytes() == b"a" * 100
    assert by_rel["big.bin"].incomplete and "cut short" in by_rel["big.bin"].reason
    assert not by_rel["dangling.bin"].incomplete  # reported, but not a file that failed
    assert not (tmp_path / "dest" / "big.bin").exists()


def test_sha256_of_what_arrived_matches_for_an_empty_file_too(home, tmp_path):
    put(home, "empty", b"")
    target = tmp_path / "empty"
    assert fetch_file(LocalTransport([home]), 0, "run", PYTHON, "empty", target) == 0
    assert hashlib.sha256(target.read_bytes()).hexdigest() == hashlib.sha256(b"").hexdigest()
