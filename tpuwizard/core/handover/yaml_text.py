"""A small block-style YAML writer for the hand-over files, so the core needs no YAML library.

Every string is written as a JSON string (JSON is YAML), except a multi-line one that reads the
same as a literal block (``|``); keys are plain where they are plain words. Comments (the
header) are the caller's.
"""

from __future__ import annotations

import json
import re

_PLAIN_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*")
Value = str | int | bool | None | list["Value"] | dict[str, "Value"]


def _scalar(value: str | int | bool | None) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _key(key: str) -> str:
    return key if _PLAIN_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _block_ok(text: str) -> bool:
    """A literal block keeps ``text`` exactly: no tabs or odd characters, no trailing or leading
    blanks a block would lose, and it ends with one newline (``|`` keeps exactly one)."""
    if "\n" not in text.rstrip("\n") or not text.endswith("\n") or text.endswith("\n\n"):
        return False
    lines = text[:-1].split("\n")
    return all(
        line == line.rstrip() and line.isprintable() and "\t" not in line for line in lines
    ) and not lines[0].startswith(" ")


def _lines(value: Value, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict):
        out: list[str] = []
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                out.append(f"{pad}{_key(key)}:")
                out += _lines(item, indent + 2)
            elif isinstance(item, str) and _block_ok(item):
                out.append(f"{pad}{_key(key)}: |")
                out += [f"{pad}  {line}" if line else "" for line in item[:-1].split("\n")]
            else:
                empty = "{}" if isinstance(item, dict) else "[]" if isinstance(item, list) else ""
                out.append(f"{pad}{_key(key)}: {empty or _scalar(item)}")  # type: ignore[arg-type]
        return out
    if isinstance(value, list):
        out = []
        for item in value:
            inner = _lines(item, indent + 2)
            first = inner[0].lstrip() if inner else "[]"
            out.append(f"{pad}- {first}")
            out += inner[1:]
        return out
    return [f"{pad}{_scalar(value)}"]


def dump(value: dict[str, Value]) -> str:
    """``value`` as block-style YAML text ending with a newline."""
    return "\n".join(_lines(value, 0)) + "\n"


def comment(lines: list[str]) -> str:
    """Lines as ``#`` comments (blank ones as a bare ``#``)."""
    return "".join(f"# {line}\n" if line else "#\n" for line in lines)
