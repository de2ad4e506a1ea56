"""Checkpoints home and back: a worker's checkpoints folder copied into ``runs/<id>/checkpoints``
while the script runs, and the latest complete set put back into it on a new TPU.

Which files make a complete *set* (step folders, flax's step files, the folder itself with
``COMMITTED``, loose files that held still) is checkpoint_layouts.py's to say. A copy pass lists
the folder, streams each new or changed file through fetch's size- and SHA-256-checked stream
(fetch.py) into a staging folder, lists again, and takes a set only when every file arrived
whole and the set did not change or vanish meanwhile (orbax deletes old steps); otherwise the
staging copy is dropped and the previous complete set stays the resume point. What is home is
written down in ``manifest.json`` beside the sets, so the next pass copies only what changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpuwizard.core import untrusted
from tpuwizard.core.remote import checkpoint_layouts as layouts
from tpuwizard.core.remote.checkpoint_layouts import Listing
from tpuwizard.core.remote.fetch import FetchFailed, fetch_file
from tpuwizard.core.remote.jobs import fan_out
from tpuwizard.core.remote.transports import Raw, Transport, shell

MANIFEST = "manifest.json"
STAGING = ".incoming"

# Runs on the worker in the checkpoints folder's parent: every regular file of every sub-folder,
# and the folder's own files, with size and modification time (links never followed nor listed).
LISTER = """
import json, os, sys
root = sys.argv[1]
sets, own = {}, {}
if os.path.isdir(root) and not os.path.islink(root):
    for name in sorted(os.listdir(root)):
        top = os.path.join(root, name)
        if os.path.islink(top):
            continue
        if os.path.isfile(top):
            info = os.stat(top)
            own[name] = [info.st_size, info.st_mtime_ns]
            continue
        if not os.path.isdir(top):
            continue
        files = {}
        for folder, dirs, names in os.walk(top):
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
            for n in names:
                path = os.path.join(folder, n)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                info = os.stat(path)
                rel = os.path.relpath(path, top)
                files[rel] = [info.st_size, info.st_mtime_ns]
        sets[name] = files
