"""The script's own arguments, and an option of tpuwizard's typed among them.

``run SCRIPT ARGS`` and ``watch SCRIPT ARGS`` give the script everything after it, unchanged, and
``launch``/``export ... -- ARGS`` everything after ``--``: by design, so that no option of
tpuwizard's can swallow a flag of the script's. But ``run main.py --with flax`` then installs
nothing, silently. So an argument there that is one of the command's own options is said in one
warning line, with the command written the way that makes tpuwizard use it; the script still
gets it, as asked (a script may take a ``--fetch`` of its own).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import click

from tpuwizard.commands.common import say

TYPED = "tpuwizard.typed_args"  # ctx.meta: the command's words, as typed


class ScriptArgsCommand(click.Command):
    """A command whose last arguments are the script's: keeps the words as typed, so that the
    warning can write the command again with the option moved."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[TYPED] = list(args)
        return super().parse_args(ctx, args)


def warn_own_options(script_args: Sequence[str], after: str) -> None:
    """Say, in one line, which of ``script_args`` are this command's own options (with their
    values) and how to write them so that tpuwizard uses them; ``after``: what they came after
    (the script as typed, or ``--``)."""
    ctx = click.get_current_context()
    groups, rest = own_options(ctx.command, script_args)
    if not groups:
        return
    name = ctx.info_name or ctx.command.name or "run"
    moved = [word for group in groups for word in group]
    listed = " and ".join(shlex.join(group) for group in groups)
    one = len(groups) == 1
    line = shlex.join(["tpuwizard", name, *_rewritten(ctx, script_args, moved, rest)])
    say(
        f"Warning: after {after}, {listed} {'is' if one else 'are'} your script's own "
        f"argument{'' if one else 's'}: tpuwizard {name} passes {'it' if one else 'them'} on "
        f"and does not use {'it' if one else 'them'} itself. For tpuwizard, write "
        f"{'it' if one else 'them'} before {'the script' if after != '--' else '--'}: {line}"
    )


def own_options(command: click.Command, args: Sequence[str]) -> tuple[list[list[str]], list[str]]:
    """(the arguments that are ``command``'s own options, each with its value; the others)."""
    own = {
        name: param
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }
    groups: list[list[str]] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        option = own.get(word.partition("=")[0]) if word.startswith("-") else None
        if option is None:
            rest.append(word)
            i += 1
            continue
        takes_value = not option.is_flag and option.nargs == 1 and "=" not in word
        span = 2 if takes_value and i + 1 < len(args) else 1
        groups.append(list(args[i : i + span]))
        i += span
    return groups, rest


def _rewritten(
    ctx: click.Context, script_args: Sequence[str], moved: list[str], rest: list[str]
) -> list[str]:
    """The command's words with ``moved`` before the script's arguments (before SCRIPT, or
    before ``--``), everything else as it was typed."""
    typed = ctx.meta.get(TYPED, [])
    cut = len(typed) - len(script_args) - 1  # SCRIPT, or the `--` before the script's words
    if cut < 0 or list(typed[cut + 1 :]) != list(script_args):
        return [*moved, *rest]  # not as expected: the options alone, still right
    if typed[cut] == "--":
        return [*typed[:cut], *moved, *(["--", *rest] if rest else [])]
    return [*typed[:cut], *moved, typed[cut], *rest]
