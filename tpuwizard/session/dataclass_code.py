"""The methods ``@dataclass`` writes for tpuwizard's classes, compiled once and kept beside each
module's bytecode.

Python 3.11 and 3.12 make each generated method (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, a frozen class's ``__setattr__`` and ``__delattr__``) by writing its source and
calling ``exec`` on it (3.13 one text per class): parsed and compiled again in every process.
On ``tpuwizard fit 48 --json``'s start that is 72 texts, 36 KB, about a sixth of the command's
instructions with a kept node in the ledger (51 M of 296 M, callgrind; issue 54). A class's
texts are the same in every start (its fields, in order), so the command line's entry keeps
their compiled code as Python keeps a module's: one file per module, beside its bytecode
(``ledger.cpython-311.dataclasses`` beside ``ledger.cpython-311.pyc``), checked against this
Python's magic number, read when the module makes its first dataclass, written only where
bytecode is (not under PYTHONDONTWRITEBYTECODE, not where the folder cannot be written).

A text is looked up whole, so a changed class (a field added) is a text not yet kept: compiled
as before, and the module's file written again at exit with the texts it used. Running the kept
code is what ``exec`` on the text does (the same code, globals and namespace); only the parse
and the compile are saved. Only tpuwizard's own modules are served (another package's classes
are made as Python makes them), and only from the command line's entry
(:func:`keep_during_command`): a test that imports tpuwizard in its own process builds its
dataclasses as Python does.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

SUFFIX = ".dataclasses"  # in place of the bytecode's ".pyc"
MAX_FILE_BYTES = 4 * 1024 * 1024  # a module's classes are a few KB of code
SERVED = "tpuwizard."  # the modules whose classes are served from their files


class ModuleCodes:
    """One module's generated methods: each source text and its compiled code."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kept = read_codes(path)
        self.used: dict[str, CodeType] = {}
        self.compiled = False  # a text was missing: the file is written again at exit

    def code(self, source: str) -> CodeType:
        code = self.kept.get(source)
        if code is None:
            # As exec compiles a text: its file name, and no __future__ flags of this module.
            code = self.kept[source] = compile(source, "<string>", "exec", dont_inherit=True)
            self.compiled = True
        self.used[source] = code
        return code

    def write(self) -> None:
        """The texts this process used, whole or not at all (a start reading it meanwhile)."""
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.partial")
        try:
            partial.write_bytes(MAGIC_NUMBER + marshal.dumps(self.used))
            os.replace(partial, self.path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)


class CodeBook:
    """Every served module's codes, read when it first makes a dataclass."""

    def __init__(self) -> None:
        self.modules: dict[str, ModuleCodes] = {}

    def exec(self, source: Any, globals_: Any = None, locals_: Any = None) -> None:
        """``exec``, for ``dataclasses``: a served module's text runs its kept code."""
        module, cached = _served(source, globals_)
        if module is None or cached is None:
            if globals_ is None:  # as exec would: in the caller's namespaces
                caller = sys._getframe(1)
                globals_ = caller.f_globals
                locals_ = caller.f_locals if locals_ is None else locals_
            exec(source, globals_, locals_)
            return
        codes = self.modules.get(module)
        if codes is None:
            codes = self.modules[module] = ModuleCodes(Path(cached).with_suffix(SUFFIX))
        exec(codes.code(source), globals_, locals_)

    def write(self) -> None:
        """Keep what this process compiled, for the next start."""
        if sys.dont_write_bytecode:
            return
        for codes in self.modules.values():
            if codes.compiled:
                codes.write()


def _served(source: Any, globals_: Any) -> tuple[str | None, str | None]:
    """A served module's name and bytecode path, where ``source`` is a text one of them runs."""
    if not (isinstance(source, str) and isinstance(globals_, dict)):
        return None, None
    module, cached = globals_.get("__name__"), globals_.get("__cached__")
    if isinstance(module, str) and module.startswith(SERVED) and isinstance(cached, str):
        return module, cached
    return None, None


def read_codes(path: Path) -> dict[str, CodeType]:
    """The kept codes; none where the file is missing, too large, another Python's, or torn.
    Trusted as the bytecode beside it is: both are this installation's own."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES or not data.startswith(MAGIC_NUMBER):
            return {}
        codes = marshal.loads(data[len(MAGIC_NUMBER) :])
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {t: c for t, c in codes.items() if isinstance(t, str) and isinstance(c, CodeType)}


def keep_during_command() -> CodeBook:
    """From here to the process's end, ``dataclasses`` runs tpuwizard's generated methods from
    the kept code; what it compiled is written at exit."""
    book = CodeBook()
    # A module global named exec is what the module's own `exec(...)` calls find first.
    setattr(dataclasses, "exec", book.exec)  # noqa: B010 (mypy: the module declares no exec)
    atexit.register(book.write)
    return book
