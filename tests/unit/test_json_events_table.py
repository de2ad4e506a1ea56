"""The `--json` event reference and core/launch/events/launch_events.py stay in step: the
reference page is generated from EVENT_GUIDE and the event classes, so EVENT_GUIDE must hold one
entry per event class, and the commands it names must be ones with `--json`."""

from __future__ import annotations

from pathlib import Path

from tpuwizard.core.launch.events import colab, kaggle
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.guide import EVENT_GUIDE

DOCS = Path(__file__).resolve().parents[2] / "docs"
COMMANDS = {"launch", "up", "run", "watch"}


def event_table() -> dict[str, tuple[str, set[str]]]:
    """Each event's documented row: name -> (when it comes, the commands that emit it)."""
    return {name: (when, set(commands)) for name, (when, commands) in EVENT_GUIDE.items()}


def event_classes() -> list[type[ev.Event]]:
    """A launch's events and the free routes' own (kaggle.py, colab.py), each defined once."""
    return [
        c
        for module in (ev, kaggle, colab)
        for c in vars(module).values()
        if isinstance(c, type)
        and issubclass(c, ev.Event)
        and c is not ev.Event
        and c.__module__ == module.__name__
    ]


def test_every_event_class_has_exactly_one_entry_and_no_entry_is_for_a_gone_event():
    classes = event_classes()
    assert len(classes) > 30  # the module was read, not an empty list
    assert set(EVENT_GUIDE) == {cls.event_name() for cls in classes}
    assert all(when.strip() for when, _ in EVENT_GUIDE.values())


def test_each_entry_names_only_commands_with_a_json_event_stream():
    for name, (_when, commands) in event_table().items():
        assert commands <= COMMANDS, f"{name}: {commands - COMMANDS}"


def test_the_reference_page_is_generated_with_every_event_s_own_fields():
    import dataclasses
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "docs_hooks", DOCS.parent / "scripts/docs_hooks.py"
    )
    assert spec and spec.loader
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = (DOCS / "reference/events.md").read_text()
    table = hooks.on_page_markdown(page)
    assert "<!-- generated" not in table
    for cls in event_classes():
        fields = ", ".join(f"`{f.name}`" for f in dataclasses.fields(cls))
        assert f"| `{cls.event_name()}` |" in table and fields in table, cls.event_name()


def test_every_exit_code_has_one_meaning_in_the_generated_table():
    from tpuwizard.core import exit_codes

    codes = [
        v for k, v in vars(exit_codes).items() if k.startswith("EXIT_") and k != "EXIT_INTERRUPTED"
    ]
    documented = [code for code, _ in exit_codes.MEANINGS]
    assert sorted(documented[:-1]) == sorted(str(c) for c in codes)  # each once, none missing
    assert documented[-1] == "128+N" and "129 SIGHUP" in exit_codes.MEANINGS[-1][1]
