"""Files tpuwizard reads back (caches, credentials, ledgers, kept records, the practice sandbox's
address), read as untrusted input: anything running as this user may have replaced them since.

:func:`read_small` reads only a regular file: opened without blocking (a FIFO with no writer
would hang the open, and its read, for ever) and checked after the open, so what is read is what
was checked; never more than a bound's bytes (``/dev/zero`` never ends). :func:`loads` parses JSON
only within bounds the parser survives (Python's gives up with RecursionError past a thousand
levels), with no key given twice (the file would show one value while Python keeps the other),
and no NaN or Infinity. What the file says is then its reader's to check: a time by
:func:`sane_time` (a read time far in the future would be "fresh" for ever, and past year 9999
no date can be printed), an amount by :func:`usable_amount`.

Plain code, no typing or dataclasses at run time: a cached price answers a fresh process in
well under 50 ms (benchmarks/price_cache.py).
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import time

TYPE_CHECKING = False  # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, TypeGuard

KIB = 1024
MIB = 1024 * KIB
# A time read back may be ahead of this computer's clock by this much (another machine's clock,
# a clock set back a little); more is no time tpuwizard wrote.
CLOCK_SKEW_S = 300.0


class NotASmallFile(OSError):
    """A path that names no small regular file: a FIFO, a device, a folder, a socket, or a file
    past its bound. An OSError, so a reader that drops an unreadable cache drops this too."""

    def __init__(self, path: str | os.PathLike[str], why: str, too_large: bool = False) -> None:
        super().__init__(errno.EINVAL, why, str(path))
        self.why, self.too_large = why, too_large

    def __str__(self) -> str:
        return f"{self.filename}: {self.why}"


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY) -> int:
    """A descriptor of ``path`` opened with ``flags``, if it is a regular file; else
    :class:`NotASmallFile` (nothing left open). Never blocks on a FIFO."""
    fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotASmallFile(path, f"it is {_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_fd(fd: int, limit: int, path: str | os.PathLike[str]) -> bytes:
    """At most ``limit`` bytes of an open regular file, from its start; a longer one raises
    :class:`NotASmallFile` (checked by its size first, and by what is read, as it may grow)."""
    if os.fstat(fd).st_size > limit:
        raise NotASmallFile(path, _too_large(limit), too_large=True)
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = os.pread(fd, limit + 1 - size, size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise NotASmallFile(path, _too_large(limit), too_large=True)
    return b"".join(chunks)


def read_small(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them. Raises
    FileNotFoundError (and other OSErrors) as ``open`` does, :class:`NotASmallFile` for what is
    no regular file or is larger."""
    fd = open_regular(path)
    try:
        return read_fd(fd, limit, path)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], limit: int) -> str:
    """:func:`read_small` as UTF-8 (a byte-order mark dropped); UnicodeDecodeError (a
    ValueError) for other bytes."""
    # As the "utf-8-sig" codec decodes, without loading it (every command's Kept line reads
    # through here): one leading mark dropped.
    return read_small(path, limit).removeprefix(b"\xef\xbb\xbf").decode("utf-8")


def read_json(
    path: str | os.PathLike[str], limit: int, max_depth: int | None = 16, max_digits: int = 20
) -> Any:
    """:func:`read_text` parsed by :func:`loads`: OSError or ValueError when it cannot be."""
    return loads(read_text(path, limit), max_depth, max_digits)


class BadJson(ValueError):
    """JSON past the bounds, with a key given twice, or with NaN or Infinity."""


