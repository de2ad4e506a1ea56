"""The hand-over files' YAML and comments: every value is emitted by PyYAML (a typed value can
never become a key, a document or a Kubernetes object of its own), and every comment is one line
whatever it holds (issue 48, F4: a newline in ``--image`` added a Pod to the JobSet).

A value placed into the YAML goes through :func:`dump`; one placed into a comment (the header,
the notes) through :func:`comment`. Shell lines are the caller's, quoted by ``transports.shell``.
"""

from __future__ import annotations

Value = str | int | bool | None | list["Value"] | dict[str, "Value"]


def dump(value: dict[str, Value]) -> str:
    """``value`` as one block-style YAML document ending with a newline, keys in the order given.

    PyYAML quotes and escapes what would not read back as the same scalar (a line break, ``---``,
    ``: ``, ``#``, a leading ``&``/``*``/``!``, U+2028, a control character)."""
    import yaml  # here, not at the top: the CLI's start-up does not need it

    return yaml.safe_dump(
        value,
        sort_keys=False,
        default_flow_style=False,
        # Non-ASCII escaped: with it left as is, PyYAML 6 writes U+0085 raw inside a single-quoted
        # scalar, which reads back as a space. Every value export writes is ASCII when valid.
        allow_unicode=False,
        width=2**31 - 1,  # one line per value: a folded long string reads back, but badly
    )


def one_line(text: str) -> str:
    """``text`` as it can sit on one comment line: every character Python does not print (a line
    break of any kind, U+2028, a control or format character, a lone surrogate from a non-UTF-8
    byte) written as its escape, so a comment can end only where the writer ends it."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def comment(lines: list[str]) -> str:
    """Lines as ``#`` comments (blank ones as a bare ``#``), each exactly one line of the file."""
    return "".join(f"# {one_line(line)}\n" if line else "#\n" for line in lines)
