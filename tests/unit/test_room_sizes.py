"""Issue 46: a room of tpuwizard/ holds at most 25 Python files directly; past that, a newcomer
scans a drawer instead of reading a room's name, and the room wants cutting along a seam."""

from __future__ import annotations

from pathlib import Path

import tpuwizard

MOST_FILES = 25


def python_files_by_folder(root: Path) -> dict[Path, int]:
    counts: dict[Path, int] = {}
    for path in root.rglob("*.py"):
        if "__pycache__" not in path.parts:
            counts[path.parent] = counts.get(path.parent, 0) + 1
    return counts


def test_no_folder_holds_more_than_25_python_files(tmp_path):
    root = Path(tpuwizard.__file__).parent
    crowded = {
        str(folder.relative_to(root.parent)): n
        for folder, n in python_files_by_folder(root).items()
        if n > MOST_FILES
    }
    assert not crowded, f"folders over {MOST_FILES} Python files (cut along a seam): {crowded}"
    # The count itself, on a made folder: files directly in it, not in its subfolders.
    (tmp_path / "room" / "inner").mkdir(parents=True)
    for name in ("a.py", "b.py", "inner/c.py", "notes.txt"):
        (tmp_path / "room" / name).write_text("")
    assert python_files_by_folder(tmp_path) == {
        tmp_path / "room": 2,
        tmp_path / "room" / "inner": 1,
    }
