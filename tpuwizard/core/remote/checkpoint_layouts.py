"""Which checkpoints in a worker's checkpoints folder can come home whole: the layouts people
write into ``$TPUWIZARD_CHECKPOINTS``, read from one listing of it (and the pass before).

- **Step folders** (``<dir>/<name>/``): a folder holding ``COMMITTED`` (written last, as
  examples/resumable_train.py does), or, where no folder holds one, a folder named by its step
  (orbax-checkpoint's ``CheckpointManager``: ``<dir>/<step>/``, named
  ``<step>.orbax-checkpoint-tmp*`` until orbax renames it whole).
- **Step files** directly in the folder: flax's legacy ``flax.training.checkpoints
  .save_checkpoint`` writes ``checkpoint_tmp``, renames it ``checkpoint_<step>`` and deletes all
  but the newest ``keep`` such files; each file is a set, put back as it was.
- **The folder itself**, when ``COMMITTED`` lies directly in it (the script overwrites its
  files and writes ``COMMITTED`` last): every file of the folder is the set, put back into the
  folder itself.
- **Loose files** with no marker at all (``np.savez`` to ``state.npz``, ``pickle`` to
  ``model.pkl``, rewritten in place): the folder's own files, assumed complete once their sizes
  and modification times held still from one pass to the next. Never where the folder has
  been seen committed: without its ``COMMITTED`` it is being rewritten.

Anything else (files only in folders with neither a step name nor ``COMMITTED``) never comes
home, and :func:`find_sets` says so, so the script's author hears it on the first pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

COMMITTED = "COMMITTED"
# orbax names a step it is writing "<step>.orbax-checkpoint-tmp" (0.12), some releases with
# "-<timestamp>" after it: either way the suffix is in the name until the rename.
ORBAX_TMP = ".orbax-checkpoint-tmp"
FLAX_TMP_SUFFIX = "tmp"  # flax's legacy save writes "<prefix>tmp" first, then renames it
_STEP = re.compile(r".*?(\d+)$")

# The kinds of set: where its files are on the worker, relative to the checkpoints folder.
STEP_FOLDER = "folder"  # <dir>/<name>/<rel>
STEP_FILE = "file"  # <dir>/<name> (rel == name)
FOLDER_ITSELF = "flat"  # <dir>/<rel>, COMMITTED among them
LOOSE_FILES = "loose"  # <dir>/<rel>, no marker: assumed complete once they held still

Files = dict[str, list[int]]  # rel -> [size, mtime_ns]


@dataclass(frozen=True)
class Listing:
    """One look at the checkpoints folder: its sub-folders' files and its own files."""

    folders: dict[str, Files] = field(default_factory=dict)
    top: Files = field(default_factory=dict)

    @property
    def file_count(self) -> int:
        return len(self.top) + sum(len(files) for files in self.folders.values())

    def every_file(self) -> Files:
        """Every file of the folder, relative to it (the folder itself as one set)."""
        found = dict(self.top)
        for name, files in self.folders.items():
            found.update({f"{name}/{rel}": info for rel, info in files.items()})
        return found


@dataclass(frozen=True)
class FoundSet:
    """A set that can come home now: its name, kind, step and files (relative to its base)."""

    name: str
    kind: str
    step: int | None
    files: Files


@dataclass(frozen=True)
class Found:
    """What one listing holds: the complete sets, and whether more may complete later (a set
    being written, loose files still to hold still). ``unusable``: the folder holds files, yet
    no set is complete or on its way to being so."""

    sets: dict[str, FoundSet]
    pending: bool
    file_count: int
    # Loose files (no marker) that changed since the last pass: they come home only once a
    # pass finds them as the one before left them.
    restless: int = 0

    @property
    def unusable(self) -> bool:
        return self.file_count > 0 and not self.sets and not self.pending


def step_of(name: str) -> int | None:
    match = _STEP.fullmatch(name)
    return int(match.group(1)) if match else None


def complete_folders(folders: dict[str, Files]) -> list[str]:
    """The sub-folders that are complete sets by their names and markers (see the module)."""
    marked = [n for n, files in folders.items() if COMMITTED in files]
    if marked:
        return marked
    return [n for n in folders if ORBAX_TMP not in n and step_of(n) is not None and folders[n]]


def _being_written(name: str) -> bool:
    return ORBAX_TMP in name or name.endswith(FLAX_TMP_SUFFIX)


def _step_file(name: str) -> bool:
    """flax's ``<prefix><step>``: a name ending in its step, without an extension."""
    return "." not in name and step_of(name) is not None


def find_sets(
    listing: Listing, folder_name: str, previous: Listing | None, committed_before: bool
) -> Found:
    """The complete sets in ``listing``. ``folder_name`` names the folder-itself set (the
    checkpoints folder's own name); ``previous`` is the last pass's listing (loose files are
    taken once they match it); ``committed_before``: the folder itself came home with
    ``COMMITTED`` earlier, so without it now it is being rewritten."""
    count = listing.file_count
    if COMMITTED in listing.top:
        whole = FoundSet(folder_name, FOLDER_ITSELF, None, listing.every_file())
        return Found({folder_name: whole}, False, count)
    sets: dict[str, FoundSet] = {}
    for name in complete_folders(listing.folders):
        sets[name] = FoundSet(name, STEP_FOLDER, step_of(name), listing.folders[name])
    for name, info in listing.top.items():
        if _step_file(name) and not _being_written(name):
            sets[name] = FoundSet(name, STEP_FILE, step_of(name), {name: info})
    writing = any(_being_written(n) for n in [*listing.folders, *listing.top])
    if sets or committed_before:
        return Found(sets, writing or committed_before, count)
    loose = {n: info for n, info in listing.top.items() if not _being_written(n)}
    if not loose:
        return Found({}, writing, count)
    still = previous is not None and previous.top == listing.top
    if still:
        sets[folder_name] = FoundSet(folder_name, LOOSE_FILES, None, loose)
    restless = len(loose) if previous is not None and not still else 0
    return Found(sets, writing or not still, count, restless)


def current_files(listing: Listing, found: FoundSet) -> Files | None:
    """``found``'s files as ``listing`` has them now; None when the set is gone."""
    if found.kind == STEP_FOLDER:
        return listing.folders.get(found.name)
    if found.kind == STEP_FILE:
        info = listing.top.get(found.name)
        return {found.name: info} if info is not None else None
    if found.kind == FOLDER_ITSELF:
        return listing.every_file() if COMMITTED in listing.top else None
    loose = {n: info for n, info in listing.top.items() if not _being_written(n)}
    return loose or None


def remote_base(checkpoints: str, name: str, kind: str) -> str:
    """Where a set's files lie on the worker, relative to the script's folder."""
    return f"{checkpoints}/{name}" if kind == STEP_FOLDER else checkpoints
