"""A read-only TPUWIZARD_HOME (issue 56, item 8): refused (exit 2) by every command but those
allowed to work from it (`status`, `down`, `teardown`), which read it where it is; a practice
cloud that would serve from it is refused before it starts. Shown end to end under a real
read-only mount in tests/integration/test_read_only_home.py; here, where this process (often
root, whom chmod does not stop) cannot be refused a write, the access check answers "no"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tpuwizard.core import paths
from tpuwizard.core.errors import BadInput
from tpuwizard.session.ledgers import allow_read_only_home, read_only_home
from tpuwizard.session.session import Session
from tpuwizard.words.session_text import read_only_home_words


@pytest.fixture
def unwritable(home, monkeypatch) -> Path:
    """The home made, then not writable by this process (as a read-only mount answers)."""
    home.mkdir(parents=True, exist_ok=True)
    real = os.access

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and Path(path) in (home, home / "cache"):
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr("tpuwizard.core.paths.os.access", access)
    return home


@pytest.mark.parametrize(
    ("writable", "allowed", "answer"),
    [
        (True, False, "writable"),
        (True, True, "writable"),
        (False, False, "refused"),
        (False, True, "read-only"),
    ],
)
def test_only_an_allowed_command_works_from_a_read_only_home(
    request, home, writable, allowed, answer
):
    if not writable:
        request.getfixturevalue("unwritable")
    if allowed:
        allow_read_only_home()
    if answer == "refused":
        with pytest.raises(BadInput, match=r"state folder.*is not writable by you"):
            paths.state_dir()
        return
    assert paths.state_dir() == home
    assert (read_only_home() is not None) == (answer == "read-only")


def test_a_read_only_home_holds_records_elsewhere_and_reads_its_cache_where_it_is(
    unwritable, tmp_path, monkeypatch
):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # read once per process
    (tmp_path / "tmp").mkdir()
    allow_read_only_home()
    found = read_only_home()
    assert found is not None
    home, held_in = found
    assert home == unwritable and held_in is not None and held_in.parent == tmp_path / "tmp"
    assert paths.cache_dir() == unwritable / "cache" and not (unwritable / "cache").exists()
    said = read_only_home_words(home, held_in)
    assert f"TPUWIZARD_HOME {home} is read-only" in said and f"held in {held_in}" in said
    assert "this command's memory only" in read_only_home_words(home, None)


def test_a_practice_cloud_that_would_serve_from_a_read_only_home_is_refused_first(
    unwritable, monkeypatch
):
    allow_read_only_home()
    with pytest.raises(BadInput) as refused:
        Session.open(sandbox=True)
    said = str(refused.value)
    assert f"keeps its nodes in {unwritable / 'sandbox'}" in said and "read-only" in said
    assert not (unwritable / "sandbox").exists()  # nothing was started there
    # One served elsewhere (`sandbox serve`, its address exported) holds its own state.
    monkeypatch.setenv("TPUWIZARD_TPU_ENDPOINT", "http://127.0.0.1:9")
    assert Session.open(sandbox=True).practice


def test_a_practice_kaggle_kernel_s_keeper_lock_is_read_without_a_write(tmp_path, monkeypatch):
    """`status` and `teardown` ask whether a keeper holds the kernel's lock: a read-only home
    refuses a file opened for writing (EROFS, which root meets too), so the lock is taken
    through a read-only descriptor (flock needs no write)."""
    import errno
    import fcntl

    from tpuwizard.sandbox.kaggle import sessions

    folder = tmp_path / "kernels" / "ada__tpuwizard-r1" / "v1"
    folder.mkdir(parents=True)
    (folder / sessions.LOCK_FILE).touch()
    real_open = os.open

    def read_only_disk(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    keeper = real_open(folder / sessions.LOCK_FILE, os.O_RDONLY)
    monkeypatch.setattr(sessions.os, "open", read_only_disk)
    try:
        assert not sessions.session_on_disk(tmp_path / "kernels", "ada/tpuwizard-r1").runs
        fcntl.flock(keeper, fcntl.LOCK_EX)  # a keeper runs the session
        assert sessions.session_on_disk(tmp_path / "kernels", "ada/tpuwizard-r1").runs
    finally:
        os.close(keeper)


def test_a_practice_colab_session_in_a_read_only_home_is_said_not_checked_nor_stopped(
    unwritable,
):
    """The practice Colab stand-in writes its state on every call (a listing too): from a
    read-only home it is not called; the session is said unchecked (status) and NOT stopped
    (teardown), with where it is and what stops it, and its record stays open."""
    from tpuwizard.session.free.colab import colab_ledger, practice_home
    from tpuwizard.session.free.colab_records import held_on_colab, tear_down_sessions
    from tpuwizard.words.colab_text import held_lines, torn_lines

    allow_read_only_home()
    # As a killed launch leaves it (written through: this process's writes are not refused).
    colab_ledger().record("intent", "tpuwizard-r1", "r1", practice=True, pid=None)
    colab_ledger().record("pushed", "tpuwizard-r1", "r1", endpoint="e1")
    [seen] = held_on_colab()
    assert (seen.session, seen.state, seen.detail) == (
        "tpuwizard-r1", "read-only-home", str(practice_home())
    )  # fmt: skip
    said = held_lines(seen)[0]
    assert "could not be checked" in said and str(practice_home()) in said
    assert "`tpuwizard teardown tpuwizard-r1 --sandbox` stops it" in said
    [torn] = tear_down_sessions(colab_ledger().held())
    assert torn.stopped is False and torn_lines(torn)[0].startswith("tpuwizard-r1 was NOT stopped")
    assert not (practice_home() / "calls.log").exists()  # the stand-in was never called
    assert [r["kernel"] for r in colab_ledger().held()] == ["tpuwizard-r1"]


def test_a_ledger_whose_folder_cannot_be_made_reads_empty_holds_records_and_refuses_intents(
    tmp_path, monkeypatch
):
    """A read-only home that never held the practice ledger (`home/sandbox` cannot be made):
    `status` reads no records rather than stopping; a `gone` is held; an `intent` is refused,
    so nothing could be created unrecorded."""
    import errno

    from tpuwizard.core.errors import LedgerUnwritable
    from tpuwizard.core.launch.records.ledger import Ledger, Resource

    folder = tmp_path / "home" / "sandbox"
    real_mkdir = Path.mkdir

    def read_only_disk(self, *args, **kwargs):
        if self == folder:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only_disk)
    (tmp_path / "tmp").mkdir()
    ledger = Ledger(folder / "ledger.jsonl", fallback_base=tmp_path / "tmp")
    assert ledger.open_entries() == []
    node = Resource("node", "p", "us-central1-a", "n1", "v5litepod-1", "r1")
    held = ledger.record("gone", node)
    assert (
        held is not None
        and held.kept_in is not None
        and held.kept_in.parent.parent == (tmp_path / "tmp")
    )
    with pytest.raises(LedgerUnwritable):
        ledger.record("intent", node)
    assert not folder.exists()


def test_a_read_only_home_without_an_install_id_writes_none_and_owns_nothing(unwritable):
    """Every create makes the install id first: a read-only home without one made nothing.
    Its owner label is this process's alone (stable in it), matching no label, and no id is
    written (the write would fail: `status` stopped there)."""
    allow_read_only_home()
    label = paths.owner_label()
    assert label == paths.owner_label() and len(label) == 16
    assert not list(unwritable.glob("*install-id*"))
