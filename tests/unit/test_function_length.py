"""No function in tpuwizard/ grows past 100 lines; the few that are still longer only leave.

Issue 46: a function over 100 lines is split where a concept ends, and at most three may stay
longer. Those over today are named below until each is split; a split one must leave the list
(so the list says the truth), and no other function may join it. A function's length runs from
its ``def`` line to its last line, decorators not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tpuwizard

LIMIT = 100
AT_MOST = 3  # issue 46's goal for STILL_LONG

# Over LIMIT lines today, each to be split where a concept ends (issue 46): none is left.
STILL_LONG: set[str] = set()


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, ast.AST]]:
    """Every function in ``tree`` with its dotted name (``Class.method``, ``outer.inner``)."""
    found: list[tuple[str, ast.AST]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                found.append((name, node))
            found += _functions(node, f"{name}.")
        else:
            found += _functions(node, prefix)
    return found


def long_functions(root: Path = Path(tpuwizard.__file__).parent) -> dict[str, int]:
    """``path::name`` -> lines, for each function under ``root`` longer than LIMIT lines."""
    out: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for name, node in _functions(tree):
            assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > LIMIT:
                out[f"{path.relative_to(root).as_posix()}::{name}"] = lines
    return out


def _listing(names: set[str], lines: dict[str, int]) -> str:
    return "\n".join(f"  {name} ({lines.get(name, '?')} lines)" for name in sorted(names))


def test_no_function_grows_past_100_lines_and_the_long_ones_only_leave() -> None:
    long = long_functions()
    joined = set(long) - STILL_LONG
    assert not joined, (
        f"Over {LIMIT} lines: split each where a concept ends (issue 46):\n"
        + _listing(joined, long)
    )
    split = STILL_LONG - set(long)
    assert not split, (
        f"At most {LIMIT} lines now: take each out of STILL_LONG in this file:\n"
        + _listing(split, long)
    )


def test_the_measure_counts_from_def_to_the_last_line_and_finds_methods(tmp_path: Path) -> None:
    def block(indent: int, n: int) -> str:
        return "".join(f"{' ' * indent}x{i} = {i}\n" for i in range(n))

    (tmp_path / "m.py").write_text(
        "@decorated\n"  # not counted: `fits` is def + 99 lines, LIMIT exactly
        "def fits():\n" + block(4, LIMIT - 1) + "class C:\n"
        "    def over(self):\n" + block(8, LIMIT) + "    def outer(self):\n"
        "        def inner():\n" + block(12, LIMIT) + "        return inner\n"
    )
    assert long_functions(tmp_path) == {
        "m.py::C.over": LIMIT + 1,
        "m.py::C.outer": LIMIT + 3,
        "m.py::C.outer.inner": LIMIT + 1,
    }
