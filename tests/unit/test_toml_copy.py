"""The catalog parsed through a JSON copy kept beside its bytecode (core/plan/toml_copy.py): the
same data as tomllib's, tomllib not even imported once the copy is there, and an edited, torn
or unwritable copy never read as the catalog."""

from __future__ import annotations

import sys
import tomllib

import pytest

from tpuwizard.core.plan import catalog, toml_copy

TEXT = 'title = "one"\n[generations.v5e]\nchips = [1, 4, 8]\nprice = 1.2\n'


@pytest.fixture
def writes_bytecode(monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def without_tomllib(monkeypatch):
    monkeypatch.setitem(sys.modules, "tomllib", None)  # importing it now raises ImportError


def test_the_copy_answers_the_next_start_without_tomllib(tmp_path, monkeypatch, writes_bytecode):
    kept = tmp_path / "__pycache__" / "x.toml.json"
    assert toml_copy.parsed(TEXT, kept) == tomllib.loads(TEXT)
    assert kept.exists()
    without_tomllib(monkeypatch)
    assert toml_copy.parsed(TEXT, kept) == tomllib.loads(TEXT)


def test_an_edited_file_is_parsed_again(tmp_path, monkeypatch, writes_bytecode):
    kept = tmp_path / "x.toml.json"
    toml_copy.parsed(TEXT, kept)
    edited = TEXT.replace("1.2", "1.3")
    assert toml_copy.parsed(edited, kept)["generations"]["v5e"]["price"] == 1.3
    without_tomllib(monkeypatch)  # the copy now holds the edited text's data
    assert toml_copy.parsed(edited, kept)["generations"]["v5e"]["price"] == 1.3


@pytest.mark.parametrize("torn", ['{"key": "', "[]", '{"key": 1}', ""])
def test_a_torn_or_foreign_copy_is_never_read_as_the_file(tmp_path, torn, writes_bytecode):
    kept = tmp_path / "x.toml.json"
    kept.write_text(torn)
    assert toml_copy.parsed(TEXT, kept) == tomllib.loads(TEXT)


def test_no_copy_where_python_writes_no_bytecode_or_cannot(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    toml_copy.parsed(TEXT, tmp_path / "a.json")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (tmp_path / "file").write_text("")
    toml_copy.parsed(TEXT, tmp_path / "file" / "b.json")  # its folder is a file: parsed anyway
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_toml_date_is_parsed_each_time(tmp_path, writes_bytecode):
    text = "read = 2026-12-02\n"
    assert toml_copy.parsed(text, tmp_path / "d.json") == tomllib.loads(text)
    assert not (tmp_path / "d.json").exists()


def test_the_catalog_reads_through_its_copy(tmp_path, monkeypatch, writes_bytecode):
    monkeypatch.setattr(catalog, "COPY_FOLDER", tmp_path)
    catalog._raw.cache_clear()
    try:
        first = catalog._raw()
        assert (tmp_path / catalog.COPY_NAME).exists()
        catalog._raw.cache_clear()
        without_tomllib(monkeypatch)
        assert catalog._raw() == first
        assert catalog.parse_accelerator("v5litepod-4").chips == 4
    finally:
        catalog._raw.cache_clear()
