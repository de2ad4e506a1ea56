"""`launch --route kaggle` stopped, refused and cut off, with kaggle 2.2.5's own client talking
to a stand-in this test runs: a stop signal while the push is under way, input refused before
any call, and a network that drops while the run is followed."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.integration.kaggle_helpers import (
    Launched,
    cli,
    cli_env,
    launch,
    make_project,
    named,
    stand_ins,
)
from tests.rotation import rotating
from tests.waiting import wait_until
from tpuwizard.core.kaggle.ledger import KernelLedger

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path)


@pytest.fixture
def stand_in(tmp_path):
    yield from stand_ins(tmp_path)


# SIGINT (Ctrl+C) every run; SIGTERM (the same handler) with TPUWIZARD_DRILL=all.
@pytest.mark.parametrize(
    "stop", [getattr(signal, n) for n in rotating(["SIGINT", "SIGTERM"], 0, ("SIGINT",))]
)
def test_a_stop_while_the_push_is_under_way_asks_kaggle_and_keeps_the_record(
    tmp_path, project, stand_in, home, stop
):
    server = stand_in("slow_push=60;queue=600")  # the push lands; its answer comes late
    run = Launched(project, cli_env(tmp_path, server))
    wait_until(lambda: server.pushes, 60, "the push to reach Kaggle")
    run.proc.send_signal(stop)
    code, err = run.end()
    assert code == 128 + stop, err
    assert "stopping: asking Kaggle whether the kernel still runs" in err
    assert "Traceback" not in err
    [left] = named(run.events, "kernel_left_running")
    assert left["state"] == "QUEUED" and left["kernel"].startswith("ada/tpuwizard-")
    assert not named(run.events, "kernel_pushed")  # its answer never came
    ledger = KernelLedger(home / "kaggle-ledger.jsonl")
    [record] = ledger.open_sessions()
    assert record["op"] == "intent" and record["kernel"] == left["kernel"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--script", "nope.py"), "--script nope.py: no such file"),
        (("--script", "main.py", "--max-run", "0"), "--max-run must be 1 to 720 minutes"),
        (("--script", "main.py", "--max-run", "721"), "--max-run must be 1 to 720 minutes"),
        (("--script", "main.py", "--max-run", "soon"), "'soon' is not a finite number of minutes"),
    ],
)
def test_bad_input_exits_2_with_no_call_to_kaggle(tmp_path, project, stand_in, args, words):
    server = stand_in()
    code, out, err = cli(
        project, cli_env(tmp_path, server), "launch", "--route", "kaggle", "--json", *args
    )
    assert code == 2 and words in err and out == ""
    assert server.calls == []


def test_a_network_that_drops_while_following_ends_with_a_diagnosis_not_a_traceback(
    tmp_path, project, stand_in, home
):
    server = stand_in("queue=600;drop_after=1")  # the first state comes, then every call resets
    code, events, err = launch(project, cli_env(tmp_path, server))
    assert code == 3 and "Traceback" not in err, err
    assert [e["state"] for e in named(events, "kernel_state")] == ["QUEUED"]
    [failed] = named(events, "failed")
    assert failed["diagnosis"]["kind"] == "kaggle_connection_lost"
    assert "tpuwizard status" in failed["diagnosis"]["next_steps"][0]
    [record] = KernelLedger(home / "kaggle-ledger.jsonl").open_sessions()
    assert record["kernel"] == named(events, "kernel_pushed")[0]["kernel"]


def test_a_stand_in_that_goes_away_while_following_ends_with_the_same_diagnosis(
    tmp_path, project, stand_in
):
    server = stand_in("queue=600")
    run = Launched(project, cli_env(tmp_path, server))
    wait_until(lambda: named(run.events, "kernel_state"), 60, "the kernel's first state")
    server.switch_off()  # connection refused from now on
    code, err = run.end()
    assert code == 3 and "Traceback" not in err, err
    [failed] = named(run.events, "failed")
    assert failed["diagnosis"]["kind"] == "kaggle_connection_lost"


@pytest.mark.parametrize(
    ("method", "kind", "pushes"),
    [
        ("GetAcceleratorQuotaStatistics", "kaggle_no_answer", 0),  # before the push
        ("GetKernelSessionStatus", "kaggle_connection_lost", 1),  # while it is followed
    ],
)
def test_a_kaggle_that_never_answers_ends_the_run_in_bounded_time(
    tmp_path, project, stand_in, home, method, kind, pushes
):
    server = stand_in(f"hang={method};queue=600")  # accepts the request, never answers it
    env = cli_env(tmp_path, server, TPUWIZARD_KAGGLE_TIMEOUT="1")
    code, events, err = launch(project, env, timeout=60)  # not for ever
    assert code == 3 and "Traceback" not in err, err
    assert server.held_open >= 1 and len(server.pushes) == pushes
    [failed] = named(events, "failed")
    diagnosis = failed["diagnosis"]
    assert diagnosis["kind"] == kind and "no answer within 1 s" in diagnosis["explanation"]
    if pushes:  # the kernel is named, and `status` is the next step
        kernel = named(events, "kernel_pushed")[0]["kernel"]
        assert kernel in diagnosis["explanation"] and "tpuwizard status" in str(diagnosis)
        [record] = KernelLedger(home / "kaggle-ledger.jsonl").open_sessions()
        assert record["kernel"] == kernel
    else:
        assert "Nothing was pushed" in diagnosis["explanation"]
