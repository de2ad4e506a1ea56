"""Text from a worker made harmless for a terminal, and colour taken out of a printout.

A worker's output and its file names are the user's script's (or anyone's who wrote to the
worker): printed raw, ``ESC ] 0 ; title BEL`` retitles the terminal, ``ESC [ 2 J`` clears it and a
bare ``\\r`` overwrites a line with a forged one. :func:`visible` shows every control character
the way ``cat -v`` does (``^[``, ``^G``, ``^M``, ``M-^[``), so the line still says what the worker
wrote and nothing in it acts on the terminal; every front end passes worker text through it, and
the saved whole output keeps the original bytes.
"""

from __future__ import annotations

import re

# C0 controls but the tab, DEL, C1 controls, and the bidirectional overrides and isolates,
# which reorder what is shown (a file name that reads backwards). Compiled (by re, which keeps
# it) on the first text that holds a character no printable text has: a compile at import cost
# every command's start 0.3 ms, and most of what they say is plain.
_CONTROL = "[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
# ECMA-48 Select Graphic Rendition (colour, bold): ESC [ params m, as `ls --color` or rich print.
_SGR = re.compile("\x1b\\[[0-9;:]*m")


def _caret(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    if code <= 0x9F:
        return "M-^" + chr(code - 0x80 + 0x40)
    return f"<U+{code:04X}>"


def visible(text: str) -> str:
    """``text`` with each control character shown as ``cat -v`` shows it (``\\x1b`` as ``^[``,
    ``\\r`` as ``^M``, a newline inside a name as ``^J``); tabs and printable text unchanged."""
    if text.isprintable():  # every character above is one str.isprintable() refuses
        return text
    return re.sub(_CONTROL, _caret, text)


def visible_lines(text: str) -> str:
    """:func:`visible` for a message of several lines: its newlines stay line breaks."""
    return "\n".join(visible(line) for line in text.split("\n"))


def without_sgr(text: str) -> str:
    """``text`` without colour and weight escapes (only those: any other escape stays, to be
    refused by whoever reads the text)."""
    return _SGR.sub("", text)
