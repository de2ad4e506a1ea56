"""Copying files back from a worker: listed without following links, streamed, verified.

The worker lists what the patterns match (:data:`LISTER`), walking the folder itself so that a
link to a folder (``/etc``, ``/``) is reported once and never walked. Each file then comes over
as one byte stream through the transport's own command (OpenSSH, gcloud or the sandbox's local
shell): the worker says its size, then its SHA-256, then sends its bytes (:data:`SENDER`). This
side writes them in chunks to a temporary file beside the destination, hashing as it writes, and
renames it into place only when the size and the hash both match, so memory stays bounded
whatever the size, and a file that did not arrive whole leaves nothing at the destination and is
reported with the reason.

Waits scale with the work, not a fixed time per file: the stream may go ``idle_s`` without a
byte, and the worker's hashing before it sends may take as long as the size allows at
``min_hash_rate``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import select
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tpuwizard.core.cancel import kill_tree
from tpuwizard.core.errors import RemoteError
from tpuwizard.core.remote.sync import MANIFEST
from tpuwizard.core.remote.transports import Raw, Transport, shell

# Runs on the worker (Python 3.10+, the standard library only) in the folder the patterns are
# relative to: what they match, as JSON, with each entry's kind. glob follows links to folders
# (a '**' over a link to '/' would walk the whole disk), so the walk is done here and a link is
# an entry, never a way in. As glob does, '*' and '**' do not match names that start with '.'.
# argv: the upload's manifest (relative path -> size and SHA-256), then the patterns. A file the
# same as when it was uploaded from this computer is no output of the script: it is said so and
# never copied back (a laptop's CPU report fetched from a TPU run would read as a fallback).
LISTER = """
import fnmatch, hashlib, json, os, sys
root = os.path.realpath(os.getcwd())
found = {}
try:
    uploaded = json.load(open(sys.argv[1]))
    uploaded = uploaded if isinstance(uploaded, dict) else {}
except (OSError, ValueError):
    uploaded = {}

def as_uploaded(path):
    entry = uploaded.get(path)
    try:
        if not isinstance(entry, dict) or os.path.getsize(path) != int(entry["size"]):
            return False
        sha = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                sha.update(block)
        return sha.hexdigest() == entry.get("sha256")
    except (OSError, KeyError, TypeError, ValueError):
        return False

def kind_of(path):
    if os.path.islink(path):
        if not os.path.exists(path):
            return "dangling link"
        if not os.path.realpath(path).startswith(root + os.sep):
            return "link outside the folder"
        if os.path.isdir(path):
            return "link to a folder, not followed"
    if os.path.isdir(path):
        return "directory"
    if not os.path.isfile(path):
        return "special file"
    return "as uploaded" if as_uploaded(path) else "file"

def names(folder):
    try:
        return sorted(os.listdir(folder or "."))
    except OSError:
        return []

def join(folder, name):
    return folder + "/" + name if folder else name

def note(path):
    found.setdefault(path, kind_of(path))

def visit(folder, parts):
    head, rest = parts[0], parts[1:]
    if head == "**":
        if rest:
            visit(folder, rest)  # '**' may stand for no folder at all
        for name in names(folder):
            path = join(folder, name)
            if name.startswith("."):
                continue
            if os.path.islink(path):
                if not rest or os.path.isdir(path):
                    note(path)  # reported once, not walked
            elif os.path.isdir(path):
                visit(path, parts)
            elif not rest:
                note(path)
        return
    if any(c in head for c in "*?["):
        hidden = head.startswith(".")
        matches = [n for n in names(folder) if fnmatch.fnmatchcase(n, head)
                   and (hidden or not n.startswith("."))]
    else:
        matches = [head] if os.path.lexists(join(folder, head)) else []
    for name in matches:
        path = join(folder, name)
        if not rest:
            note(path)
        elif os.path.islink(path):
            if os.path.isdir(path):
                note(path)
        elif os.path.isdir(path):
            visit(path, rest)

for pattern in sys.argv[2:]:
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if parts:
        visit("", parts)
print(json.dumps([{"path": p, "kind": k} for p, k in found.items()]))
"""

# Runs on the worker: one file's size, then its SHA-256, then its bytes, each write looped
# until the kernel took all of it (one write of a big buffer to a pipe takes at most ~2 GiB).
# argv: path, chunk size, and the most bytes one write may take (0: no limit; tests set one to
# force the short writes a kernel makes).
SENDER = """
import hashlib, os, stat, sys
path, chunk, cap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if not os.path.realpath(path).startswith(os.path.realpath(os.getcwd()) + os.sep):
    sys.exit("it is outside the folder")
