"""The stall guard end to end in practice (issue 47, item 2): a worker that hangs in the verifier,
before the script starts, is ended by the guard; and the drills the project asks of a new path
(tests/integration/signal_drill.py's rules): a stop signal while a stall is waited for or being
handled deletes the node and exits 128 + N; SIGKILL of tpuwizard during a stalled run leaves the
node for `status` to list and `teardown --all` to delete, the ledger saying so throughout."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.drill_backends import sandbox_names
from tests.integration.launch_helpers import (
    ZONE,
    env,
    launch,
    ledger_all_gone,
    sandbox_is_empty,
    status,
    teardown_all,
)
from tests.integration.signal_drill import Case, clean_up, judge, stop_at
from tpuwizard.core.launch.records.ledger import Ledger

QUIET = "print('starting', flush=True)\n"  # the verifier stalls first: this never runs
# worker_stall=0 suspends it as it starts; should the suspension come late, it is as silent.
HANGS = "import time\nprint('starting', flush=True)\ntime.sleep(600)\n"


def stalled_jobs(home: Path) -> list[str]:
    """The jobs the sandbox's worker_stall / verify_stall fault has suspended so far."""
    path = home / "sandbox" / "state.json"
    try:
        return list(json.loads(path.read_text()).get("stalled_jobs") or [])
    except (OSError, ValueError):
        return []  # not written yet, or caught mid-write: the next look reads it


def test_a_worker_that_hangs_in_the_verifier_is_ended_by_the_stall_guard(tmp_path, home):
    """verify_stall=0: the verifier's job is suspended as it starts, so the script never runs;
    the guard ends it after its timeout, the summary names the verifier, the node goes."""
    script = tmp_path / "train.py"
    script.write_text(QUIET)
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-1",
        "--script",
        str(script),
        "--stall-timeout",
        "0.2",
        TPUWIZARD_SANDBOX_FAULTS="verify_stall=0",
    )
    failed = next(e for e in events if e["event"] == "failed")
    assert failed["stage"] == "verify", failed
    diagnosis = failed["diagnosis"]
    assert diagnosis["kind"] == "workers_stalled" and diagnosis["title"] == "The verifier stalled"
    steps = diagnosis["next_steps"]
    assert steps[0].startswith("stalled in the verifier: w0 printed nothing"), steps
    assert "w0's stack: no stack: its verifier is suspended (stopped), so it cannot answer" in steps
    assert not any(e["event"] == "script_line" for e in events)  # the script never started
    finished = next(e for e in events if e["event"] == "finished")
    kept = (Path(finished["run_dir"]) / "verifier-stall.txt").read_text()
    assert kept.startswith("stalled in the verifier: w0")
    assert "Failed during verify: The verifier stalled" in stderr
    assert any(e["event"] == "teardown_verified" for e in events) and code == 1
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def stalled_launch(root: Path, minutes: str) -> tuple[list[str], dict[str, str]]:
    """A launch whose script is suspended as it starts (worker_stall=0), in ``root``."""
    (root / "train.py").write_text(HANGS)
    argv = tpuwizard_cmd(
        "launch", "--sandbox", "--json", "--zone", ZONE, "--accelerator", "v5litepod-1",
        "--script", str(root / "train.py"), "--stall-timeout", minutes,
    )  # fmt: skip
    environ = env(
        TPUWIZARD_HOME=str(root / "state"),
        TPUWIZARD_SANDBOX_DELAY="0.3",
        TPUWIZARD_SANDBOX_FAULTS="worker_stall=0",
    )
    return argv, environ


@pytest.mark.rotating("signal-drill")
@pytest.mark.parametrize("point", ["waited", "handled"])
def test_a_sigint_while_a_stall_is_waited_for_or_handled_deletes_the_node(tmp_path, point):
    """``waited``: the script is suspended and the guard (10 minutes) is still waiting; a
    ``handled`` stall: the guard (6 s) has ended the script and the run is being ended by its
    rule. Either way SIGINT leaves nothing billing and exits 130."""
    home = tmp_path / "state"
    minutes = "10" if point == "waited" else "0.1"
    argv, environ = stalled_launch(tmp_path, minutes)

    def stalled_failure(stream: str, line: str) -> bool:
        if stream != "out":
            return False
        event = json.loads(line)
        return event["event"] == "failed" and event["diagnosis"]["kind"] == "workers_stalled"

    def suspended() -> bool:
        return bool(stalled_jobs(home))

    try:
        if point == "waited":
            stopped = stop_at(argv, tmp_path, environ, lambda s, t: False, signal.SIGINT, suspended)
        else:
            stopped = stop_at(argv, tmp_path, environ, stalled_failure, signal.SIGINT)
        outcome = judge(Case("launch", point, signal.SIGINT), stopped, home, tmp_path, 0)
        assert outcome.passed, outcome.problems
        if point == "waited":  # stopped before the guard said anything
            assert not any(stalled_failure(*seen) for seen in stopped.lines)
        said = "\n".join(text for stream, text in stopped.lines if stream == "err")
        assert "Verified gone" in said, said
    finally:
        clean_up(home, tmp_path)


@pytest.mark.rotating("signal-drill")
def test_sigkill_during_a_stalled_run_leaves_the_node_for_status_and_teardown(tmp_path):
    """tpuwizard killed while its script is suspended: nothing deletes the node now but the next
    command. The ledger holds it open, `status` lists it, `teardown --all` deletes it (verified)
    and the ledger closes it."""
    home = tmp_path / "state"
    argv, environ = stalled_launch(tmp_path, "10")
    try:
        stopped = stop_at(
            argv,
            tmp_path,
            environ,
            lambda s, t: False,
            signal.SIGKILL,
            lambda: bool(stalled_jobs(home)),
        )
        assert stopped.reached and stopped.code == 137, stopped.lines[-3:]
        (name,) = sandbox_names(home)
        ledger = Ledger(home / "sandbox" / "ledger.jsonl")
        assert [e.resource.name for e in ledger.open_entries()] == [name]
        listed = status(tmp_path, TPUWIZARD_HOME=str(home))
        assert [r["name"] for r in listed] == [name]
        ended = teardown_all(tmp_path, TPUWIZARD_HOME=str(home))
        assert ended.returncode == 0, ended.stderr
        assert [r["verified"] for r in json.loads(ended.stdout)["results"]] == [True]
        assert sandbox_names(home) == set() and ledger_all_gone(home)
        assert status(tmp_path, TPUWIZARD_HOME=str(home)) == []
    finally:
        clean_up(home, tmp_path)
