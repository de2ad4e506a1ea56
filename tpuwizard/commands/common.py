"""What every command shares: output helpers, error handling, connecting."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import click

from tpuwizard.core.errors import BadInput, shown
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT, EXIT_CLOUD, EXIT_INTERRUPTED
from tpuwizard.core.terminal_text import visible_lines

if TYPE_CHECKING:
    from tpuwizard.core.launch.events.launch_events import Event
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.core.plan.catalog import Slice
    from tpuwizard.session.kept.lines import KeptInfo
    from tpuwizard.session.session import Session


def say(text: str = "") -> None:
    """Notes, progress and warnings go to stderr, so that stdout holds only the result (one JSON
    document with ``--json``) and ``tpuwizard fit 48 | less`` shows the table alone. What a
    worker or a file said (a node name in a chain, a receipt's field) cannot act on the terminal."""
    click.echo(visible_lines(text), err=True)


E = TypeVar("E", bound=StrEnum)


class Words(click.Choice, Generic[E]):  # type: ignore[type-arg]
    """A choice among an enum's words (``--route flex``), parsed once here into the enum's member:
    the core compares members, never the words. Click's own enum choice matches the members'
    names (``TPU_API``), not the words a user types (``tpu-api``)."""

    def __init__(self, enum: type[E], words: tuple[E, ...] | None = None) -> None:
        self.enum = enum
        super().__init__([str(m) for m in (words or tuple(enum))])

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> E:
        if isinstance(value, self.enum):
            return value
        return self.enum(super().convert(value, param, ctx))


class Number(click.ParamType):
    """A finite number within bounds, in the option's unit. click's FloatRange lets ``nan``
    through (every comparison with it is false) and ``inf`` wherever there is no upper bound."""

    name = "number"

    def __init__(
        self,
        low: float | None = None,
        high: float | None = None,
        unit: str = "",
        above: bool = False,
    ) -> None:
        self.low, self.high, self.unit, self.above = low, high, unit, above

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        not_ascii(value, param, ctx, self)
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            number = math.nan
        low_ok = self.low is None or (number > self.low if self.above else number >= self.low)
        if not (math.isfinite(number) and low_ok and (self.high is None or number <= self.high)):
            self.fail(f"{shown(str(value))} is not {self.wanted()}.", param, ctx)
        return number

    def wanted(self) -> str:
        """What a good value is, in words: 'a number of seconds above 0 and at most 604800'."""
        what = f"a number of {self.unit}" if self.unit else "a number"
        low, high = self.low, self.high
        if low is None and high is None:
            return what.replace("a number", "a finite number")
        if low is not None and high is not None and not self.above:
            return f"{what} from {low:g} to {high:g}"
        bounds = []
        if low is not None:
            bounds.append(f"above {low:g}" if self.above else f"of {low:g} or more")
        if high is not None:
            bounds.append(f"at most {high:g}")
        return f"{what} {' and '.join(bounds)}"


class Whole(click.ParamType):
    """A whole number within bounds (``--worker``, ``--port``, ``--max-restarts``), typed in
    ASCII digits: Python's ``int`` also takes full-width and other scripts' digits ("１")."""

    name = "integer"

    def __init__(self, low: int | None = None, high: int | None = None) -> None:
        self.low, self.high = low, high

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> int:
        if isinstance(value, int) and not isinstance(value, bool):  # a default
            return value
        not_ascii(value, param, ctx, self)
        try:
            number = int(str(value).strip())
        except ValueError:
            number = None
        if (
            number is None
            or (self.low is not None and number < self.low)
            or (self.high is not None and number > self.high)
        ):
            self.fail(f"{shown(str(value))} is not {self.wanted()}.", param, ctx)
        return number

    def wanted(self) -> str:
        """'a whole number from 1 to 604800', 'a whole number of 0 or more'."""
        if self.low is not None and self.high is not None:
            return f"a whole number from {self.low} to {self.high}"
        if self.low is not None:
            return f"a whole number of {self.low} or more"
        if self.high is not None:
            return f"a whole number of at most {self.high}"
        return "a whole number"


def not_ascii(
    value: object,
    param: click.Parameter | None,
    ctx: click.Context | None,
    kind: Number | Whole,
) -> None:
    """Refuse digits outside ASCII (``--max-run １``): Python's ``float`` and ``int`` read them
    as numbers, so a value pasted from a full-width keyboard would pass unseen."""
    from tpuwizard.words.typed_numbers import not_ascii_words

    if isinstance(value, str) and not value.isascii():
        kind.fail(not_ascii_words(shown(value), kind.wanted()), param, ctx)


def _valid_project(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """Checked as the command line is read, before anything else: the id goes into every API
    path, the ledger and the commands tpuwizard says back."""
    if value is None:
        return None
    from tpuwizard.core.cloud.gcloud_config import validate_project

    try:
        return validate_project(value)
    except BadInput as err:
        raise click.BadParameter(str(err)) from None


# Options several commands share, so each says the same thing everywhere.
sandbox_option = click.option("--sandbox", is_flag=True, help="Practise against the local sandbox.")
project_option = click.option(
    "--project", callback=_valid_project, help="Project id (default from gcloud config)."
)
# How long to wait for a node or queued resource: above zero, and at most a week (a wait that
# long is a mistake; Flex-start's default is 6 hours).
READY_TIMEOUT = Number(0, 7 * 24 * 3600, unit="seconds", above=True)
queue_wait_option = click.option(
    "--queue-wait",
    type=Number(0, 7 * 24 * 60, unit="minutes"),
    help="Flex-start: minutes to wait for capacity (default 120; at most 120 on Compute "
    "Engine; 0: only if capacity is there now). --ready-timeout is then the wait after it. "
    "On Compute Engine a VM still PENDING 5 minutes after the queue wait is given up and "
    "deleted; a slice's MIG has no wait of Google's, so tpuwizard deletes it at the queue wait.",
)


def show(text: str = "") -> None:
    """A command's human result (a table's lines, a verdict) goes to stdout, for pipes and files;
    never with ``--json``, whose stdout is the JSON document alone."""
    click.echo(visible_lines(text))


_SAID_KEPT: set[str] = set()  # kept nodes this command's own lines named with their end


def kept_said(name: str) -> None:
    """This command's own lines said how ``name`` ends and what ends it (``up``'s Kept line):
    the kept-node lines after it leave it out, so each fact is said once."""
    _SAID_KEPT.add(name)


def say_kept_nodes() -> None:
    """One line per kept node on stderr, from the ledger (no cloud client, no jax), but those
    the command itself just described."""
    said = set(_SAID_KEPT)
    _SAID_KEPT.clear()
    unsaid = [info for info in _recorded_kept() if info.name not in said]
    if unsaid:  # the words only for a line to say: most commands end with none
        from tpuwizard.words.kept_end import kept_info_line

        for info in unsaid:
            say(kept_info_line(info))


def kept_now() -> list[dict[str, object]]:
    """The kept nodes, for a ``--json`` document (the same records as the stderr lines)."""
    return [info.to_dict() for info in _recorded_kept()]


def recorded_kept() -> list[KeptInfo]:
    """The kept nodes the ledger records (what the Kept lines say), never raising."""
    return _recorded_kept()


def _recorded_kept() -> list[KeptInfo]:
    """A ledger that cannot be read costs these lines, never the command."""
    try:
        from tpuwizard.core import paths

        state = paths.state_dir()
        if not any((f / "ledger.jsonl").exists() for f in (state, state / "sandbox")):
            return []  # nothing ever recorded: no need to load the ledger's reader (~15 ms)
        from tpuwizard.session.kept.lines import recorded_kept

        return recorded_kept()
    except Exception:
        return []


def show_summary(summary: RunSummary, as_json: bool, own: Sequence[str] = ()) -> None:
    """The run's summary, as every launch ends (a TPU route's, Kaggle's, Colab's): on stdout,
    or on stderr beside --json's lines. A node kept earlier (not in ``own``) still bills: the
    summary's "nothing is billing" is this run's then, and it names them."""
    from tpuwizard.words.summary_text import summary_lines

    elsewhere = [
        f"{info.name} (kept earlier; its Kept line follows)"
        for info in recorded_kept()
        if info.name not in own
    ]
    for line in summary_lines(summary, elsewhere=elsewhere):
        (say if as_json else click.echo)(line)


def stdin_is_terminal() -> bool:
    """Whether a question can be asked (a confirmation needs someone to type the answer)."""
    return sys.stdin.isatty()


def print_json(data: object) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False))


