"""Checkpoints home and back: a worker's checkpoints folder copied into ``runs/<id>/checkpoints``
while the script runs, and the latest complete set put back into it on a new TPU.

A *set* is one folder directly inside the checkpoints folder. It is complete when it holds
``COMMITTED`` (the marker examples/resumable_train.py writes last), or, where no set holds one,
when it is a step folder (a name ending in digits) without orbax-checkpoint's temporary suffix
(orbax finalises a step by renaming its ``*.orbax-checkpoint-tmp-*`` folder). A copy pass lists
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
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpuwizard.core.remote.fetch import FetchFailed, fetch_file
from tpuwizard.core.remote.jobs import fan_out
from tpuwizard.core.remote.transports import Raw, Transport, shell

COMMITTED = "COMMITTED"
# orbax names a step it is writing "<step>.orbax-checkpoint-tmp" (0.12), some releases with
# "-<timestamp>" after it: either way the suffix is in the name until the rename.
ORBAX_TMP = ".orbax-checkpoint-tmp"
MANIFEST = "manifest.json"
STAGING = ".incoming"
_STEP = re.compile(r".*?(\d+)$")

# Runs on the worker in the checkpoints folder's parent: every regular file of every set, with
# its size and modification time (links are never followed nor listed).
LISTER = """
import json, os, sys
root = sys.argv[1]
sets = {}
if os.path.isdir(root) and not os.path.islink(root):
    for name in sorted(os.listdir(root)):
        top = os.path.join(root, name)
        if os.path.islink(top) or not os.path.isdir(top):
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
print(json.dumps(sets))
"""


@dataclass(frozen=True)
class CheckpointSet:
    """One complete set at home: its folder's name, its step, and each file's size and sha256."""

    name: str
    step: int | None
    files: dict[str, dict[str, Any]]  # rel -> {"size", "mtime_ns", "sha256"}


@dataclass
class PassResult:
    """What one copy pass did: the sets it took whole, and those it dropped and why."""

    taken: list[CheckpointSet] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)
    files_copied: int = 0
    bytes_copied: int = 0


def step_of(name: str) -> int | None:
    match = _STEP.fullmatch(name)
    return int(match.group(1)) if match else None


def complete_sets(listing: dict[str, dict[str, list[int]]]) -> list[str]:
    """The sets of a listing that are complete by their names and markers (see the module)."""
    marked = [n for n, files in listing.items() if COMMITTED in files]
    if marked:
        return marked
    return [n for n in listing if ORBAX_TMP not in n and step_of(n) is not None and listing[n]]


class CheckpointsHome:
    """``runs/<id>/checkpoints``: the complete sets copied home, and what the manifest says."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def sets(self) -> dict[str, CheckpointSet]:
        try:
            data = json.loads((self.folder / MANIFEST).read_text())
        except (OSError, ValueError):
            return {}
        return {
            name: CheckpointSet(name, entry.get("step"), entry["files"])
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
        record = {"sets": {s.name: {"step": s.step, "files": s.files} for s in sets.values()}}
        part = self.folder / f".{MANIFEST}.part"
        part.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        os.replace(part, self.folder / MANIFEST)

    def copy_pass(
        self, transport: Transport, work_dir: str, python: str, checkpoints: str
    ) -> PassResult:
        """One pass: every new or changed complete set, copied whole or not at all."""
        result = PassResult()
        before = list_sets(transport, work_dir, python, checkpoints)
        home = self.sets()
        self.folder.mkdir(parents=True, exist_ok=True)
        staged: dict[str, tuple[Path, dict[str, dict[str, Any]]]] = {}
        for name in complete_sets(before):
            files = before[name]
            known = home.get(name)
            if known is not None and _same(known.files, files):
                continue  # home already, unchanged
            staging = self.folder / STAGING / name
            shutil.rmtree(staging, ignore_errors=True)
            try:
                staged[name] = (
                    staging,
                    self._stage(
                        transport,
                        work_dir,
                        python,
                        checkpoints,
                        name,
                        files,
                        known,
                        staging,
                        result,
                    ),
                )
            except (FetchFailed, OSError) as err:
                result.dropped[name] = str(err)
                shutil.rmtree(staging, ignore_errors=True)
        after = (
            list_sets(transport, work_dir, python, checkpoints)
            if staged or result.dropped
            else before
        )
        for name in result.dropped:
            if name not in after:  # a file that could not be read is part of a deleted set
                result.dropped[name] = "it vanished while it was being copied"
        for name, (staging, took) in staged.items():
            if name not in after:
                result.dropped[name] = "it vanished while it was being copied"
            elif not _same(took, after[name]):
                result.dropped[name] = "it changed while it was being copied"
            else:
                target = self.folder / name
                shutil.rmtree(target, ignore_errors=True)
                os.replace(staging, target)
                home[name] = CheckpointSet(name, step_of(name), took)
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
        checkpoints: str,
        name: str,
        files: dict[str, list[int]],
        known: CheckpointSet | None,
        staging: Path,
        result: PassResult,
    ) -> dict[str, dict[str, Any]]:
        """The set's files in ``staging``: unchanged ones linked from home, the rest fetched."""
        took: dict[str, dict[str, Any]] = {}
        for rel, (size, mtime_ns) in sorted(files.items()):
            target = staging / rel
            old = known.files.get(rel) if known is not None else None
            if old is not None and [old["size"], old["mtime_ns"]] == [size, mtime_ns]:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(self.folder / name / rel, target)
                took[rel] = old
                continue
            got = fetch_file(transport, 0, work_dir, python, f"{checkpoints}/{name}/{rel}", target)
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


def list_sets(
    transport: Transport, work_dir: str, python: str, checkpoints: str
) -> dict[str, dict[str, list[int]]]:
    """Every set in the worker's checkpoints folder (worker 0), each file's [size, mtime_ns]."""
    listing = transport.run(
        0, shell("cd", work_dir, Raw("&&"), python, "-c", LISTER, checkpoints), timeout=600
    )
    if listing.code != 0:
        raise FetchFailed(f"could not list the checkpoints: {listing.stderr.strip()[-300:]}")
    try:
        found = json.loads(listing.stdout or "{}")
    except ValueError as err:
        raise FetchFailed(f"could not list the checkpoints: {err}") from err
    return {str(k): {str(r): list(v) for r, v in files.items()} for k, files in found.items()}


def upload_set(
    transport: Transport,
    home: CheckpointsHome,
    chosen: CheckpointSet,
    remote_folder: str,
    on_file: Callable[[int], None] | None = None,
) -> None:
    """Put ``chosen`` into ``remote_folder/<its name>`` on every worker, each file checked
    against the sha256 it had when it came home (a changed file at home is refused)."""
    for rel, entry in sorted(chosen.files.items()):
        local = home.folder / chosen.name / rel
        data = local.read_bytes()
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise FetchFailed(f"{local} is not what came home (its sha256 differs)")
        path = f"{remote_folder}/{chosen.name}/{rel}"

        def send(worker: int, data: bytes = data, path: str = path) -> None:
            transport.upload(worker, data, path)

        fan_out(transport, send)
        if on_file is not None:
            on_file(len(data))
