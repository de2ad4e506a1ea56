"""The verifier's checks, ticked as they arrive; a word, not just a colour, says the result."""

from __future__ import annotations

from textual.content import Content
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
        # The names and details are the verifier's words, from the worker: they go in as
        # template variables, never read as markup, and shown as cat -v shows control codes.
        words: dict[str, str] = {}

        def said(text: str) -> str:
            key = f"w{len(words)}"
            words[key] = text
            return "${" + key + "}"

        lines = ["Checks"]
        for name in [*EXPECTED, *[n for n in self.results if n not in EXPECTED]]:
            if name in self.results:
                ok, _detail, boundary = self.results[name]
                mark = "[green]PASS[/]" if ok else f"[red]FAIL: {said(visible(boundary))}[/]"
            else:
                mark = "[dim]waiting[/]"
            lines.append(f"{said(f'{visible(name):<13}')} {mark}")
        failed = [(n, d) for n, (ok, d, _b) in self.results.items() if not ok]
        if failed:
            lines.append("")
            lines += [f"[b]{said(visible(n))}[/b]: {said(visible(d))}" for n, d in failed]
        self.update(Content.from_markup("\n".join(lines), **words))
