"""Review's worker JAX: the ``jax[tpu]`` version the worker gets, from tpuwizard's table (the
default marked), this computer's JAX where it differs, and a dialog to pick another version of
the table (F3). The table and its words' facts are the core's (core/plan/jax_versions.py)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tpuwizard.core.plan import jax_versions
from tpuwizard.core.plan.jax_versions import DEFAULT, TABLE, JaxVersion


def chosen_version(jax: str | None) -> str:
    """The version the worker gets: the one chosen, else the table's default."""
    return jax or DEFAULT.version


def jax_words(jax: str | None, laptop: str | None) -> str:
    """Two lines at most: the worker's version (default marked, F3 to change) and, where this
    computer's JAX is another, that a result here may not match."""
    version = chosen_version(jax)
    mark = " (default)" if version == DEFAULT.version else f" (default {DEFAULT.version})"
    line = f"Worker's JAX [b]{version}[/b]{mark}; F3: another from the table."
    if laptop is not None and laptop != version:
        return line + f"\nThis computer has JAX {laptop}: results here may differ."
    return line


def version_line(entry: JaxVersion) -> str:
    """One table entry as the picker lists it: its pins, what was run with it, what was not."""
    default = " (default)" if entry is DEFAULT else ""
    ran = ", ".join(entry.runs_here) or "nothing"
    when = (
        "at every test run" if entry.in_suite else "in a rotating drill" if entry.in_drill else ""
    )
    return (
        f"JAX {entry.version}{default}: libtpu {entry.libtpu}, Python {entry.python}. Run here "
        f"on CPU in the practice sandbox (Python {entry.python_here}) {when}: {ran}. "
        + ("Not run on a TPU by this project." if not entry.tpu_runs else "")
    )


class WorkerJax(Static):
    """The worker's JAX line on Review; ``jax`` None means the table's default."""

    DEFAULT_CSS = """
    WorkerJax { width: 1fr; height: auto; padding: 1 0 0 1; }
    """

    def __init__(self, jax: str | None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.jax = jax

    def on_mount(self) -> None:
        self.show()

    def choose(self, jax: str | None) -> None:
        self.jax = None if jax == DEFAULT.version else jax
        self.show()

    def show(self) -> None:
        self.update(jax_words(self.jax, jax_versions.laptop_jax()))


class JaxPicker(ModalScreen["str | None"]):
    """The table's versions, the chosen one highlighted; dismissed with the version picked, or
    None when closed (Esc) with nothing changed."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]
    DEFAULT_CSS = """
    JaxPicker OptionList { height: auto; max-height: 14; }
    """

    def __init__(self, jax: str | None) -> None:
        super().__init__()
        self.jax = chosen_version(jax)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(
                "[b]The worker's JAX[/b]: jax\\[tpu] installed on every worker (Enter picks). "
                "Each version's libtpu and Python are from PyPI's metadata "
                f"(read {jax_versions.READ}); PyPI does not say which TPU generations a libtpu "
                "serves."
            )
            yield OptionList(
                *(Option(version_line(v), id=v.version) for v in TABLE), id="jax-versions"
            )

    def on_mount(self) -> None:
        options = self.query_one("#jax-versions", OptionList)
        options.highlighted = [v.version for v in TABLE].index(self.jax)
        options.focus()

    @on(OptionList.OptionSelected, "#jax-versions")
    def picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
