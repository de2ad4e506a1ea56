"""Where an export writes (issue 55.9): a folder of its own inside the folder the engine ships
(the script's), never beside the script; ``--out`` names that folder, and a file name, the
script's own folder or a folder outside is refused saying what to give."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpuwizard.core.errors import BadInput
from tpuwizard.core.handover.place import export_place


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "train.py").write_text("print(1)\n")
    (tmp_path / "course" / "data").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("target", "out", "script", "folder", "relative"),
    [
        ("xpk", None, "course/train.py", "course/export-xpk", "export-xpk"),
        ("skypilot", None, "course/train.py", "course/export-skypilot", "export-skypilot"),
        ("jobset", None, None, "export-jobset", "export-jobset"),
        ("xpk", "course/gke", "course/train.py", "course/gke", "gke"),
        ("xpk", "course/a/b", "course/train.py", "course/a/b", "a/b"),  # made when written
        ("xpk", "course/data", "course/train.py", "course/data", "data"),  # a folder there
        ("xpk", "course/v1.2", "course/train.py", "course/v1.2", "v1.2"),  # no file's suffix
    ],
)
def test_the_exports_folder_is_inside_the_folder_shipped(
    here: Path, target: str, out: str | None, script: str | None, folder: str, relative: str
) -> None:
    place = export_place(target, Path(out) if out else None, Path(script) if script else None)
    assert place.folder == Path(folder)
    assert place.relative == relative
    assert not (here / "course" / "gke").exists()  # deciding makes nothing


@pytest.mark.parametrize(
    ("out", "words"),
    [
        ("course/plan.sh", "--out course/plan.sh names a file; --out names the folder"),
        ("course/task.YAML", "Give a folder, e.g. --out course/task, or leave --out out"),
        ("course/train.py", "names a file"),
        ("course", "is the folder of your script"),
        ("course/.", "never beside the script"),
        ("elsewhere", "is outside course, the folder of train.py, which the engine ships"),
        ("course/../other", "e.g. --out course/export-xpk"),
        ("course/train.py/x", "Cannot use course/train.py/x (Not a directory)"),
        ("course/line\nbreak", "cannot be shown"),
    ],
)
def test_an_out_that_cannot_hold_the_export_is_refused_saying_what_to_give(
    here: Path, out: str, words: str
) -> None:
    with pytest.raises(BadInput) as err:
        export_place("xpk", Path(out), Path("course/train.py"))
    assert words in " ".join(str(err.value).split())


def test_a_link_or_a_file_in_the_folders_place_is_refused(here: Path) -> None:
    (here / "course" / "export-xpk").symlink_to("data")
    with pytest.raises(BadInput, match="is a symbolic link: tpuwizard writes no file through"):
        export_place("xpk", None, Path("course/train.py"))
    (here / "course" / "export-jobset").write_text("mine\n")
    with pytest.raises(BadInput, match="is a file, not a folder: move it away, or fix it"):
        export_place("jobset", None, Path("course/train.py"), fix="fix it")


def test_without_a_script_the_current_folder_is_shipped(here: Path) -> None:
    with pytest.raises(BadInput, match="is outside the current folder, which the engine ships"):
        export_place("xpk", here.parent / "x", None)
