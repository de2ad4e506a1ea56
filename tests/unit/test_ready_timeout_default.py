"""The wait for READY has one default, written once (issue 38): ``READY_TIMEOUT_S`` in
core/deadlines.py. The plan's per-route default, the launch's runtime, the clients' waits
and both commands' ``--ready-timeout`` (its default and its help) take it from there."""

from __future__ import annotations

import ast
from pathlib import Path

from tpuwizard.core.deadlines import READY_TIMEOUT_S
from tpuwizard.core.launch.plan.launch_plan import ROUTES, ready_timeout_s

PACKAGE = Path(__file__).resolve().parents[2] / "tpuwizard"

# Where the number may stand, and why: the default itself, an idle time that happens to be
# as long (a kept node's idle deadline when none was given, for its heartbeat's pace), and the
# join's registration timeout, another wait of the same length (marin PR 7232's 1800 s).
ALLOWED = [
    "core/deadlines.py:INIT_TIMEOUT_S",
    "core/deadlines.py:READY_TIMEOUT_S",
    "core/launch/workers/heartbeat.py:heartbeat_interval",
]


def written() -> list[str]:
    """``path:where`` (the function, or the name assigned at module level) of every number
    equal to the default, and of every string that names it."""
    text = f"{READY_TIMEOUT_S:g}"
    found: list[str] = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for scope in tree.body:
            where = getattr(scope, "name", None) or next(
                (t.id for t in getattr(scope, "targets", []) if isinstance(t, ast.Name)), "?"
            )
            for node in ast.walk(scope):
                if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
                    continue
                value = node.value
                number = isinstance(value, int | float) and value == READY_TIMEOUT_S
                if number or (isinstance(value, str) and f"{text} " in f"{value} "):
                    found.append(f"{path.relative_to(PACKAGE)}:{where}")
    return sorted(found)


def test_the_ready_timeout_default_is_written_once():
    assert written() == ALLOWED


def test_every_route_and_both_commands_wait_the_one_default():
    from click.testing import CliRunner

    from tpuwizard.cli import main

    assert {ready_timeout_s(route) for route in ROUTES} == {READY_TIMEOUT_S}
    shown = f"{READY_TIMEOUT_S:g}"
    for command in ("launch", "up"):
        result = CliRunner().invoke(main, [command, "--help"], terminal_width=200)
        assert result.exit_code == 0, result.output
        line = next(x for x in result.output.splitlines() if "--ready-timeout" in x)
        assert shown in line or f"default: {shown}]" in result.output, line
