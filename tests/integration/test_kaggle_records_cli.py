"""`status` and `teardown` for the kernels `launch --route kaggle` pushed, with kaggle 2.2.5's
own client talking to a stand-in this test runs: a kernel whose command was killed is listed
with Kaggle's state and its session limit, an ended one is deleted and verified gone, and a
kernel no record proves this user's is never touched."""

from __future__ import annotations

import json
import signal
import time
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
from tests.waiting import wait_until
from tpuwizard.core.kaggle.ledger import KernelLedger

# Each of the three that launch or start Kaggle's client in turn (every behaviour in them is
# also proven against an in-memory Kaggle on every run: tests/unit/test_kaggle_records.py).
pytestmark = pytest.mark.slow
kaggle_e2e = pytest.mark.rotating("kaggle-e2e")


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path)


@pytest.fixture
def stand_in(tmp_path):
    yield from stand_ins(tmp_path)


@kaggle_e2e
def test_after_sigkill_status_lists_the_kernel_and_teardown_says_it_cannot_end_it(
    tmp_path, project, stand_in, home
):
    server = stand_in("queue=600")  # its session stays QUEUED
    env = cli_env(tmp_path, server)
    run = Launched(project, env)
    wait_until(lambda: named(run.events, "kernel_state"), 60, "the kernel's first state")
    run.proc.send_signal(signal.SIGKILL)
    assert run.end()[0] == -signal.SIGKILL
    [pushed] = named(run.events, "kernel_pushed")

    code, out, err = cli(project, env, "status", "--json")
    assert code == 0, err
    [kernel] = json.loads(out)["kaggle_kernels"]
    assert kernel["kernel"] == pushed["kernel"] and kernel["state"] == "QUEUED"
    assert kernel["may_run"] and kernel["ends_by"] and kernel["url"] == pushed["url"]

    code, out, err = cli(project, env, "teardown", pushed["kernel"], "--yes")
    assert code == 4 and "was NOT deleted" in err and "no public call cancels it" in err
    assert "Traceback" not in err
    assert [s.state for s in server.sessions.latest.values()] == ["QUEUED"]  # untouched
    ledger = KernelLedger(home / "kaggle-ledger.jsonl")
    assert [r["kernel"] for r in ledger.open_sessions()] == [pushed["kernel"]]


@kaggle_e2e
def test_an_ended_kernel_is_listed_as_kept_then_deleted_and_verified_gone(
    tmp_path, project, stand_in
):
    server = stand_in("kernel_error")  # the kernel ends at once: no JAX run needed
    env = cli_env(tmp_path, server)
    code, events, err = launch(project, env)
    assert code == 1, err
    [pushed] = named(events, "kernel_pushed")
    ref = pushed["kernel"]

    code, out, err = cli(project, env, "status")
    assert code == 0, err
    assert f"{ref}: ERROR; kept in your Kaggle account" in out
    assert f"tpuwizard teardown {ref}` deletes it" in out
    # The kernel is listed: status never says nothing exists (only that no TPU does).
    assert "Nothing you created" not in out and "No Cloud TPU you created" in out

    name = ref.split("/")[1]  # its name alone is enough
    code, out, err = cli(project, env, "teardown", name, "--yes", "--json")
    assert code == 0, err
    [torn] = json.loads(out)["kaggle"]
    assert torn["kernel"] == ref and torn["verified"]
    assert server.sessions.latest == {} and "Kaggle no longer finds it" in err

    server.calls.clear()
    code, out, err = cli(project, env, "status", "--json")
    assert code == 0 and json.loads(out)["kaggle_kernels"] == [], err
    assert server.calls == []  # the ledger holds nothing: Kaggle is not asked


@kaggle_e2e
def test_a_kernel_no_record_proves_this_users_is_never_touched(tmp_path, project, stand_in, home):
    server = stand_in()
    # A record of a kernel pushed while another account was signed in, and Kaggle holding it.
    server.sessions.push("bob/tpuwizard-r1", "print('bob')", 600, "TpuV5E8")
    wait_until(lambda: server.sessions.latest["bob/tpuwizard-r1"].ended.is_set(), 60, "its end")
    KernelLedger(home / "kaggle-ledger.jsonl").record("ended", "bob/tpuwizard-r1", "r1")
    env = cli_env(tmp_path, server)

    code, _, err = cli(project, env, "teardown", "bob/tpuwizard-r1", "--yes")
    assert code == 4 and "signed in as ada" in err and "not touched" in err
    # A slug the ledger does not hold: not a Kaggle kernel of this user's at all.
    code, _, err = cli(project, env, "teardown", "ada/tpuwizard-zz", "--yes")
    assert code == 2 and "ada/tpuwizard-zz" in err
    assert "bob/tpuwizard-r1" in server.sessions.latest
    assert not [c for c in server.calls if "Delete" in c or "Status" in c]


def test_status_without_kaggle_credentials_says_the_kernels_were_not_checked(
    tmp_path, project, home
):
    KernelLedger(home / "kaggle-ledger.jsonl").record(
        "pushed", "ada/tpuwizard-r1", "r1", ends_by=9e9, url="https://www.kaggle.com/code/x"
    )
    code, out, err = cli(project, cli_env(tmp_path), "status", "--json")
    assert code == 3
    [kernel] = json.loads(out)["kaggle_kernels"]
    assert "no Kaggle credentials" in kernel["problem"] and "ada/tpuwizard-r1" in err


def test_teardown_all_ends_the_ended_kernel_and_names_the_running_one(
    tmp_path, project, stand_in, home
):
    server = stand_in()
    ledger = KernelLedger(home / "kaggle-ledger.jsonl")
    # Two kernels of ada's runs, pushed straight to the stand-in (no JAX): one ended, one
    # still running its session.
    server.sessions.push("ada/tpuwizard-r1", "print('done')", 600, "TpuV5E8")
    server.sessions.push("ada/tpuwizard-r2", "import time\ntime.sleep(600)", 600, "TpuV5E8")
    wait_until(lambda: server.sessions.latest["ada/tpuwizard-r1"].ended.is_set(), 60, "r1's end")
    wait_until(lambda: server.sessions.latest["ada/tpuwizard-r2"].state == "RUNNING", 60, "r2")
    ledger.record("ended", "ada/tpuwizard-r1", "r1")
    url = "http://localhost/code/ada/tpuwizard-r2"
    ledger.record("pushed", "ada/tpuwizard-r2", "r2", ends_by=4102444800.0, url=url)
    env = cli_env(tmp_path, server)

    code, out, err = cli(project, env, "teardown", "--all", "--yes", "--json", "--sandbox")
    assert code == 4, err
    torn = {t["kernel"]: t for t in json.loads(out)["kaggle"]}
    assert torn["ada/tpuwizard-r1"]["verified"] and not torn["ada/tpuwizard-r2"]["verified"]
    assert "Deleted ada/tpuwizard-r1 from your Kaggle account" in err
    assert "ada/tpuwizard-r2 was NOT deleted" in err and "no public call cancels it" in err
    until = time.strftime("%Y-%m-%d %H:%M", time.localtime(4102444800.0))
    assert f"stop it sooner on its page: {url}" in err and f"ends it by about {until}" in err
    assert "No TPU to delete" in err and "Traceback" not in err
    assert list(server.sessions.latest) == ["ada/tpuwizard-r2"]  # the running one untouched
    assert [r["kernel"] for r in ledger.held()] == ["ada/tpuwizard-r2"]
