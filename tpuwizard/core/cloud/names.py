"""Google's rules for the names tpuwizard puts into API paths: a project id, a zone, a node.

Apart from gcloud_config (which checks what the user typed against them) so that reading the
ledger back, which every command does while a node is kept, imports nothing more; and written
with string methods, not regular expressions, since compiling three patterns cost that read
about a third of its time (issue 54: ``fit 48 --json`` with a kept node at most 2.5x a bare
Python). tests/unit/test_cloud_names.py holds each rule against its pattern.
"""

from __future__ import annotations

LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
DIGITS = frozenset("0123456789")
NAME_CHARS = LOWER | DIGITS | {"-"}


def _label(text: str, shortest: int, longest: int) -> bool:
    """``shortest``-``longest`` lower-case letters, digits and hyphens, starting with a letter
    and ending with a letter or digit."""
    return (
        shortest <= len(text) <= longest
        and text[0] in LOWER
        and text[-1] != "-"
        and NAME_CHARS.issuperset(text)
    )


def is_project_id(text: str) -> bool:
    """Google's rule for a project id, Cloud Resource Manager v3 Project.projectId: "6 to 30
    lowercase ASCII letters, digits, or hyphens. It must start with a letter. Trailing hyphens
    are prohibited." Checked before any call, since the id is put into every API path, the
    ledger and the shell commands said back to the user."""
    return _label(text, 6, 30)


def is_zone(text: str) -> bool:
    """A region and a letter (us-central1-a), or an AI zone (us-central1-ai1a, us-central1-ai1;
    reference/google-behaviour.md, Zones): ``[a-z]+-[a-z]+[0-9]+-([a-z]|ai[0-9]+[a-z]?)``."""
    parts = text.split("-")
    if len(parts) != 3:
        return False
    area, place, letter = parts
    letters = place.rstrip("0123456789")
    return (
        _letters(area)
        and _letters(letters)
        and _digits(place[len(letters) :])
        and ((len(letter) == 1 and _letters(letter)) or _ai_zone(letter))
    )


def _ai_zone(text: str) -> bool:
    """``ai``, digits, then at most one letter (ai1, ai1a)."""
    if not text.startswith("ai"):
        return False
    rest = text[2:]
    number = rest[:-1] if rest and rest[-1] in LOWER else rest
    return _digits(number)


def _letters(text: str) -> bool:
    return bool(text) and LOWER.issuperset(text)


def _digits(text: str) -> bool:
    return bool(text) and DIGITS.issuperset(text)


def is_resource_name(text: str) -> bool:
    """A TPU node's (and an instance's) name: 1-63 lower-case letters, digits and hyphens,
    starting with a letter and not ending with a hyphen."""
    return _label(text, 1, 63)
