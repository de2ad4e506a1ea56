"""The verifier's checks, ticked as they arrive; a word, not just a colour, says the result."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tpuwizard.core.terminal_text import visible

EXPECTED = ("import", "backend", "placement", "numeric", "changed_bias", "row_reversal", "contract")


class ChecksPanel(Static):
    def __init__(self) -> None:
        super().__init__(id="checks")
        self.results: dict[str, tuple[bool, str, str]] = {}

    def on_mount(self) -> None:
        self.render_checks()

    def record(self, name: str, ok: bool, detail: str, boundary: str) -> None:
        self.results[name] = (ok, detail, boundary)
        self.render_checks()

    def render_checks(self) -> None:
        # Built as Text, not markup: the names and details are the verifier's words, from the
        # worker, and neither a "[" in them nor a control character may act.
        text = Text("Checks")
        for name in [*EXPECTED, *[n for n in self.results if n not in EXPECTED]]:
            text.append(f"\n{visible(name):<13} ")
            if name in self.results:
                ok, _detail, boundary = self.results[name]
                text.append(*(("PASS", "green") if ok else (f"FAIL: {visible(boundary)}", "red")))
            else:
                text.append("waiting", "dim")
        failed = [(n, d) for n, (ok, d, _b) in self.results.items() if not ok]
        if failed:
            text.append("\n")
        for name, detail in failed:
            text.append("\n")
            text.append(visible(name), "bold")
            text.append(f": {visible(detail)}")
        self.update(text)
