"""Fitting a paragraph of tpuwizard's words to a terminal's width (plain mode)."""

from __future__ import annotations


def wrap_paragraph(text: str, width: int) -> str:
    """``text`` fitted to ``width`` columns at word boundaries, each line keeping its indent (a
    ``- `` step hangs under its words). A word longer than the width is never cut."""
    import textwrap

    width = max(width, 40)
    out = []
    for line in text.splitlines() or [""]:
        body = line.lstrip()
        indent = line[: len(line) - len(body)]
        if len(line) <= width or not body:
            out.append(line)
            continue
        hang = indent + ("  " if body.startswith("- ") else "")
        out.append(
            textwrap.fill(
                body,
                width,
                initial_indent=indent,
                subsequent_indent=hang,
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return "\n".join(out)
