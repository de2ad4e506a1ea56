"""The methods ``@dataclass`` writes for tpuwizard's classes, run from code kept beside each
module's bytecode (tpuwizard/session/dataclass_code.py): a class made from kept code is the class
Python makes, a changed class is compiled again, a torn or foreign file is never run, another
package's classes are left alone, and the command line's entry is what turns it on."""

from __future__ import annotations

import dataclasses
import inspect
import json
import marshal
import os
import subprocess
import sys
import types
from importlib.util import MAGIC_NUMBER

import pytest

from tpuwizard.session import dataclass_code
from tpuwizard.session.dataclass_code import SUFFIX, CodeBook, read_codes

# Class shapes tpuwizard uses: frozen, defaults and factories, ordering, keyword-only, slots.
SHAPES = {
    "frozen": "@dataclass(frozen=True)\nclass C:\n    a: int\n    b: str = 'x'\n",
    "factory": "@dataclass\nclass C:\n    a: int\n    extra: dict = field(default_factory=dict)\n",
    "order": "@dataclass(order=True)\nclass C:\n    a: int\n    b: int = 2\n",
    "kw_only": "@dataclass(kw_only=True)\nclass C:\n    a: int\n    b: int | None = None\n",
    "slots": "@dataclass(frozen=True, slots=True)\nclass C:\n    a: int\n    b: float = 1.5\n",
    "empty": "@dataclass(frozen=True)\nclass C:\n    pass\n",
}
HEADER = "from __future__ import annotations\nfrom dataclasses import dataclass, field\n"


