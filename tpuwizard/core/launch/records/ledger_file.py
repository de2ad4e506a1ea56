"""A ledger's file of JSON lines, appended so that a disk that refuses a line never loses it nor
stops what comes after it: a delete, the list that verifies it, the words about a node.

A line is appended under an exclusive lock and fsynced. When this computer's disk refuses it
(full, read-only, over a quota, the ledger's path not a file), the line is *held*: appended to
this ledger's fallback file in a folder of this user's alone under the system's temporary folder
or, where that refuses too, kept in this process's memory. Every read gives the ledger's lines,
then the held ones, so every command (and every :class:`LedgerFile` of the same path in this
process) sees them; the first write or read that the ledger's disk takes again moves them into
the ledger, oldest first, and so does this process's end.

A line that must come before a create (an ``intent``) is never held: ``append(..., hold=False)``
raises, and the caller creates nothing. A TPU recorded only in a temporary file or in memory
could be lost to a crash or a reboot, and found by nobody.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core import untrusted

# A record is a few hundred bytes: this is hundreds of thousands of launches. A ledger past it is
# refused rather than read whole (a sparse file of terabytes, put in its place).
MAX_LEDGER_BYTES = 256 * untrusted.MIB

# How a line reaches the ledger's file (a parameter, so that a test can make the disk refuse).
Appender = Callable[[Path, bytes], None]


@dataclass(frozen=True)
class Held:
    """A record the ledger's disk refused: why, and where it is kept until the disk takes it."""

    ledger: Path
    reason: str  # the disk's words: "No space left on device"
    kept_in: Path | None  # the fallback file that holds it; None: only this process's memory

    def facts(self) -> tuple[str, str, str | None]:
        """(why, the ledger, where it is held or None), as the event that says it takes them."""
        return self.reason, str(self.ledger), str(self.kept_in) if self.kept_in else None


