"""Where an export writes (issue 55.9): into a folder of its own, never beside the script.

The engines ship one folder: xpk's ``--script-dir .``, SkyPilot's ``workdir: .``, the JobSet's
image of it. That folder is the script's (the current folder without ``--script``), and the job
and the verifier must travel in it, so the export's folder is a folder inside it: ``--out`` where
given, else ``export-<target>``. Beside the script they would clutter the user's folder and be
sent again by every later launch. One function decides, for ``export`` and the wizard's F6.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core.errors import BadInput, shown

# Names that say a file, not a folder: what a user typed for --out before it named a folder.
FILE_SUFFIXES = (".sh", ".yaml", ".yml", ".json", ".txt", ".py")


@dataclass(frozen=True)
class ExportPlace:
    """The export's folder (as the user reads it) and the folder the engine ships."""

    folder: Path
    shipped: Path

    @property
    def relative(self) -> str:
        """The export's folder from the folder shipped, with '/' (how the job finds it)."""
        inside = os.path.relpath(self.folder.resolve(), self.shipped.resolve())
        return Path(inside).as_posix()


def default_folder(target: str) -> str:
    return f"export-{target}"


def _shipped_words(shipped: Path, script: Path | None) -> str:
    where = str(shipped) if str(shipped) != "." else "the current folder"
    return f"{where}, the folder of {script.name}" if script is not None else where


def export_place(
    target: str, out: Path | None, script: Path | None, *, fix: str = "choose another --out"
) -> ExportPlace:
    """The checked place of an export of ``target`` for ``script``; ``out``: the folder asked
    for (None: ``export-<target>`` in the folder shipped). A place that cannot hold the export
    raises :class:`BadInput` saying what to give instead; nothing is made here."""
    shipped = script.parent if script is not None else Path(".")
    folder = out if out is not None else shipped / default_folder(target)
    example = shipped / default_folder(target)
    if not str(folder).isprintable():
        raise BadInput(
            f"The folder name {shown(str(folder), 80)} holds a line break or another character "
            f"that cannot be shown: {fix}."
        )
    if out is not None and out.suffix.lower() in FILE_SUFFIXES:
        raise BadInput(
            f"--out {out} names a file; --out names the folder the export writes its three files "
            f"into (the target's text, the verifier and the job). Give a folder, e.g. --out "
            f"{out.with_suffix('')}, or leave --out out for {example}."
        )
    try:
        found = folder.lstat()
    except FileNotFoundError:
        found = None
    except OSError as err:
        raise BadInput(f"Cannot use {folder} ({err.strerror}): {fix}.") from None
    if found is not None and stat.S_ISLNK(found.st_mode):
        raise BadInput(
            f"{folder} is a symbolic link: tpuwizard writes no file through a link. Remove the "
            f"link, or {fix}."
        )
    if found is not None and not stat.S_ISDIR(found.st_mode):
        raise BadInput(f"{folder} is a file, not a folder: move it away, or {fix}.")
    inside = folder.resolve()
    top = shipped.resolve()
    if inside == top:
        raise BadInput(
            f"{folder} is the folder of your script: the export's files go into a folder of "
            f"their own there, never beside the script (every later launch would send them). "
            f"Give a folder inside it, e.g. --out {example}, or leave --out out."
        )
    if not inside.is_relative_to(top):
        raise BadInput(
            f"{folder} is outside {_shipped_words(shipped, script)}, which the engine ships: "
            f"the job and the verifier must travel with your script. Give a folder inside it, "
            f"e.g. --out {example}, or leave --out out."
        )
    return ExportPlace(folder, shipped)