print(json.dumps({"folders": sets, "top": own}))
"""


@dataclass(frozen=True)
class CheckpointSet:
    """One complete set at home (in ``<home>/<name>/``): its name, its step, each file's size
    and sha256, and its kind (checkpoint_layouts.py: where its files go back on a worker)."""

    name: str
    step: int | None
    files: dict[str, dict[str, Any]]  # rel -> {"size", "mtime_ns", "sha256"}
    kind: str = layouts.STEP_FOLDER

    @property
    def assumed(self) -> bool:
        """Taken with no marker, because its files held still (loose files)."""
        return self.kind == layouts.LOOSE_FILES


@dataclass
class PassResult:
    """What one copy pass did: the sets it took whole, and those it dropped and why."""

    taken: list[CheckpointSet] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)
    files_copied: int = 0
    bytes_copied: int = 0
    # The folder holds this many files, yet none of them can come home as a set (nothing
    # complete, nothing on its way): 0 when some can, or the folder is empty.
    unusable_files: int = 0
    # Loose files that changed since the last pass (so none came home this time): 0 otherwise.
    restless_files: int = 0


class CheckpointsHome:
    """``runs/<id>/checkpoints``: the complete sets copied home, and what the manifest says."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._previous: Listing | None = None  # the last pass's listing (loose files)

    def sets(self) -> dict[str, CheckpointSet]:
        try:  # read back as untrusted input (core/untrusted.py): a FIFO must not hang the run
            data = untrusted.read_json(self.folder / MANIFEST, 64 * untrusted.MIB, max_depth=8)
        except (OSError, ValueError):
            return {}
        return {
            name: CheckpointSet(
                name, entry.get("step"), entry["files"], entry.get("kind", layouts.STEP_FOLDER)
            )
            for name, entry in data.get("sets", {}).items()
        }

    def latest(self) -> CheckpointSet | None:
        """The resume point: the complete set with the highest step (the last taken, else)."""
        sets = list(self.sets().values())
        if not sets:
            return None
        return max(enumerate(sets), key=lambda p: (p[1].step is not None, p[1].step or 0, p[0]))[1]

    def missing_files(self, chosen: CheckpointSet) -> list[str]:
        """The files of ``chosen`` that are not at home with the size they came with."""
        missing = []
        for rel, entry in sorted(chosen.files.items()):
            path = self.folder / chosen.name / rel
            if not path.is_file() or path.stat().st_size != entry["size"]:
                missing.append(rel)
        return missing

    def take_from(self, other: CheckpointsHome, chosen: CheckpointSet) -> CheckpointSet:
        """``chosen`` copied from ``other`` (an earlier run's home) into this one, each file
        checked against the sha256 it came home with: a changed file is refused."""
        staging = self.folder / STAGING / chosen.name
        shutil.rmtree(staging, ignore_errors=True)
        for rel, entry in sorted(chosen.files.items()):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(other.folder / chosen.name / rel, target)
            if file_sha256(target) != entry["sha256"]:
                shutil.rmtree(staging, ignore_errors=True)
                raise FetchFailed(
                    f"{other.folder / chosen.name / rel} is not what came home (its sha256 differs)"
                )
        target = self.folder / chosen.name
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
        with contextlib.suppress(OSError):
            (self.folder / STAGING).rmdir()
        sets = self.sets()
        sets[chosen.name] = chosen
        self._write(sets)
        return chosen

    def _write(self, sets: dict[str, CheckpointSet]) -> None:
        record = {
            "sets": {
                s.name: {"step": s.step, "files": s.files, "kind": s.kind} for s in sets.values()
            }
        }
        part = self.folder / f".{MANIFEST}.part"
        part.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        os.replace(part, self.folder / MANIFEST)

    def copy_pass(
        self, transport: Transport, work_dir: str, python: str, checkpoints: str
    ) -> PassResult:
        """One pass: every new or changed complete set, copied whole or not at all."""
        result = PassResult()
        listing = list_sets(transport, work_dir, python, checkpoints)
        home = self.sets()
        committed_before = any(s.kind == layouts.FOLDER_ITSELF for s in home.values())
        folder_name = checkpoints.rstrip("/").rsplit("/", 1)[-1]
        found = layouts.find_sets(listing, folder_name, self._previous, committed_before)
        self._previous = listing
        if found.unusable:
            result.unusable_files = found.file_count
        result.restless_files = found.restless
        self.folder.mkdir(parents=True, exist_ok=True)
        staged: dict[str, tuple[Path, dict[str, dict[str, Any]]]] = {}
        for name, each in found.sets.items():
            known = home.get(name)
            if known is not None and known.kind == each.kind and _same(known.files, each.files):
                continue  # home already, unchanged
            staging = self.folder / STAGING / name
            shutil.rmtree(staging, ignore_errors=True)
            base = layouts.remote_base(checkpoints, name, each.kind)
            try:
                staged[name] = (
                    staging,
                    self._stage(transport, work_dir, python, base, each, known, staging, result),
                )
            except (FetchFailed, OSError) as err:
                result.dropped[name] = str(err)
                shutil.rmtree(staging, ignore_errors=True)
        after = (
            list_sets(transport, work_dir, python, checkpoints)
            if staged or result.dropped
            else listing
        )
        for name in result.dropped:
            if layouts.current_files(after, found.sets[name]) is None:
                # a file that could not be read is part of a deleted set
                result.dropped[name] = "it vanished while it was being copied"
        for name, (staging, took) in staged.items():
            each = found.sets[name]
            now = layouts.current_files(after, each)
            if now is None:
                result.dropped[name] = "it vanished while it was being copied"
            elif not _same(took, now):
                result.dropped[name] = "it changed while it was being copied"
            else:
                target = self.folder / name
                shutil.rmtree(target, ignore_errors=True)
                os.replace(staging, target)
                home[name] = CheckpointSet(name, each.step, took, each.kind)
                result.taken.append(home[name])
                continue
            shutil.rmtree(staging, ignore_errors=True)
        if result.taken:
            self._write(home)
        with contextlib.suppress(OSError):
            (self.folder / STAGING).rmdir()
        return result

    def _stage(
        self,
        transport: Transport,
        work_dir: str,
        python: str,
        base: str,
        each: layouts.FoundSet,
        known: CheckpointSet | None,
        staging: Path,
        result: PassResult,
    ) -> dict[str, dict[str, Any]]:
        """The set's files in ``staging``: unchanged ones linked from home, the rest fetched
        from ``base`` (where the set lies on the worker)."""
        took: dict[str, dict[str, Any]] = {}
        name = each.name
        for rel, (size, mtime_ns) in sorted(each.files.items()):
            target = staging / rel
            old = known.files.get(rel) if known is not None else None
            if old is not None and [old["size"], old["mtime_ns"]] == [size, mtime_ns]:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(self.folder / name / rel, target)
                took[rel] = old
                continue
            got = fetch_file(transport, 0, work_dir, python, f"{base}/{rel}", target)
            if got != size:
                raise FetchFailed(
                    f"it changed while it was being copied ({rel}: {size} bytes listed, {got} "
                    "copied)"
                )
            took[rel] = {"size": got, "mtime_ns": mtime_ns, "sha256": file_sha256(target)}
            result.files_copied += 1
            result.bytes_copied += got
        return took


