"""Writing the hand-over's files without harming what is there already (issue 48, F7).

A file is written where nothing is, or over a file tpuwizard wrote (one of its first lines begins
``# Written by tpuwizard export``, or it opens as the verifier does); with ``force``, also over a
regular file of the user's. Never over the script being handed over, never through or over a
symbolic link, never over a folder, FIFO or device, never two of the export's files to one place.

Each file is staged as a temporary file in its own folder, flushed to disk, then renamed over its
name, so a crash leaves the old file or the new one, never an empty or torn one (a stage a killed
export left is removed by the next one there). Every check runs
before the first file is staged and every file is staged before the first rename: a refusal, or a
folder that cannot take a file, writes nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core.errors import BadInput, shown
from tpuwizard.core.export_marks import file_head, marked_head

# An earlier export's file is known by core/export_marks.py's line near its top (the header's,
# the job script's); the verifier by its own opening lines.
_STAGE = re.compile(r"\.tpuwizard-export-[0-9a-f]{12}\.tmp")
# A stage this old is a killed export's: a live one renames its stages within a second.
_STALE_SECONDS = 60


@dataclass(frozen=True)
class Output:
    """One file to write: where, its text, what it is (for messages), what to do instead when
    its place is taken (``fix``, e.g. "choose another --out"), and whether the user named the
    place (``chosen``) or tpuwizard did (the files in the export's folder)."""

    path: Path
    text: str
    what: str
    fix: str
    chosen: bool = False


def _verifier_opening() -> str:
    from tpuwizard.core.evidence.verifier import verifier_source

    return "".join(verifier_source().splitlines(keepends=True)[:2])


def written_by_tpuwizard(path: Path) -> bool:
    """Whether the regular file at ``path`` is one tpuwizard's export wrote (its first lines
    read, at most 4 KiB; a link, a FIFO or anything unreadable is not)."""
    head = file_head(path)
    if head is None:
        return False
    return marked_head(path) is not None or head.startswith(_verifier_opening())


def _key(path: Path) -> tuple[str, str]:
    """Where ``path`` lands, its folder's links resolved (its own name is not followed)."""
    return os.path.realpath(path.parent), path.name


def _checked(output: Output, script: os.stat_result | None, force: bool, force_hint: str) -> bytes:
    """``output``'s bytes once its place may be written, else :class:`BadInput` saying why."""
    path = output.path
    if not str(path).isprintable():
        raise BadInput(
            f"The file name {shown(str(path), 80)} holds a line break or another character that "
            f"cannot be shown: {output.fix}."
        )
    try:
        data = output.text.encode("utf-8")
    except UnicodeEncodeError as err:
        bad = output.text[err.start : err.end]
        raise BadInput(
            f"{output.what.capitalize()} would hold {shown(bad)}, bytes that are not UTF-8 text "
            "(an argument typed in another encoding): retype it as plain text."
        ) from None
    try:
        found = path.lstat()
    except FileNotFoundError:
        return data
    except OSError as err:
        raise BadInput(f"Cannot write {path} ({err.strerror}): {output.fix}.") from None
    if stat.S_ISLNK(found.st_mode):
        with contextlib.suppress(OSError):
            path = Path(f"{path} (to {shown(os.readlink(path), 80)})")
        raise BadInput(
            f"{path} is a symbolic link: tpuwizard writes no file through a link or over one. "
            f"Remove the link, or {output.fix}."
        )
    if not stat.S_ISREG(found.st_mode):
        kind = "a folder" if stat.S_ISDIR(found.st_mode) else "not a regular file"
        raise BadInput(f"{path} is {kind}: {output.fix}.")
    if script is not None and (found.st_dev, found.st_ino) == (script.st_dev, script.st_ino):
        fix = output.fix if output.chosen else "rename your script (e.g. to train.py)"
        raise BadInput(
            f"{path} is your script, where {output.what} would go: tpuwizard never writes over "
            f"it. {fix[0].upper()}{fix[1:]}."
        )
    if not force and not written_by_tpuwizard(path):
        raise BadInput(
            f"{path} exists and tpuwizard did not write it (its first lines lack tpuwizard's "
            f"header), so it is left as it is: move it away, or {output.fix}{force_hint}."
        )
    return data


def _stage(path: Path, data: bytes) -> Path:
    """``data`` in a new temporary file beside ``path``, flushed; its name is short and random
    (a long ``path`` name must not make it too long, nor can it be an existing file)."""
    staged = path.with_name(f".tpuwizard-export-{secrets.token_hex(6)}.tmp")  # as _STAGE
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(staged, flags, 0o666)  # the umask applies, as for any file the user makes
    try:
        with os.fdopen(fd, "wb", closefd=False) as out:
            out.write(data)
            out.flush()
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        staged.unlink(missing_ok=True)
        raise
    os.close(fd)
    return staged


def _clear_stale_stages(folder: Path) -> None:
    """Remove the stages an export killed between staging and renaming left in ``folder``."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if not _STAGE.fullmatch(entry.name):
                continue
            with contextlib.suppress(OSError):
                found = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(found.st_mode) and time.time() - found.st_mtime > _STALE_SECONDS:
                    os.unlink(entry.path)


def _sync_folder(folder: Path) -> None:
    """The renames on disk too (best effort: not every file system lets a folder be synced)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_files(
    outputs: Sequence[Output],
    *,
    script: Path | None = None,
    force: bool = False,
    force_hint: str = "",
) -> None:
    """Write every output, or none: a place that may not be written raises :class:`BadInput`
    before anything is written. ``script``: the user's script, never written over. ``force``:
    also over a regular file tpuwizard did not write; ``force_hint`` ends that refusal (e.g.
    ", or add --force to overwrite it") where the front end has such a switch."""
    seen: dict[tuple[str, str], Output] = {}
    for output in outputs:
        other = seen.setdefault(_key(output.path), output)
        if other is not output:
            raise BadInput(f"{output.path} is where tpuwizard writes {other.what}: {output.fix}.")
    try:
        mine = script.stat() if script is not None else None
    except OSError:
        mine = None
    ready = [(o, _checked(o, mine, force, force_hint)) for o in outputs]
    for folder in dict.fromkeys(o.path.parent for o in outputs):
        try:
            folder.mkdir(parents=True, exist_ok=True)  # the export's own folder, made once checked
        except OSError as err:
            raise BadInput(
                f"Cannot make the folder {folder} ({err.strerror}): {outputs[0].fix}. Nothing was "
                "written."
            ) from None
    staged: list[tuple[Output, Path]] = []
    try:
        for output, data in ready:
            try:
                staged.append((output, _stage(output.path, data)))
            except OSError as err:
                raise BadInput(
                    f"Cannot write {output.path} ({err.strerror}): {output.fix}. Nothing was "
                    "written."
                ) from None
        done: list[Path] = []
        staged.reverse()  # the chosen file (--out, last) first: its folder is the least known
        while staged:
            output, part = staged[0]
            try:
                os.replace(part, output.path)  # replaces a name; never follows a link there
            except OSError as err:
                already = ", ".join(str(p) for p in done) or "none"
                raise BadInput(
                    f"Cannot write {output.path} ({err.strerror}): {output.fix}. Written before "
                    f"it: {already}."
                ) from None
            staged.pop(0)
            done.append(output.path)
    finally:
        for _output, part in staged:
            part.unlink(missing_ok=True)  # staged, not renamed: a refusal part way
    for folder in {o.path.parent for o in outputs}:
        _sync_folder(folder)
        _clear_stale_stages(folder)
