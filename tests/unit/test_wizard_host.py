"""The wizard's host is typed: no screen, widget or helper under tpuwizard/tui takes or keeps
its App as ``Any`` (issue 53). They take ``WizardHost`` (tui/host.py), which the type checker
holds the WizardApp to, or Textual's ``App`` where Textual's own signature asks for it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tpuwizard

TUI = Path(tpuwizard.__file__).parent / "tui"
APP_NAMES = {"app", "app_"}


def apps_typed_any(source: str) -> list[int]:
    """The lines where a parameter, a variable or an attribute named ``app`` (or ``app_``) is
    annotated ``Any``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg):
            name, annotation = node.arg, node.annotation
        elif isinstance(node, ast.AnnAssign):
            target = node.target
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            annotation = node.annotation
        else:
            continue
        if name in APP_NAMES and isinstance(annotation, ast.Name) and annotation.id == "Any":
            found.append(node.lineno)
    return found


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("def f(app: Any) -> None: ...", [1]),
        ("async def f(screen: S, app:Any) -> None: ...", [1]),
        ("class V:\n    def __init__(self, app: Any) -> None:\n        self.app = app", [2]),
        ("class V:\n    def __init__(self) -> None:\n        self.app_: Any = None", [3]),
        ("app: Any = None", [1]),
        ("def f(app: WizardHost) -> None: ...", []),
        ("def f(app: App[Any]) -> None: ...", []),  # Textual's own, where its driver asks
        ("def f(screen: Any) -> None: ...", []),
        ("def f(app) -> None: ...", []),
    ],
)
def test_an_app_typed_any_is_found(source, lines):
    assert apps_typed_any(source) == lines


def test_no_app_under_tpuwizard_tui_is_typed_any():
    found = [
        f"{path.relative_to(TUI)}:{line}"
        for path in sorted(TUI.rglob("*.py"))
        for line in apps_typed_any(path.read_text())
    ]
    assert found == []