@pytest.fixture
def writes_bytecode(monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def make(
    source: str, name: str, tmp_path, monkeypatch, book: CodeBook | None, cached: bool = True
) -> type:
    """Class ``C`` of ``source``, made in a module ``name`` whose bytecode would be in tmp_path
    (``cached``), with ``book`` serving dataclasses (None: Python's own exec)."""
    module = types.ModuleType(name)
    (tmp_path / "__pycache__").mkdir(exist_ok=True)
    if cached:
        vars(module)["__cached__"] = str(tmp_path / "__pycache__" / "probe.cpython-311.pyc")
    monkeypatch.setitem(sys.modules, name, module)
    if book is None:
        monkeypatch.delattr(dataclasses, "exec", raising=False)
    else:
        monkeypatch.setattr(dataclasses, "exec", book.exec, raising=False)
    try:
        exec(HEADER + source, module.__dict__)
    finally:
        monkeypatch.delattr(dataclasses, "exec", raising=False)
    return module.C


def behaviour(cls: type) -> dict[str, object]:
    """What a dataclass's generated methods do, as comparable values."""
    fields = [f.name for f in dataclasses.fields(cls)]
    args = {"a": 1} if "a" in fields else {}
    one, same = cls(**args), cls(**args)
    seen: dict[str, object] = {
        "signature": str(inspect.signature(cls)),
        "repr": repr(one),
        "eq": one == same,
        "fields": fields,
    }
    if cls.__hash__ is not None:
        seen["hash"] = hash(one) == hash(same)
    try:
        seen["lt"] = one < same
    except TypeError:
        seen["lt"] = "unordered"
    try:
        one.a = 5
        seen["set"] = repr(one)
    except (dataclasses.FrozenInstanceError, AttributeError) as err:
        seen["set"] = type(err).__name__
    return seen


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_class_from_kept_code_is_the_class_python_makes(
    shape, tmp_path, monkeypatch, writes_bytecode
):
    source = SHAPES[shape]
    python_makes = behaviour(make(source, "tpuwizard.probe", tmp_path, monkeypatch, None))
    first = CodeBook()
    compiled = behaviour(make(source, "tpuwizard.probe", tmp_path, monkeypatch, first))
    first.write()
    kept_file = tmp_path / "__pycache__" / f"probe.cpython-311{SUFFIX}"
    assert kept_file.exists()
    second = CodeBook()
    from_kept = behaviour(make(source, "tpuwizard.probe", tmp_path, monkeypatch, second))
    assert python_makes == compiled == from_kept
    assert not second.modules["tpuwizard.probe"].compiled  # every text was in the file
    kept_file.write_bytes(kept_file.read_bytes() + b"")
    written = kept_file.stat().st_mtime_ns
    second.write()  # nothing compiled: the file is left as it was
    assert kept_file.stat().st_mtime_ns == written


def test_each_text_is_compiled_once_in_a_process(tmp_path, monkeypatch):
    compiled: list[str] = []

    def counting(source: str, *args: object, **kwargs: object) -> object:
        compiled.append(source)
        return compile(source, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(dataclass_code, "compile", counting, raising=False)
    book = CodeBook()
    make(SHAPES["frozen"], "tpuwizard.probe", tmp_path, monkeypatch, book)
    first = len(compiled)
    make(SHAPES["frozen"], "tpuwizard.probe", tmp_path, monkeypatch, book)
    # frozen: six methods, a text each (3.13 writes one text for the whole class)
    assert first == (1 if sys.version_info >= (3, 13) else 6) and len(compiled) == first


def test_a_changed_class_is_compiled_again_and_its_old_texts_dropped(
    tmp_path, monkeypatch, writes_bytecode
):
    book = CodeBook()
    make(SHAPES["frozen"], "tpuwizard.probe", tmp_path, monkeypatch, book)
    book.write()
    path = tmp_path / "__pycache__" / f"probe.cpython-311{SUFFIX}"
    old = set(read_codes(path))
    grown = SHAPES["frozen"] + "    c: int = 3\n"
    book = CodeBook()
    cls = make(grown, "tpuwizard.probe", tmp_path, monkeypatch, book)
    assert book.modules["tpuwizard.probe"].compiled
    assert repr(cls(1)) == "C(a=1, b='x', c=3)"
    book.write()
    new = set(read_codes(path))
    old_init = {t for t in old if "def __init__" in t}
    assert old_init and not old_init & new  # the file holds the texts the module uses now
    assert [t for t in new if "def __init__" in t and "'c'" in t]


@pytest.mark.parametrize(
    "content",
    [
        b"",  # empty
        b"\x00\x00\r\n" + marshal.dumps({}),  # another Python's magic number
        MAGIC_NUMBER + marshal.dumps({"t": 1})[:-2],  # torn
        MAGIC_NUMBER + marshal.dumps(["not", "a", "dict"]),
        MAGIC_NUMBER + marshal.dumps({1: compile("x = 1", "<string>", "exec")}),  # no text key
        MAGIC_NUMBER + marshal.dumps({"x = 1": "not code"}),
    ],
)
def test_a_torn_or_foreign_file_is_never_run(tmp_path, content):
    path = tmp_path / f"m.cpython-311{SUFFIX}"
    path.write_bytes(content)
    assert read_codes(path) == {}


def test_a_file_too_large_is_not_read(tmp_path, monkeypatch):
    path = tmp_path / f"m.cpython-311{SUFFIX}"
    path.write_bytes(MAGIC_NUMBER + marshal.dumps({"x = 1": compile("x = 1", "<s>", "exec")}))
    assert read_codes(path)
    monkeypatch.setattr(dataclass_code, "MAX_FILE_BYTES", path.stat().st_size - 1)
    assert read_codes(path) == {}


@pytest.mark.parametrize(
    ("module", "cached"),
    [
        ("rich.probe", True),  # another package's class: made as Python makes it
        ("tpuwizard.probe", False),  # no bytecode path (a module made in memory)
    ],
)
def test_only_tpuwizards_modules_with_bytecode_are_served(
    module, cached, tmp_path, monkeypatch, writes_bytecode
):
    book = CodeBook()
    cls = make(SHAPES["frozen"], module, tmp_path, monkeypatch, book, cached)
    assert repr(cls(1)) == "C(a=1, b='x')"
    book.write()
    assert book.modules == {}
    assert list((tmp_path / "__pycache__").iterdir()) == []


def test_no_file_where_python_writes_no_bytecode_or_cannot(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    book = CodeBook()
    make(SHAPES["frozen"], "tpuwizard.probe", tmp_path, monkeypatch, book)
    book.write()
    assert list((tmp_path / "__pycache__").iterdir()) == []
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (tmp_path / "file").write_text("")
    book.modules["tpuwizard.probe"].path = tmp_path / "file" / f"probe{SUFFIX}"
    book.write()  # its folder is a file: refused, and the class was made all the same
    assert sorted(p.name for p in tmp_path.iterdir()) == ["__pycache__", "file"]
    assert list((tmp_path / "__pycache__").iterdir()) == []


def test_a_text_without_globals_runs_where_exec_would_run_it():
    book, names = CodeBook(), {"__name__": "tpuwizard.probe"}  # no bytecode path: not served
    book.exec("y = 2", names)
    assert names["y"] == 2
    book.exec("global PROBED\nPROBED = 3")  # the caller's globals: this module's
    assert globals().pop("PROBED") == 3
    assert not hasattr(dataclass_code, "PROBED")


# The command line's entry as the console script runs it, then what made its dataclasses.
ENTRY = """
import dataclasses, json, sys
sys.argv = ["tpuwizard", "fit", "48", "--json"]
from tpuwizard.start import run
try:
    run()
except SystemExit:
    pass
book = dataclasses.exec.__self__
compiled = [name for name, codes in book.modules.items() if codes.compiled]
print(json.dumps({"served": sorted(book.modules), "compiled": compiled}), file=sys.stderr)
"""


def test_the_command_lines_entry_compiles_once_and_the_next_start_reads(tmp_path):
    # Bytecode, and the code kept beside it, under tmp_path: the checkout's folders stay as
    # they are.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(TPUWIZARD_HOME=str(tmp_path / "home"), PYTHONPYCACHEPREFIX=str(tmp_path / "pyc"))
    starts = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", ENTRY], capture_output=True, text=True, env=env, check=True
        )
        starts.append(json.loads(done.stderr.strip().splitlines()[-1]))
    first, second = starts
    assert {"tpuwizard.core.plan.catalog", "tpuwizard.core.plan.fit"} <= set(first["served"])
    assert set(first["compiled"]) == set(first["served"])  # nothing kept yet: all compiled
    assert second["served"] == first["served"] and second["compiled"] == []
    kept = sorted(p.name for p in (tmp_path / "pyc").rglob(f"*{SUFFIX}"))
    assert f"catalog.{sys.implementation.cache_tag}{SUFFIX}" in kept
