"""A queued request's name (the node's plus "-qr") is explained where it first appears, for
every front end (issue 31: the -qr names were never explained)."""

from __future__ import annotations

import pytest

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.words.choice_words import AUDIENCES
from tpuwizard.words.event_text import describe


@pytest.mark.parametrize("audience", AUDIENCES)
def test_the_queued_request_is_said_to_ask_for_the_node_and_to_go_with_it(audience):
    event = ev.ResourceExists("tpu-a-qr", "queued", "us-central1-a", "v5litepod-4", "spot", "r")
    words = " ".join(" ".join(describe(event, audience)).split())
    assert "Asked for tpu-a-qr: the queued request that asks Google for the node" in words
    assert "it is deleted with the node" in words
