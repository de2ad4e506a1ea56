"""A TOML file of tpuwizard's own (the catalog) parsed through a JSON copy kept beside it, as
Python keeps a module's bytecode: importing ``tomllib`` and parsing the catalog cost every
command's start about 8 ms (``fit 48 --json``'s goal is 3x a bare ``python -c pass``), reading
the copy with ``json`` a tenth of that.

The copy names the text it was made from (its length and CRC-32), so an edited file is parsed
again; it is written as bytecode is (not under PYTHONDONTWRITEBYTECODE, and not where the folder
cannot be written, where the file is parsed each time, as before).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import zlib
from pathlib import Path
from typing import Any

from tpuwizard.core import untrusted

MAX_COPY_BYTES = 16 * untrusted.MIB  # the catalog's copy is tens of KiB


def parsed(text: str, kept: Path) -> dict[str, Any]:
    """``text`` (a TOML document) parsed: from the copy at ``kept`` when it was made from this
    very text, else by ``tomllib`` (and the copy kept for the next start)."""
    key = f"{len(text)}-{zlib.crc32(text.encode('utf-8'))}"
    try:  # a regular file only (a FIFO there would hang every start), bounded
        copy = json.loads(untrusted.read_text(kept, MAX_COPY_BYTES))
        if copy["key"] == key and isinstance(copy["data"], dict):
            return copy["data"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        pass  # none yet, another text's, torn, or no copy of ours: parsed below
    import tomllib

    data = tomllib.loads(text)
    if not sys.dont_write_bytecode:
        _keep(data, key, kept)
    return data


def _keep(data: dict[str, Any], key: str, kept: Path) -> None:
    try:
        written = json.dumps({"key": key, "data": data})
    except (TypeError, ValueError):
        return  # a value JSON cannot hold (a TOML date): parsed each time
    if json.loads(written)["data"] != data:
        return  # it would not read back the same
    partial = kept.with_name(f"{kept.name}.{os.getpid()}.partial")
    try:
        kept.parent.mkdir(exist_ok=True)
        partial.write_text(written, "utf-8")
        os.replace(partial, kept)  # whole or not at all, for a start reading it meanwhile
    except OSError:
        with contextlib.suppress(OSError):  # a folder that is a file holds no partial either
            partial.unlink(missing_ok=True)
