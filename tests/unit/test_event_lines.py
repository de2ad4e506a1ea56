"""The lines printed for lifecycle events (the CLI, plain mode and the wizard's logs)."""

from tests.lifecycle_events import planned
from tpuwizard.core.launch import events as ev
from tpuwizard.event_text import describe


def test_the_creating_line_says_the_deadline_in_whole_minutes_or_that_there_is_none():
    assert "deadline 120 min." in describe(planned(max_run_minutes=120.0))[0]
    assert "deadline 2.5 min." in describe(planned(max_run_minutes=2.5))[0]
    assert "no deadline." in describe(planned(max_run_minutes=None))[0]
    assert "None" not in describe(planned(max_run_minutes=None))[0]


def test_the_queued_request_is_explained_where_its_name_first_appears():
    queued = ev.ResourceExists(
        "tpuwizard-r1-qr", "queued", "us-central1-a", "v5litepod-4", "spot", "r1"
    )
    line = " ".join(describe(queued))
    assert "tpuwizard-r1-qr" in line and "queued request" in line
    assert "deleted with the node" in line
    # A node made directly has no request to explain.
    node = ev.ResourceExists("tpuwizard-r1", "node", "us-central1-a", "v5litepod-4", "vm", "r1")
    assert describe(node) == []
