"""The Architecture page and the design notes are the newcomer's map: every file they name
(``launch_handle.py``, ``core/launch/kept/record.py``, ``screens.tcss``) is in the repository,
so a file moved or renamed without its map fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAPS = [ROOT / "docs" / "architecture.md", ROOT / "docs" / "design.md"]
NAMED = re.compile(r"[A-Za-z_][\w/.-]*\.(?:py|tcss|sh|toml)\b")


def repository_files() -> list[str]:
    skip = {".venv", ".git", "site", "__pycache__"}
    return [
        p.relative_to(ROOT).as_posix()
        for p in ROOT.rglob("*")
        if p.is_file() and not skip.intersection(p.relative_to(ROOT).parts)
    ]


FILES = repository_files()


@pytest.mark.parametrize("page", MAPS, ids=lambda p: p.name)
def test_every_file_a_map_names_is_there(page):
    missing = sorted(
        name
        for name in set(NAMED.findall(page.read_text()))
        if not any(f == name or f.endswith("/" + name) for f in FILES)
    )
    assert missing == [], f"{page.name} names files the repository does not hold: {missing}"
