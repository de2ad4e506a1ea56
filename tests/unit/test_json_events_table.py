"""The README's `--json` event table and core/launch/events.py stay in step: one row per event
class, its fields exactly the event's, and the commands it names ones that have `--json`."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from tpuwizard.core.launch import events as ev

README = Path(__file__).resolve().parents[2] / "README.md"
COMMANDS = {"launch", "up", "run", "watch"}


def event_table() -> dict[str, tuple[list[str], set[str]]]:
    """The table's rows: event name -> (its fields in order, the commands that emit it)."""
    text = README.read_text()
    section = text[text.index("### The `--json` event stream") :]
    section = section[: section.index("\n\n", section.index("| event |"))]
    rows: dict[str, tuple[list[str], set[str]]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        name = cells[0].strip("`")
        assert name not in rows, f"{name} has two rows"
        fields = re.findall(r"`([a-z_0-9]+)`", cells[2])
        commands = {c.strip() for c in cells[3].split(",")} - {"—"}
        rows[name] = (fields, commands)
    return rows


def event_classes() -> list[type[ev.Event]]:
    return [
        c
        for c in vars(ev).values()
        if isinstance(c, type) and issubclass(c, ev.Event) and c is not ev.Event
    ]


def test_every_event_has_one_row_with_exactly_its_fields():
    rows = event_table()
    classes = event_classes()
    assert len(classes) > 30  # the module was read, not an empty list
    for cls in classes:
        name = cls.event_name()
        assert name in rows, f"README's --json table has no row for {name}"
        fields = [f.name for f in dataclasses.fields(cls)]
        assert rows[name][0] == fields, f"{name}: the README lists {rows[name][0]}"
    assert set(rows) == {cls.event_name() for cls in classes}  # no row for a gone event


def test_each_row_names_only_commands_with_a_json_event_stream():
    for name, (_fields, commands) in event_table().items():
        assert commands <= COMMANDS, f"{name}: {commands - COMMANDS}"