class DuplicateKey(BadJson):
    """A key given twice in one object (``key``: the key, as repr shows it)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"it gives the key {key!r} twice")
        self.key = key


def loads(text: str | bytes, max_depth: int | None = 16, max_digits: int = 20) -> Any:
    """``text`` as JSON, within ``max_depth`` levels of nesting and integers of at most
    ``max_digits`` digits, with no key given twice and every number finite; else
    :class:`BadJson` (or json's own ValueError for text that is no JSON). ``max_depth`` None:
    no scan before the parse (a reader that checks the shape of what it reads, on a hot path),
    and nesting past what the parser follows is still BadJson, never a RecursionError."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if max_depth is not None:
        problem = json_limit_problem(text, max_depth, max_digits)
        if problem:
            raise BadJson(problem)
    try:
        return json.loads(
            text,
            object_pairs_hook=no_duplicate_keys,
            parse_constant=_no_constant,
            parse_float=_finite_float,
        )
    except RecursionError:  # the C parser gives up cleanly, as the ledger's reader relies on
        raise BadJson("its JSON nests deeper than the parser can follow") from None


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook`` that refuses a key given twice."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKey(key)
        data[key] = value
    return data


def _no_constant(name: str) -> float:
    raise BadJson(f"it holds {name}, which is no number tpuwizard writes")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as infinity
        raise BadJson(f"it holds {text[:24]}, a number too large to be one tpuwizard writes")
    return value


# A string (skipped whole, or to the end when unterminated), a bracket, or a number. Compiled
# where first used: compiling it costs a fresh process milliseconds a cache hit does not need.
_JSON_TOKEN = r'"(?:[^"\\]|\\.)*(?:"|\Z)|[\[\]{}]|-?(\d+)(\.\d+)?([eE][-+]?\d+)?'


def json_limit_problem(text: str, max_depth: int, max_digits: int) -> str | None:
    """Why ``text`` is past these bounds, found before any parser sees it (past them the parser
    itself fails: RecursionError, or ValueError past 4300 digits); else None."""
    depth = 0
    for token in re.finditer(_JSON_TOKEN, text, re.S):  # re keeps it compiled once used
        first = token.group()[0]
        if first in "[{":
            depth += 1
            if depth > max_depth:
                return f"its JSON nests deeper than {max_depth} levels"
        elif first in "]}":
            depth -= 1
        elif first != '"':
            digits, fraction, exponent = token.groups()
            if fraction is None and exponent is None and len(digits) > max_digits:
                return f"it holds a {len(digits)}-digit integer (at most {max_digits} here)"
    return None


def number(value: object) -> TypeGuard[float]:
    """An int or float JSON gave (``true`` is not 1 here), finite."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def usable_amount(value: object) -> TypeGuard[float]:
    """A finite number above zero: a price, a limit, a size that can be used as one."""
    return number(value) and value > 0


def sane_time(value: object, now: float | None = None, skew: float = CLOCK_SKEW_S) -> bool:
    """A time in seconds since the epoch that tpuwizard could have written: a finite number,
    not before the epoch, not later than ``now`` plus ``skew``."""
    if not number(value):
        return False
    present = time.time() if now is None else now
    return 0 <= value <= present + skew


def time_problem(value: object, now: float | None = None) -> str | None:
    """Why ``value`` is no sane time (:func:`sane_time`), in words; None when it is one."""
    if sane_time(value, now):
        return None
    if not number(value):
        return f"its time {str(value)[:40]!r} is not a number of seconds"
    if value < 0:
        return "its time is before 1970"
    return "its time is in the future"


def _too_large(limit: int) -> str:
    size = f"{limit // MIB} MiB" if limit >= MIB else f"{max(1, limit // KIB)} KiB"
    return f"it is larger than {size}, more than such a file ever holds"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device (such as /dev/zero)"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def describe(err: BaseException) -> str:
    """Why a file could not be used, in words, from what reading or parsing it raised."""
    if isinstance(err, NotASmallFile):
        return err.why
    if isinstance(err, UnicodeDecodeError):
        return "it is not UTF-8 text"
    if isinstance(err, BadJson):
        return str(err)
    if isinstance(err, ValueError):
        return "it is not whole JSON (torn by a crash, or edited)"
    if isinstance(err, OSError):
        return err.strerror or str(err)
    return f"{type(err).__name__}: {err}"