def _same(home: dict[str, dict[str, Any]], listed: dict[str, list[int]]) -> bool:
    return set(home) == set(listed) and all(
        [home[rel]["size"], home[rel]["mtime_ns"]] == list(listed[rel]) for rel in listed
    )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as data:
        for chunk in iter(lambda: data.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def list_sets(transport: Transport, work_dir: str, python: str, checkpoints: str) -> Listing:
    """The worker's checkpoints folder (worker 0): each file's [size, mtime_ns], in its
    sub-folders and in itself."""
    listing = transport.run(
        0, shell("cd", work_dir, Raw("&&"), python, "-c", LISTER, checkpoints), timeout=600
    )
    if listing.code != 0:
        raise FetchFailed(f"could not list the checkpoints: {listing.stderr.strip()[-300:]}")
    try:
        found = json.loads(listing.stdout or "{}")
    except ValueError as err:
        raise FetchFailed(f"could not list the checkpoints: {err}") from err
    if not isinstance(found, dict):
        raise FetchFailed(f"could not list the checkpoints: {listing.stdout[:200]!r}")
    folders = found.get("folders", {})
    return Listing(
        {str(k): {str(r): list(v) for r, v in files.items()} for k, files in folders.items()},
        {str(r): list(v) for r, v in found.get("top", {}).items()},
    )


def upload_set(
    transport: Transport,
    home: CheckpointsHome,
    chosen: CheckpointSet,
    remote_folder: str,
    on_file: Callable[[int], None] | None = None,
) -> None:
    """Put ``chosen`` back where it lay in ``remote_folder`` (its own folder, or the folder
    itself) on every worker, each file checked against the sha256 it had when it came home (a
    changed file at home is refused)."""
    base = layouts.remote_base(remote_folder, chosen.name, chosen.kind)
    for rel, entry in sorted(chosen.files.items()):
        local = home.folder / chosen.name / rel
        data = local.read_bytes()
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise FetchFailed(f"{local} is not what came home (its sha256 differs)")
        path = f"{base}/{rel}"

        def send(worker: int, data: bytes = data, path: str = path) -> None:
            transport.upload(worker, data, path)

        fan_out(transport, send)
        if on_file is not None:
            on_file(len(data))