def show_event(event: Event, as_json: bool, result: bool = True) -> None:
    """One event as every command prints it (``launch``, ``up``, ``run``, ``watch``): with
    ``--json`` its JSON line on stdout and its words on stderr; else its words, on stdout when
    they are the command's ``result`` (a launch's lines, a script's output), else on stderr."""
    from tpuwizard.words.event_text import describe, json_event

    if as_json:
        click.echo(json.dumps(json_event(event)))
    for line in describe(event):
        (click.echo if result and not as_json else say)(line)


class Group(click.Group):
    """Turns :class:`BadInput` from any command into its message and exit code 2."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Each command's first sentence, wrapped: click's own cut them off with "..." at 80
        # columns, which is where most people first read the list.
        rows = [
            (name, command.get_short_help_str(limit=500))
            for name in self.list_commands(ctx)
            if (command := self.get_command(ctx, name)) is not None and not command.hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BadInput as err:
            from tpuwizard.words.event_text import refusal_text

            say(f"Error: {refusal_text(err)}")
            raise click.exceptions.Exit(EXIT_BAD_INPUT) from None
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:  # Ctrl+C where no stop was under way: 130, as a stop exits
            say("\nStopped (Ctrl+C).")
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        except Exception as err:  # a bug: keep the traceback in a file, not on the screen
            import traceback

            from tpuwizard.core import paths
            from tpuwizard.core.cloud.diagnose.failure import local_disk_diagnosis
            from tpuwizard.words.event_text import diagnosis_text

            disk = local_disk_diagnosis(err)
            if disk is not None:  # this computer's disk: neither a bug nor the network
                say(diagnosis_text(disk))
                raise click.exceptions.Exit(EXIT_BAD_INPUT) from None
            say(f"tpuwizard hit an unexpected error ({type(err).__name__}: {err}).")
            try:
                log = paths.state_dir() / "errors.log"
                with open(log, "a") as f:
                    f.write(traceback.format_exc() + "\n")
                say(f"The details are in {log}; please report them.")
            except (OSError, BadInput):
                say(traceback.format_exc())  # nowhere to keep it: show it rather than lose it
            say("Run `tpuwizard status` to see whether anything was left running.")
            raise click.exceptions.Exit(EXIT_CLOUD) from None


@contextmanager
def cloud_errors(
    context: object = None, passes: tuple[type[Exception], ...] = ()
) -> Iterator[None]:
    """Any failure inside becomes a diagnosis on stderr and exit code 3, never a traceback;
    ``passes`` names the errors the caller answers itself."""
    answered: tuple[type[BaseException], ...] = (
        BadInput,
        click.exceptions.Exit,
        SystemExit,
        *passes,
    )
    try:
        yield
    except answered:
        raise
    except Exception as err:
        from tpuwizard.core.cloud.diagnose.failure import diagnose
        from tpuwizard.words.event_text import diagnosis_text

        say(diagnosis_text(diagnose(err, context)))  # type: ignore[arg-type]
        raise click.exceptions.Exit(EXIT_CLOUD) from None


def at_command_end() -> Callable[[Callable[[], None]], object]:
    """Where a command's stop handlers are put back (``stop_on_signals``' ``hold_until``): at
    the close of the root context, after every close callback of the command (a price read
    let land, or any registered later): a stop signal during them still ends the command with
    128 + N and its words, never by the raw signal with no word said."""
    return click.get_current_context().find_root().call_on_close


def open_session(project: str | None, sandbox: bool, runs: Path | None = None) -> Session:
    """The session for a command, practice or real as :meth:`Session.decide` says."""
    from tpuwizard.session.session import Session
    from tpuwizard.words.session_text import practice_words, real_words

    session = Session.open(project, sandbox, runs)
    if session.practice:
        say(practice_words(session.mode))
    elif session.project:
        say(real_words(session.project))
    return session


def asked_slice(accelerator: str) -> Slice:
    """``--accelerator``, parsed once where the command line reads it: exit 2 with the
    catalog's words (and the nearest names) for one that is no TPU type."""
    from tpuwizard.core.plan import catalog

    try:
        return catalog.parse_accelerator(accelerator)
    except catalog.UnknownAcceleratorError as err:
        raise BadInput(str(err)) from None


