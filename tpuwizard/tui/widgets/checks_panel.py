"""The verifier's checks, ticked as they arrive; a word, not just a colour, says the result."""

from __future__ import annotations

from textual.widgets import Static

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
        lines = ["Checks"]
        for name in [*EXPECTED, *[n for n in self.results if n not in EXPECTED]]:
            if name in self.results:
                ok, _detail, boundary = self.results[name]
                mark = "[green]PASS[/]" if ok else f"[red]FAIL: {boundary}[/]"
            else:
                mark = "[dim]waiting[/]"
            lines.append(f"{name:<13} {mark}")
        failed = [(n, d) for n, (ok, d, _b) in self.results.items() if not ok]
        if failed:
            lines.append("")
            lines += [f"[b]{name}[/b]: {detail}" for name, detail in failed]
        self.update("\n".join(lines))
