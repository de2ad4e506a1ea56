"""Copying a script's folder to every worker, sending only what changed since the last copy.

The worker keeps a manifest (relative path -> size and SHA-256) of what it holds in
``.tpuwizard/work``. Each sync reads it (and, in the same round trip, where the worker's rsync
is), compares it with the local folder, and sends the changed files: with rsync over the
transport's own SSH when both ends have rsync (:mod:`tpuwizard.core.remote.rsync`), else as one
tar through the transport's stdin (so it works wherever a command runs: OpenSSH, gcloud, the
sandbox's local shell). rsync is used only where it pays: its delta transfer sends a small edit
to a big file as a few KiB, but it costs one more SSH connection than the tar, so an edit to a
few small files (the usual save in a watch loop) and a first copy (nothing to diff against) go
as the tar. Either way the new manifest then goes over, and files gone locally are removed there
(only files an earlier sync sent: what the script wrote on the worker stays).
Nothing is sent when nothing changed. Which way was used, and why not rsync, is in the result.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tpuwizard.core.errors import BadInput, RemoteError
from tpuwizard.core.remote import rsync
from tpuwizard.core.remote.bootstrap import VENV
from tpuwizard.core.remote.sent_files import (
    IGNORE_FILE,
    NEVER_SENT_DIRS,
    FolderSent,
    LeftOut,
    SentFile,
    state_inside,
    tally,
    walk,
    whole_home_or_root,
)
from tpuwizard.core.remote.transports import REMOTE_DIR, Raw, Transport, run_cancellable, shell

WORK_DIR = f"{REMOTE_DIR}/work"
MANIFEST = ".tpuwizard-manifest.json"
NEXT_MANIFEST = ".tpuwizard-manifest.next.json"
# What never travels (version control, environments, caches, runs/) and the secrets that never
# do either are decided by sent_files, which the free routes' packing uses too.
IGNORED_DIRS = NEVER_SENT_DIRS
MAX_FOLDER_BYTES = 512 * 1024 * 1024
FOLDER_WALK_TTL_S = 2.0  # how long a script folder's size is taken as known (FolderSizes)
# rsync from this many bytes of changed files that the worker holds an older version of. Below
# it the tar's one round trip is quicker (measured over loopback: a one-line edit 0.9 s by tar,
# 1.2 s by rsync); above it, at a laptop's upload speed, rsync's delta saves seconds.
RSYNC_FROM_BYTES = 1024 * 1024
# A tar this large says how far it is as it goes (about 4 s at a laptop's 20 Mbit/s uplink).
PROGRESS_FROM_BYTES = 10 * 1000 * 1000
# The bootstrapped venv's python, as seen from inside WORK_DIR.
WORK_PYTHON = "../" + VENV.removeprefix(REMOTE_DIR + "/") + "/bin/python"

# Runs on the worker inside WORK_DIR after the tar is unpacked: remove what the new manifest no
# longer lists (only plain relative paths, never outside the folder), then make it current.
PRUNE = """
import json, os
new = json.load(open(".tpuwizard-manifest.next.json"))
try:
    old = json.load(open(".tpuwizard-manifest.json"))
except (OSError, ValueError):
    old = {}
for rel in old:
    if rel not in new and not rel.startswith("/") and ".." not in rel.split("/"):
        try:
            os.remove(rel)
        except OSError:
            pass
