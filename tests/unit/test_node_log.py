"""Each practice node's own log (sandbox/node_log.py): what its watchdog asked and got, and what
the watchdog said, kept after the node is gone, so a node its watchdog did not delete says why."""

from __future__ import annotations

import pytest

from tpuwizard.sandbox import node_log

NODE = "projects/tpuwizard-practice/locations/us-central1-a/nodes/dev"
PATH = "/v2/" + NODE
WATCHDOG = "tpu_watchdog/1"


@pytest.mark.parametrize(
    "resource",
    [
        "projects/../locations/us-central1-a/nodes/dev",  # would climb out of the logs folder
        "projects/p/locations/../nodes/..",
        "projects/p/locations/z/operations/op-1",  # not a node nor a queued resource
        "projects/p/locations/z/nodes/Dev",  # not an id Google gives
        "projects/p/locations/z/nodes",
        "",
    ],
)
def test_a_name_that_is_not_a_resource_has_no_log(tmp_path, resource):
    assert node_log.log_path(tmp_path, resource) is None
    node_log.note(tmp_path, resource, "x")
    assert not (tmp_path / node_log.LOGS_FOLDER).exists()


@pytest.mark.parametrize(
    ("asked", "noted"),
    [
        # A look every half second: only when its answer changes (and the first one).
        ([("GET", 200)] * 5, [("GET", 200)]),
        (
            [("GET", 200), ("GET", 401), ("GET", 401), ("GET", 200)],
            [("GET", 200), ("GET", 401), ("GET", 200)],
        ),
        # Every delete, whatever came before; the look after it is a change again.
        (
            [("GET", 200), ("DELETE", 200), ("DELETE", 200), ("GET", 200)],
            [("GET", 200), ("DELETE", 200), ("DELETE", 200), ("GET", 200)],
        ),
    ],
)
def test_the_watchdogs_calls_are_noted_when_their_answer_changes_and_every_delete(
    tmp_path, asked, noted
):
    recorder = node_log.WatchdogCalls(tmp_path)
    for method, status in asked:
        recorder.answered(WATCHDOG, method, PATH, status, "pid 1 port 2", lambda _: True)
    lines = node_log.read_log(tmp_path, NODE)
    assert [(line["method"], line["status"]) for line in lines] == noted
    assert all(line["by"] == "pid 1 port 2" and line["event"] == "watchdog_call" for line in lines)


@pytest.mark.parametrize(
    ("agent", "path", "held"),
    [
        ("python-requests/2.32", PATH, True),  # the wizard's own calls: not the watchdog's
        (WATCHDOG, PATH, False),  # a name this server does not hold: no file for any name
        (WATCHDOG, PATH + "/operations", True),
        (WATCHDOG, "/v1/projects/tpuwizard-practice:testIamPermissions", True),
    ],
)
def test_other_calls_and_names_it_does_not_hold_are_not_noted(tmp_path, agent, path, held):
    recorder = node_log.WatchdogCalls(tmp_path)
    recorder.answered(agent, "GET", path, 200, "pid 1 port 2", lambda _: held)
    assert not (tmp_path / node_log.LOGS_FOLDER).exists()


def test_when_its_vms_end_the_watchdogs_own_reports_are_kept_the_last_part_only(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(node_log, "MAX_CONSOLE_BYTES", 40)
    folder = tmp_path / "workers" / "dev"
    job = folder / "w0" / ".tpuwizard" / "jobs" / "watchdog-run-1"
    job.mkdir(parents=True)
    (job / "log").write_text("an early line that is dropped\nTPUWIZARD {'armed'}\n")
    other = folder / "w0" / ".tpuwizard" / "jobs" / "run-1"  # the script's: not the watchdog's
    other.mkdir(parents=True)
    (other / "log").write_text("the script's output\n")
    node_log.keep_consoles(tmp_path, NODE, folder, "the node was removed")
    console, ended = node_log.read_log(tmp_path, NODE)
    assert console["event"] == "watchdog_console" and console["job"] == "watchdog-run-1"
    assert console["lines"][-1] == "TPUWIZARD {'armed'}"
    assert "dropped" not in " ".join(console["lines"])
    assert ended["event"] == "vms_ended" and ended["why"] == "the node was removed"


def test_the_log_stops_growing_at_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(node_log, "MAX_LOG_BYTES", 200)
    for n in range(50):
        node_log.note(tmp_path, NODE, "watchdog_call", n=n)
    path = node_log.log_path(tmp_path, NODE)
    assert path is not None and 200 <= path.stat().st_size < 300
    assert path.stat().st_mode & 0o777 == 0o600
