"""What the quit guard says ends a node it would keep: the launch's watchdog, Google for a
Flex-start node, a node kept earlier its own deadline, else only a delete."""

from __future__ import annotations

import time

from tpuwizard.core.launch.records.billing_state import Billed
from tpuwizard.words.kept_text import guard_until_words

ZONE = "us-central1-a"


def node(name: str, route: str = "vm", **fields: object) -> Billed:
    return Billed(name, "node", ZONE, "v5litepod-4", route, 900.0, 900.0, **fields)  # type: ignore[arg-type]


def test_an_armed_watchdog_names_its_time():
    at = time.time() + 3600
    words = guard_until_words([node("tw-1")], "tw-1", at, 120)
    clock = time.strftime("%H:%M", time.localtime(at))
    assert words == (
        f"it bills until you delete it, or until its watchdog deletes it at {clock}, even if "
        "this laptop sleeps"
    )


def test_a_flex_start_node_ends_at_its_run_duration_by_google():
    words = guard_until_words([node("tw-1", "flex")], "tw-1", None, 240)
    assert words == (
        "it bills until you delete it, or until Google deletes it when its Flex-start run "
        "duration (240 min) ends"
    )


def test_a_node_kept_earlier_names_its_deadline():
    at = time.time() + 1800
    kept = node("tw-old", kept=True, kept_since=time.time(), max_deadline=at)
    words = guard_until_words([kept], "tw-new", None, 120)
    clock = time.strftime("%H:%M", time.localtime(at))
    # the end sentence's facts (words/kept_end.py), as its clause: no countdown beside it
    assert (
        words
        == f"it bills until you delete it, or until it deletes itself at {clock} (its deadline)"
    )
    unwatched = node("tw-old", kept=True, kept_since=time.time())
    assert guard_until_words([unwatched], None, None, None) == (
        "no watchdog guards it: it bills until you delete it"
    )


def test_an_on_demand_node_without_a_watchdog_only_a_delete_ends():
    assert guard_until_words([node("tw-1")], "tw-1", None, 120) == "it bills until you delete it"


def test_several_say_each_one_s_end():
    at = time.time() + 1800
    kept = node("tw-old", kept=True, kept_since=time.time(), max_deadline=at)
    words = guard_until_words([kept, node("tw-new", "flex")], "tw-new", None, 240)
    assert words.startswith("they bill until you delete them (tw-old: it deletes itself at")
    assert "tw-new: Google deletes it when its Flex-start run duration (240 min) ends)" in words