def append_lines(path: Path, data: bytes) -> None:
    """Append ``data`` (whole lines) to ``path`` under an exclusive lock, fsynced; a write the
    disk refuses part way is cut back off (no torn line is left for the next one)."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _append_locked(fd, data)
    finally:
        os.close(fd)  # closing releases the lock


def _append_locked(fd: int, data: bytes) -> None:
    size = os.fstat(fd).st_size
    # A crash mid-write leaves a torn last line without its newline: start a new line, or this
    # record would be glued onto the torn one and lost with it.
    if size and os.pread(fd, 1, size - 1) != b"\n":
        data = b"\n" + data
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):  # half a record would be read as a torn line
            os.ftruncate(fd, size)
        raise


def fallback_folder(base: Path | None = None) -> Path | None:
    """This user's folder for held lines under ``base`` (the system's temporary folder), made
    if need be; None where it cannot be trusted (another user's, a link, open to others) or
    made."""
    folder = (base if base is not None else _temp()) / f"tpuwizard-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    return folder if _private(folder) else None


def _temp() -> Path:
    import tempfile  # where it is needed: every command reads a ledger, few hold a line

    return Path(tempfile.gettempdir())


# Where the system's temporary folder can be, in the order Python's tempfile documents for
# gettempdir(): $TMPDIR, $TEMP, $TMP, then /tmp, /var/tmp, /usr/tmp, then the working folder.
TEMP_ENV = ("TMPDIR", "TEMP", "TMP")
TEMP_FOLDERS = ("/tmp", "/var/tmp", "/usr/tmp")


def _temp_candidates() -> list[str]:
    found = [folder for name in TEMP_ENV if (folder := os.environ.get(name))]
    found += TEMP_FOLDERS
    try:
        found.append(os.getcwd())
    except OSError:  # a working folder since deleted: tempfile tries "." then
        found.append(os.curdir)
    return found


def nothing_held_anywhere(ledger_name: str) -> bool:
    """True when no place that can be the system's temporary folder holds, in this user's
    fallback folder, a held file of a ledger named ``ledger_name``: then a read need not ask
    which place it is (importing tempfile and its probe, which writes a file there, and hashlib
    for the file's name cost a start with a kept node about 5 ms). Once tempfile is loaded,
    asking it is free and honours its own setting."""
    if "tempfile" in sys.modules:
        return False
    folder = f"tpuwizard-{os.getuid()}"
    return not any(_may_hold(os.path.join(d, folder), ledger_name) for d in _temp_candidates())


def _may_hold(folder: str | Path, ledger_name: str) -> bool:
    """Whether ``folder`` may hold a held file of a ledger named ``ledger_name``: one of that
    name is there, or the folder is there but cannot be listed (opening the file says why)."""
    start = f"{ledger_name}."
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return any(n.startswith(start) and n.endswith(".held") for n in names)


def _private(folder: Path) -> bool:
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    )


@contextlib.contextmanager
def _locked_held(path: Path, create: bool, exclusive: bool = True) -> Iterator[int | None]:
    """The held-lines file, open and locked (None: there is none). Never through a link; one
    unlinked while this waited for the lock (its lines moved into the ledger) is opened again."""
    flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | (os.O_CREAT if create else 0)
    while True:
        try:
            fd = os.open(path, flags, 0o600)
        except FileNotFoundError:
            if create:
                raise
            yield None
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            if os.fstat(fd).st_nlink:
                yield fd
                return
        finally:
            os.close(fd)


def _read_all(fd: int) -> bytes:
    return os.pread(fd, os.fstat(fd).st_size, 0)


# Lines held in this process's memory, per ledger (its absolute path), oldest first, with the
# file that writes them once the disk allows; one lock for them and for the moves.
_IN_MEMORY: dict[str, tuple[LedgerFile, list[bytes]]] = {}
_LOCK = threading.RLock()
_AT_EXIT: list[bool] = []


def _write_held_at_exit() -> None:
    """At this process's end, a last try to write what only its memory holds."""
    with _LOCK:
        for file, _lines in list(_IN_MEMORY.values()):
            with contextlib.suppress(OSError):
                file.move_held()


class LedgerFile:
    """One ledger's lines: appended, held when the disk refuses, read with the held ones."""

    def __init__(
        self, path: Path, fallback_base: Path | None = None, append: Appender = append_lines
    ) -> None:
        self.path = path
        self._base = fallback_base  # under which this user's fallback folder is; None: temp
        self._append = append
        self._key = os.path.abspath(path)

    def _memory(self) -> list[bytes]:
        return _IN_MEMORY.get(self._key, (self, []))[1]

    def fallback_path(self, create: bool = False) -> Path | None:
        """The file that holds this ledger's refused lines (its folder made with ``create``);
        None where no private folder can be had."""
        if create:
            folder = fallback_folder(self._base)
        else:
            if self._base is None and nothing_held_anywhere(self.path.name):
                return None
            base = self._base if self._base is not None else _temp()
            folder = base / f"tpuwizard-{os.getuid()}"
            if not _private(folder) or not _may_hold(folder, self.path.name):
                return None
        if folder is None:
            return None
        import hashlib  # here: loading OpenSSL costs a start about 2 ms, and few hold a line

        digest = hashlib.sha256(self._key.encode()).hexdigest()[:16]
        return folder / f"{self.path.name}.{digest}.held"

    def append(self, line: bytes, hold: bool = True) -> Held | None:
        """Append ``line`` after any held ones; None once it is in the ledger. A disk that
        refuses: with ``hold``, the line is held and where is said; else the OSError is raised
        and nothing is kept."""
        with _LOCK:
            try:
                self.move_held()
                self._append(self.path, line)
                return None
            except OSError as err:
                if not hold:
                    raise
                return self._hold(line, err)

    def move_held(self) -> None:
        """Move the held lines (the fallback file's, then memory's) into the ledger, oldest
        first; raises the disk's OSError, changing nothing, while it refuses."""
        with _LOCK:
            memory = self._memory()
            fallback = self.fallback_path()
            if fallback is not None:
                with _locked_held(fallback, create=False) as fd:
                    if fd is not None:
                        lines = _read_all(fd) + b"".join(memory)
                        if lines.strip():
                            self._append(self.path, lines)
                        fallback.unlink()  # while locked: a writer waiting opens a new one
                        memory.clear()
                        return
            if memory:
                self._append(self.path, b"".join(memory))
                memory.clear()

    def _hold(self, line: bytes, err: OSError) -> Held:
        reason = err.strerror or str(err)
        entry = _IN_MEMORY.setdefault(self._key, (self, []))
        memory = entry[1]
        fallback = self.fallback_path(create=True)
        if fallback is not None:
            try:
                with _locked_held(fallback, create=True) as fd:
                    assert fd is not None  # made above
                    _append_locked(fd, b"".join(memory) + line)  # memory's lines are older
                memory.clear()
                return Held(self.path, reason, fallback)
            except OSError:
                pass
        memory.append(line)
        if not _AT_EXIT:
            _AT_EXIT.append(True)
            atexit.register(_write_held_at_exit)
        return Held(self.path, reason, None)

    def read(self) -> bytes:
        """The ledger's lines, then the held ones (moved into it first where its disk allows).
        A ledger that cannot be read raises (its records would be missed)."""
        with _LOCK:
            with contextlib.suppress(OSError):  # still refused: read them where they are held
                self.move_held()
            try:  # untrusted input (core/untrusted.py): a FIFO or a device in its place is
                # refused (its read would block for ever, or never end), never read as empty
                ledger = untrusted.open_regular(self.path)
            except FileNotFoundError:
                text = b""
            else:
                try:
                    fcntl.flock(ledger, fcntl.LOCK_SH)
                    text = untrusted.read_fd(ledger, MAX_LEDGER_BYTES, self.path)
                finally:
                    os.close(ledger)  # the lock goes with it
            held = b""
            fallback = self.fallback_path()
            if fallback is not None:
                with contextlib.suppress(OSError), _locked_held(fallback, False, False) as fd:
                    held = _read_all(fd) if fd is not None else b""
            held += b"".join(self._memory())
        if held and text and not text.endswith(b"\n"):
            text += b"\n"  # a torn last line stays apart from the first held one
        return text + held
