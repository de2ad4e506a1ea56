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
