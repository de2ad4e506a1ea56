"""This install's id file as someone may find it (issue 39, item 11): binary bytes are an id
(the label they hash to never changes for a text id), and an empty or unreadable one is bad
input that says what to do, never "unexpected error"."""

from __future__ import annotations

import hashlib

import pytest
from click.testing import CliRunner

from tests.fakes import MemoryCloud
from tpuwizard.cli import main
from tpuwizard.commands import cleanup as cleanup_commands
from tpuwizard.core import paths
from tpuwizard.core.errors import BadInput
from tpuwizard.session.session import Session


@pytest.fixture
def home(home):
    home.mkdir(parents=True, exist_ok=True)  # made by the first command otherwise
    return home


def test_a_binary_install_id_is_an_id_and_a_text_one_keeps_its_label(home):
    (home / "install-id").write_bytes(b"\xff\xfe\x00\x9b binary\n")
    assert paths.owner_label() == hashlib.sha256(b"\xff\xfe\x00\x9b binary").hexdigest()[:16]
    (home / "install-id").write_text("0123456789abcdef0123456789abcdef\n")
    assert paths.owner_label() == hashlib.sha256(b"0123456789abcdef" * 2).hexdigest()[:16]


def test_an_empty_or_unreadable_install_id_is_bad_input_that_says_what_to_do(home):
    (home / "install-id").write_bytes(b"  \n")
    with pytest.raises(BadInput, match=r"install-id, is empty\. Restore"):
        paths.owner_label()
    (home / "install-id").unlink()
    (home / "install-id").mkdir()
    with pytest.raises(BadInput, match="Cannot read this install's id"):
        paths.owner_label()


def test_status_with_a_binary_install_id_answers(home, monkeypatch):
    session = Session(practice=True, project="practice-project")
    session.clouds.use(MemoryCloud())
    monkeypatch.setattr(cleanup_commands, "open_session", lambda project, sandbox: session)
    (home / "install-id").write_bytes(b"\x80\x81\xfe\xff")
    result = CliRunner().invoke(main, ["status", "--sandbox"])
    assert result.exit_code == 0, result.output
    assert "unexpected" not in result.output