fd = os.open(path, os.O_RDONLY)
info = os.fstat(fd)
if not stat.S_ISREG(info.st_mode):
    sys.exit("it is not a regular file")

def send(data):
    view = memoryview(data)
    while view:
        view = view[os.write(1, view[:cap] if cap else view):]

def chunks():
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        data = os.read(fd, chunk)
        if not data:
            return
        yield data

send(b"%d\\n" % info.st_size)
first = hashlib.sha256()
for data in chunks():
    first.update(data)
send(first.hexdigest().encode() + b"\\n")
again = hashlib.sha256()
for data in chunks():
    again.update(data)
    send(data)
if again.digest() != first.digest():
    sys.exit("it changed while it was being copied")
"""

AS_UPLOADED = (
    "unchanged since it was uploaded from this computer (your script did not write it), "
    "so not copied back"
)

HEADER_MAX = 128  # bytes: a size line and a hash line are far shorter


@dataclass(frozen=True)
class FetchLimits:
    """How one file is read: chunk sizes and how long a silent stream may last."""

    chunk: int = 1 << 20  # bytes per read and per write, on both ends
    idle_s: float = 120.0  # no byte for this long: the stream is dead
    min_hash_rate: float = 20e6  # bytes/s: the worker hashes at least this fast before sending
    # The most bytes one write may take (0: as many as the OS takes): set by tests to force
    # the short writes a kernel makes on big buffers, on both ends.
    max_write: int = 0


class FetchFailed(RemoteError):
    """A file did not arrive whole; nothing of it is at the destination."""


@dataclass(frozen=True)
class FetchOutcome:
    """One entry the patterns matched: copied back to ``local``, or not, and why.

    ``incomplete`` marks a file that should have come back and did not (the run failed), as
    against an entry that is not a file to copy (a folder, a link): that one is only reported.
    """

    rel: str
    local: str | None = None
    reason: str = ""
    incomplete: bool = False


def fetch_matching(
    transport: Transport,
    folder: str,
    python: str,
    patterns: Sequence[str],
    dest: Path,
    report: Callable[[FetchOutcome], None],
    worker: int = 0,
    limits: FetchLimits | None = None,
) -> bool:
    """Copy what ``patterns`` match in ``folder`` (under the worker's home) into ``dest``;
    True when the worker listed what they match (so what they did not match is known).

    ``python`` runs the worker's side, as a path from ``folder``. Each entry is reported as it
    is settled; one odd entry (a folder, a link, a name with a space or a newline, a file that
    broke off) never costs the others. Local writes stay inside ``dest`` whatever the remote
    names say.
    """
    if not patterns:
        return True
    listing = transport.run(
        worker,
        shell("cd", folder, Raw("&&"), python, "-c", LISTER, MANIFEST, *patterns),
        timeout=600,
    )
    try:
        entries = json.loads(listing.stdout or "[]")
    except json.JSONDecodeError:
        report(FetchOutcome("*", None, f"could not list files: {listing.stderr.strip()}", True))
        return False
    base = dest.resolve()
    for entry in entries:
        rel, kind = str(entry.get("path", "")), entry.get("kind")
        target = (base / rel).resolve()
        if not target.is_relative_to(base) or target == base:
            report(FetchOutcome(rel, None, "outside the script's folder"))
        elif kind == "as uploaded":
            report(FetchOutcome(rel, None, AS_UPLOADED))
        elif kind != "file":
            report(FetchOutcome(rel, None, f"not a regular file ({kind})"))
        else:
            try:
                fetch_file(transport, worker, folder, python, rel, target, limits)
            except FetchFailed as err:
                report(FetchOutcome(rel, None, str(err), True))
            else:
                report(FetchOutcome(rel, str(target)))
    return listing.code == 0


def fetch_file(
    transport: Transport,
    worker: int,
    folder: str,
    python: str,
    rel: str,
    target: Path,
    limits: FetchLimits | None = None,
) -> int:
    """Stream ``folder/rel`` from ``worker`` into ``target``; its size once size and hash match.

    Raises :class:`FetchFailed` with the reason, leaving nothing at ``target`` (an older copy
    there is removed too: it is not what the worker holds now).
    """
    limits = limits or FetchLimits()
    command = shell(
        "cd", folder, Raw("&&"), python, "-c", SENDER, rel, str(limits.chunk), str(limits.max_write)
    )
    part: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # Made as a plain open makes files (the umask applies), named so it cannot clash.
        part = str(target.parent / f".{target.name[:64]}.{secrets.token_hex(6)}.part")
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as out, tempfile.TemporaryFile() as errors:
            proc = _start(transport, worker, command, errors)
            try:
                size = _receive(proc, out.fileno(), limits, lambda: _said(errors))
            finally:
                kill_tree(proc)
                proc.wait()
                if proc.stdout is not None:
                    proc.stdout.close()
                if transport.cancel is not None:
                    transport.cancel.unregister(proc)
        os.replace(part, target)
        return size
    except BaseException as err:
        if part is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part)
        with contextlib.suppress(OSError):
            if not target.is_dir():
                target.unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise FetchFailed(f"cannot write it here: {err}") from err
        raise
    finally:
        if transport.cancel is not None:
            transport.cancel.check()  # a stop broke the stream: the stop is the news


def _start(
    transport: Transport, worker: int, command: str, errors: IO[bytes]
) -> subprocess.Popen[bytes]:
    try:
        proc = subprocess.Popen(
            transport.argv(worker, command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,  # a file, not a pipe: whatever the worker says, nothing blocks
            env=transport.env(worker),
            cwd=transport.cwd(worker),
            start_new_session=True,  # so a cancel can kill it with everything it started
        )
    except OSError as err:
        raise FetchFailed(f"worker {worker}: cannot start {err.filename}: {err}") from err
    if transport.cancel is not None:
        transport.cancel.register(proc)
    return proc


def _said(errors: IO[bytes]) -> str:
    """The last thing the worker (or ssh) said on its standard error."""
    errors.seek(0, os.SEEK_END)
    errors.seek(max(0, errors.tell() - 2000))
    lines = errors.read().decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else ""


def _receive(
    proc: subprocess.Popen[bytes], fd: int, limits: FetchLimits, said: Callable[[], str]
) -> int:
    """Read the header and the bytes into ``fd``; the size when all of it arrived intact."""
    assert proc.stdout is not None
    stream = _Stream(proc.stdout.fileno(), limits.chunk)

    def failed(what: str) -> FetchFailed:
        why = said()
        return FetchFailed(f"{what}: {why}" if why else what)

    size_line = stream.line(limits.idle_s)
    if not size_line.isdigit():
        raise failed("the worker sent no size") if size_line else _ended(proc, failed)
    size = int(size_line)
    digest = stream.line(limits.idle_s + size / limits.min_hash_rate)
    if len(digest) != 64:
        raise failed("the worker sent no SHA-256") if digest else _ended(proc, failed)
    sha, arrived = hashlib.sha256(), 0
    while data := stream.read(limits.idle_s):
        arrived += len(data)
        if arrived > size:
            raise failed(f"more than the {size} bytes the worker announced arrived")
        sha.update(data)
        _write_all(fd, data, limits.max_write)
    try:
        code = proc.wait(timeout=limits.idle_s)
    except subprocess.TimeoutExpired:
        raise failed(f"the worker's side did not end after sending {arrived} bytes") from None
    if code != 0:
        raise failed(f"the worker's side exited {code} after {arrived} of {size} bytes")
    if arrived != size:
        raise failed(f"the stream was cut short: {arrived} of {size} bytes arrived")
    if sha.hexdigest() != digest:
        raise failed(f"its SHA-256 differs from the worker's ({sha.hexdigest()} != {digest})")
    return size


def _ended(proc: subprocess.Popen[bytes], failed: Callable[[str], FetchFailed]) -> FetchFailed:
    try:
        code = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        return failed("the worker's side sent nothing")
    return failed(f"the worker's side exited {code} before sending")


def _write_all(fd: int, data: bytes, max_write: int) -> None:
    """Write every byte: a write may take fewer than it was given."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view[:max_write] if max_write else view) :]
        except OSError as err:
            raise FetchFailed(f"cannot write it here: {err.strerror}") from err


class _Stream:
    """Chunks from a pipe, each read waiting at most a given time for the first byte."""

    def __init__(self, fd: int, chunk: int) -> None:
        self.fd, self.chunk = fd, chunk
        self.pending = b""  # read past a header line: the first bytes of the file
        self.poller = select.poll()  # not select(): it cannot wait on a descriptor over 1023
        self.poller.register(fd, select.POLLIN)

    def read(self, timeout: float) -> bytes:
        """The next bytes (at most one chunk), or b"" at the end of the stream."""
        if self.pending:
            data, self.pending = self.pending, b""
            return data
        if not self.poller.poll(timeout * 1000):
            raise FetchFailed(f"no data came for {timeout:.0f} s")
        return os.read(self.fd, self.chunk)

    def line(self, timeout: float) -> str:
        """One header line without its newline; what came before the end if it ended."""
        text = b""
        while b"\n" not in text and len(text) <= HEADER_MAX:
            data = self.read(timeout)
            if not data:
                return text.decode(errors="replace").strip()
            text += data
        head, _, self.pending = text.partition(b"\n")
        return head.decode(errors="replace").strip()