os.replace(".tpuwizard-manifest.next.json", ".tpuwizard-manifest.json")
"""


@dataclass(frozen=True)
class FileState:
    size: int
    sha256: str


Manifest = dict[str, FileState]


@dataclass(frozen=True)
class SyncResult:
    changed: list[str]
    deleted: list[str]
    bytes_sent: int
    seconds: float
    method: str = "tar"  # "rsync" or "tar"
    why_not_rsync: str = ""  # when the method is tar
    itemized: list[str] = field(default_factory=list)  # rsync's own list of what it sent
    # The changed files' own sizes, added up: what the plan line's folder size counts, where
    # bytes_sent is what went over the wire (a tar's headers and padding, or rsync's deltas).
    files_bytes: int = 0


class LocalFolder:
    """A local folder's manifest; hashes are reused while a file's size and mtime hold, so a
    watch loop rehashes only what was saved."""

    def __init__(self, root: Path, script: str | None = None) -> None:
        self.root = root.resolve()
        # The script's name in root: sent even when it is a link (as its target's content),
        # since the user named it to be run; every other link stays here.
        self.script = script
        self._hashes: dict[str, tuple[int, int, str]] = {}

    @classmethod
    def of_script(cls, script: Path) -> LocalFolder:
        """The folder that holds ``script`` (the link's folder, when it is a link)."""
        return cls(script.parent, script.name)

    def manifest(self) -> Manifest:
        found: Manifest = {}
        total = 0
        for sent in folder_files(self.root, self.script):
            total += sent.size
            if total > MAX_FOLDER_BYTES:
                raise BadInput(too_big(self.root))
            cached = self._hashes.get(sent.rel)
            if cached and cached[:2] == (sent.size, sent.mtime_ns):
                digest = cached[2]
            else:
                digest = hashlib.sha256(sent.path.read_bytes()).hexdigest()
                self._hashes[sent.rel] = (sent.size, sent.mtime_ns, digest)
            found[sent.rel] = FileState(sent.size, digest)
        return found


def folder_files(root: Path, script: str | None, left: LeftOut | None = None) -> Iterator[SentFile]:
    """The files a copy of ``root`` sends, in a stable order: what
    :func:`tpuwizard.core.remote.sent_files.walk` selects (never a secret, a cache, a link but
    the script, or what ``.tpuwizardignore`` names), the very files the free routes pack."""
    return walk(root, script, left)


def too_big(root: Path) -> str:
    return (
        f"{root} holds more than {MAX_FOLDER_BYTES // 2**20} MiB: move data sets out of the "
        "script's folder and read them on the worker instead."
    )


def folder_problems(script: Path) -> list[str]:
    """Why the folder of ``script`` cannot be copied to the workers (the whole folder goes, as
    ``tpuwizard run`` sends it), said before anything is created: the home folder or the root
    (everything in it would go), or more than :data:`MAX_FOLDER_BYTES` of files."""
    refused = whole_home_or_root(script.parent, script.name, "to the TPU")
    if refused is not None:
        return [refused]
    root = script.parent.resolve()
    return [too_big(root)] if FOLDER_SIZES.too_big(root, script.name) else []


def measure_folder(root: Path, script: str | None) -> FolderSent:
    """What a copy of ``root`` sends (:class:`FolderSent`), its walk stopped past
    :data:`MAX_FOLDER_BYTES` (``over``: it is refused)."""
    left = LeftOut()
    return tally(folder_files(root, script, left), left, MAX_FOLDER_BYTES)


@dataclass(frozen=True)
class _Walk:
    folder_mtime_ns: int
    ignore_mtime_ns: int  # .tpuwizardignore's (0: none): an edit to it is seen at once
    at: float  # the clock's reading when it was walked
    sent: FolderSent


class FolderSizes:
    """What a script's folder sends (and whether it is over :data:`MAX_FOLDER_BYTES`), walked
    at most once per
    ``ttl_s`` per folder: the wizard asks the plan's problems as the user types. A file added to
    or removed from the folder itself changes its mtime, so that is walked again at once; a change
    deeper down is seen within ``ttl_s``. The upload counts again as it sends (LocalFolder), so
    nothing over the limit is ever sent."""

    KEPT = 16  # folders remembered: the few the user types on the way to one

    def __init__(
        self, ttl_s: float = FOLDER_WALK_TTL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl_s, self.clock = ttl_s, clock
        self._walks: dict[tuple[Path, str, Path | None, int], _Walk] = {}

    def too_big(self, root: Path, script: str) -> bool:
        return self.measure(root, script).over

    def measure(self, root: Path, script: str) -> FolderSent:
        key = (root, script, state_inside(root), MAX_FOLDER_BYTES)
        mtime, now = root.stat().st_mtime_ns, self.clock()
        try:
            ignore = (root / IGNORE_FILE).lstat().st_mtime_ns
        except OSError:
            ignore = 0
        walk = self._walks.get(key)
        if (
            walk is None
            or (walk.folder_mtime_ns, walk.ignore_mtime_ns) != (mtime, ignore)
            or not 0 <= now - walk.at < self.ttl_s
        ):
            if len(self._walks) >= self.KEPT:
                self._walks.clear()
            walk = self._walks[key] = _Walk(mtime, ignore, now, measure_folder(root, script))
        return walk.sent


FOLDER_SIZES = FolderSizes()


def folder_sent(script: Path) -> FolderSent:
    """What a launch will copy of the folder of ``script`` to each worker, as the plan line
    and Review say it (walked at most once in a short while)."""
    return FOLDER_SIZES.measure(script.parent.resolve(), script.name)


def folder_sent_if_fine(script: Path | None) -> FolderSent | None:
    """:func:`folder_sent`, or None when there is no script, it is not a file, or its folder
    is refused (the plan's problems say why; the home folder is never walked)."""
    if script is None or not script.is_file() or folder_problems(script):
        return None
    return folder_sent(script)


def remote_state(transport: Transport, worker: int) -> tuple[Manifest, str]:
    """What the worker holds now (empty when nothing, or an unreadable manifest) and where its
    rsync is ('' when it has none), in one round trip."""
    result = transport.run(
        worker,
        f"mkdir -p {WORK_DIR} && cat {WORK_DIR}/{MANIFEST} 2>/dev/null; "
        f"echo; echo {rsync.MARKER}; command -v rsync || true",
        timeout=60,
    )
    listing, _, found = result.stdout.rpartition(rsync.MARKER)
    try:
        data = json.loads(listing.strip() or "{}")
        manifest = {k: FileState(int(v["size"]), str(v["sha256"])) for k, v in data.items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        manifest = {}
    return manifest, found.strip()


def remote_manifest(transport: Transport, worker: int) -> Manifest:
    """What the worker holds now; empty when it holds nothing (or an unreadable manifest)."""
    return remote_state(transport, worker)[0]


def sync_folder(
    transport: Transport,
    worker: int,
    folder: LocalFolder,
    use_rsync: bool = True,
    rsync_from_bytes: int = RSYNC_FROM_BYTES,
    progress: Callable[[int, int], None] | None = None,
) -> SyncResult:
    """Make ``.tpuwizard/work`` on ``worker`` equal to the local folder; send only changes.

    ``progress(sent, total)``: called as a tar of :data:`PROGRESS_FROM_BYTES` or more goes.

    rsync (where both ends have it) carries the change when at least ``rsync_from_bytes`` of
    the changed files are edits of files the worker holds; otherwise the tar does.
    """
    started = time.monotonic()
    local = folder.manifest()
    remote, worker_rsync = remote_state(transport, worker)
    changed = [rel for rel, state in local.items() if remote.get(rel) != state]
    deleted = [rel for rel in remote if rel not in local]
    way = rsync.route(transport, worker, WORK_DIR, worker_rsync) if use_rsync else "not asked"
    why = way if isinstance(way, str) else ""
    edited = sum(local[rel].size for rel in changed if rel in remote)
    files_bytes = sum(local[rel].size for rel in changed)
    if not why and (changed or deleted) and edited < rsync_from_bytes:
        way = why = _why_tar(remote, edited)
    if not changed and not deleted:
        return SyncResult([], [], 0, time.monotonic() - started, "rsync" if not why else "tar", why)
    if isinstance(way, rsync.Route):
        try:
            sent = rsync.send(transport, worker, way, folder.root, changed, timeout=600)
            _finish(transport, worker, _manifest_bytes(local))
            return SyncResult(
                changed,
                deleted,
                sent.bytes_sent,
                time.monotonic() - started,
                "rsync",
                "",
                sent.itemized,
                files_bytes,
            )
        except RemoteError as err:
            why = f"rsync failed ({err})"  # the tar below sends them again: nothing half-done
    data = _tar(folder.root, changed, local)
    _finish(transport, worker, data, tar=True, progress=progress)
    return SyncResult(
        changed, deleted, len(data), time.monotonic() - started, "tar", why, [], files_bytes
    )


def _why_tar(remote: Manifest, edited: int) -> str:
    """Why the tar carries a change rsync could: the words say which (a whole first copy is not
    "a small change", whatever its size)."""
    if not remote:
        return "a first copy: nothing there for rsync to diff against"
    if not edited:
        return "new files only: nothing there for rsync to diff against"
    return "a small change: one tar is quicker"


def _finish(
    transport: Transport,
    worker: int,
    data: bytes,
    tar: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Unpack the tar (or write the bare manifest), then prune and make the manifest current.
    A tar of :data:`PROGRESS_FROM_BYTES` or more is written a piece at a time, each counted."""
    receive = ["tar", "-xf", "-"] if tar else ["cat", Raw(">"), NEXT_MANIFEST]
    command = shell(
        "mkdir",
        "-p",
        WORK_DIR,
        Raw("&&"),
        "cd",
        WORK_DIR,
        Raw("&&"),
        *receive,
        Raw("&&"),
        WORK_PYTHON,
        "-c",
        PRUNE,
    )
    if progress is None or len(data) < PROGRESS_FROM_BYTES:
        result = transport.run(worker, command, timeout=600, stdin=data)
        code, stderr = result.code, result.stderr
    else:  # the transport's own command, as run() would start it, with its stdin counted
        total = len(data)
        code, _, err = run_cancellable(
            transport.argv(worker, command),
            data,
            600,
            transport.cancel,
            f"worker {worker}",
            env=transport.env(worker),
            cwd=transport.cwd(worker),
            progress=lambda sent: progress(sent, total),
        )
        stderr = err.decode(errors="replace")
    if code != 0:
        raise RemoteError(f"worker {worker}: copying the folder failed: {stderr.strip()}")


def _manifest_bytes(manifest: Manifest) -> bytes:
    return json.dumps(
        {rel: {"size": s.size, "sha256": s.sha256} for rel, s in manifest.items()}, sort_keys=True
    ).encode()


def _tar(root: Path, changed: list[str], manifest: Manifest) -> bytes:
    buffer = io.BytesIO()
    # dereference: the one link the manifest holds (the script) goes as its target's content.
    with tarfile.open(fileobj=buffer, mode="w", dereference=True) as tar:
        for rel in changed:
            tar.add(root / rel, arcname=rel, recursive=False)
        listing = _manifest_bytes(manifest)
        info = tarfile.TarInfo(NEXT_MANIFEST)
        info.size, info.mtime = len(listing), int(time.time())
        tar.addfile(info, io.BytesIO(listing))
    return buffer.getvalue()