def check_script(script: Path) -> None:
    """Before anything reaches the node: the rules the workers would otherwise refuse late."""
    from tpuwizard.core.launch.plan.workload_rules import script_problems

    problems = script_problems(script)
    if problems:
        raise BadInput(" ".join(problems))


def check_free_route_input(
    route: str, platform: str, why: str, refused: dict[str, bool], script: Path | None
) -> Path:
    """The free routes' own bad input (exit 2, nothing called): options of the TPU routes
    given with ``--route ROUTE`` (``refused``, by name; ``why`` says what the platform lacks),
    or no ``--script``. The script, once it is there."""
    given = [name for name, on in refused.items() if on]
    if given:
        raise BadInput(
            f"{', '.join(given)} cannot be used with --route {route} ({why}); leave "
            f"{'it' if len(given) == 1 else 'them'} out."
        )
    if script is None:
        raise BadInput(f"--route {route} needs --script: the Python script to run on {platform}.")
    return script


def split_list(text: str | None) -> list[str] | None:
    if not text:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]


def ask_yes_no(question: str) -> bool:
    """``click.confirm`` (default no) where Ctrl+C at the question does nothing and exits 130,
    as a stop signal does everywhere; end of input answers no."""
    try:
        return click.confirm(question, default=False, err=True)
    except click.Abort as err:
        if isinstance(err.__context__, KeyboardInterrupt):
            say("\nNothing done (Ctrl+C).")
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        return False


def _no_command(name: str) -> click.Command:
    raise KeyError(name)  # never called: a group without lazy commands names none


class LazyGroup(Group):
    """A group whose commands are imported by name when first asked for: ``lazy`` is (their
    names, the loader that imports one). They are kept apart from ``commands`` so that a tool
    reading that dict (mkdocs-click) asks :meth:`list_commands` and :meth:`get_command` for
    all of them; a command line loads only the command it runs."""

    def __init__(
        self,
        *args: Any,
        lazy: tuple[tuple[str, ...], Callable[[str], click.Command]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._names, self._load = lazy or ((), _no_command)
        self._loaded: dict[str, click.Command] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self._names})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in self._names:
            return super().get_command(ctx, cmd_name)
        if cmd_name not in self._loaded:
            self._loaded[cmd_name] = self._load(cmd_name)
        return self._loaded[cmd_name]

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as err:
            # click (8.4 on) suggests a close name from ``commands``, which holds none of ours.
            name = getattr(err, "command_name", None)  # only click's NoSuchCommand has it
            if name is None:
                raise
            names = self.list_commands(ctx)
            raise click.exceptions.NoSuchCommand(name, possibilities=names, ctx=ctx) from None
