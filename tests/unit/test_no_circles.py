"""No two tpuwizard modules import each other, directly or round a longer circle.

import-linter's contracts leave out imports under ``TYPE_CHECKING`` (type hints may name a type
from a room above); this test counts every import: at the top, inside a function, and under
``TYPE_CHECKING``. A circle means a file was cut where no concept ends: mend it by moving the
shared part below both, or by a Protocol in the lower file that says what it uses.
"""

import ast
from pathlib import Path

import tpuwizard

PACKAGE = Path(tpuwizard.__file__).parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """Every tpuwizard module ``path`` imports, wherever the import statement stands."""
    found: set[str] = set()
    here = module_name(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against this module's package
                package = here.split(".")[: -node.level or None]
                if path.name == "__init__.py":
                    package = here.split(".")[: len(here.split(".")) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in modules else base)
    return {m for m in found if m in modules and m != here}


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: imports_of(path, set(files)) for name, path in files.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_finder_sees_a_circle_through_a_type_checking_import():
    source = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
        "def f():\n    from pkg.a import A\n",
    )
    graph: dict[str, set[str]] = {"pkg.a": set(), "pkg.b": set()}
    for name, text in zip(graph, source, strict=True):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                graph[name].add(node.module)
    assert circles(graph) == [["pkg.a", "pkg.b"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_tpuwizard_modules_import_each_other_in_a_circle():
    found = circles(import_graph())
    assert found == [], "import circles (TYPE_CHECKING and in-function imports count):\n" + (
        "\n".join(" <-> ".join(c) for c in found)
    )
