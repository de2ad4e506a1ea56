"""The guide's "Commands at a glance" writes each command's usual synopsis by hand (the reference
beside it is generated from the click commands). What it writes must stay true: every command has
its paragraph, every option it names exists on that command, and every list of choices it spells
out (``--route vm|spot|...``) is the command's own: a new route or a renamed option fails here."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from tpuwizard.cli import COMMANDS, main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "commands.md"
SECTION = re.compile(r"^## tpuwizard ([^\n]+)\n\n```text\n(tpuwizard [^\n]+)\n```", re.M)


def synopses() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in SECTION.finditer(PAGE.read_text())]


def command_of(synopsis: str) -> click.Command:
    ctx = click.Context(main)
    words = synopsis.split()[1:]
    command = main.get_command(ctx, words[0])
    assert command is not None, f"no command {words[0]!r}"
    if isinstance(command, click.Group):
        command = command.get_command(ctx, words[1])
        assert command is not None, f"no command {words[:2]!r}"
    return command


def test_every_command_has_its_paragraph():
    assert {title.split()[0] for title, _ in synopses()} == set(COMMANDS)


@pytest.mark.parametrize(("title", "synopsis"), synopses(), ids=[t for t, _ in synopses()])
def test_what_a_synopsis_names_is_the_commands_own(title, synopsis):
    command = command_of(synopsis)
    options = {
        name: p
        for p in command.params
        if isinstance(p, click.Option)
        for name in (*p.opts, *p.secondary_opts)
    }
    named = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", synopsis)) - {"--"}
    assert named <= set(options), f"{title}: no such option {sorted(named - set(options))}"
    for name, choices in re.findall(r"(--[a-z][\w-]*) ([a-z0-9-]+(?:\|[a-z0-9-]+)+)", synopsis):
        own = options[name].type
        assert isinstance(own, click.Choice), f"{title}: {name} takes no list of choices"
        assert set(choices.split("|")) == set(own.choices), f"{title}: {name}'s choices"
