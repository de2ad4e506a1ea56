"""Compute Engine's list ``filter``, the part of its grammar the sandbox speaks.

compute.v1.json's ``filter`` parameter describes two kinds of expression, which "cannot be mixed
in one request":
- AIP-160: ``field OP value`` with OP one of ``=``, ``!=``, ``>``, ``<``, ``<=``, ``>=``, ``:``
  (``labels.owner:*`` tests that a key is there), nested fields by dots (``labels.KEY``,
  ``scheduling.automaticRestart = false``), several expressions each in parentheses, ANDed by
  default or with ``AND``;
- regular expressions: ``field eq literal`` / ``field ne literal`` (unquoted, 'single' or "double"
  quoted, RE2 matching the whole field), alone or as several parenthesized expressions.
A filter Google would refuse (an unknown operator, unbalanced quotes or parentheses, the two kinds
mixed) answers 400 as Google does: ``Invalid value for field 'filter'``. ``OR`` is Google's but not
the sandbox's: it is refused with a 400 that says so, never ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tpuwizard.sandbox.model import ApiError

TOKEN = re.compile(
    r"""\s*(?:(?P<open>\()|(?P<close>\))|(?P<op>!=|<=|>=|=|<|>|:)|(?P<quoted>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?P<word>[^\s()=!<>:"']+))"""
)
OPERATORS = ("=", "!=", "<", ">", "<=", ">=", ":", "eq", "ne")


@dataclass(frozen=True)
class Term:
    field: str
    op: str
    value: str


def refused(text: str, why: str = "Invalid list filter expression.") -> ApiError:
    return ApiError(400, "invalid", f"Invalid value for field 'filter': '{text}'. {why}")


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise refused(text)
        kind = match.lastgroup or ""
        value = match.group(kind)
        if kind == "quoted":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        out.append((kind, value))
        at = match.end()
    return out


def parse_filter(text: str) -> list[Term]:
    """The terms of a filter, all of which must hold; [] for no filter."""
    tokens = _tokens(text)
    terms: list[Term] = []
    kinds: set[str] = set()
    i = 0
    while i < len(tokens):
        kind, value = tokens[i]
        if kind == "word" and value == "AND":
            i += 1
            continue
        if kind == "word" and value == "OR":
            raise refused(text, "The practice sandbox does not support OR in filters.")
        grouped = kind == "open"
        if grouped:
            i += 1
        if i + 3 > len(tokens):
            raise refused(text)
        (fkind, field), (okind, op), (vkind, value) = tokens[i : i + 3]
        if fkind != "word" or (okind != "op" and op not in ("eq", "ne")):
            raise refused(text)
        if vkind not in ("word", "quoted"):
            raise refused(text)
        kinds.add("regex" if op in ("eq", "ne") else "aip160")
        terms.append(Term(field, op, value))
        i += 3
        if grouped:
            if i >= len(tokens) or tokens[i][0] != "close":
                raise refused(text)
            i += 1
        elif len(tokens) > i and tokens[i] not in (("word", "AND"), ("word", "OR")):
            raise refused(text)  # more than one expression needs parentheses, or AND
    if len(kinds) > 1:
        raise refused(text, "Regular expressions and AIP-160 expressions cannot be mixed.")
    return terms


def _value(resource: dict[str, Any], field: str) -> Any:
    current: Any = resource
    for part in field.split("."):
        if not isinstance(current, dict) or part not in current:
            return None
        current = current[part]
    return current


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _holds(term: Term, resource: dict[str, Any]) -> bool:
    value = _value(resource, term.field)
    if term.op == ":":
        if term.value == "*":
            return value is not None
        if isinstance(value, list):
            return any(_text(v) == term.value for v in value)
        return value is not None and term.value in _text(value)
    if term.op in ("eq", "ne"):
        found = value is not None and re.fullmatch(term.value, _text(value)) is not None
        return found == (term.op == "eq")
    if term.op in ("=", "!="):
        return (value is not None and _text(value) == term.value) == (term.op == "=")
    if value is None:
        return False
    try:
        left, right = float(_text(value)), float(term.value)
    except ValueError:
        left, right = _text(value), term.value  # type: ignore[assignment]
    return {"<": left < right, ">": left > right, "<=": left <= right, ">=": left >= right}[term.op]


def matches(terms: list[Term], resource: dict[str, Any]) -> bool:
    return all(_holds(t, resource) for t in terms)
