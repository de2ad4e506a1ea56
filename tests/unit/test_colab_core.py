"""The Colab route's core with an in-memory colab program: what is checked before any call, how
the CLI's words are read, the ledger around ``new`` and ``stop``, a stop verified by listing,
and an exec whose CLI stops answering. (End to end with the stand-in program:
tests/integration/test_colab_route.py.)"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tpuwizard.core.colab import cells
from tpuwizard.core.colab.program import ColabCallFailed, ColabProgram, Listed, classify
from tpuwizard.core.colab.run import (
    ColabRun,
    follow_exec,
    prepare_run,
    run_session,
    stop_session,
)
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_TEARDOWN
from tpuwizard.core.kaggle.ledger import KernelLedger
from tpuwizard.core.launch.events.colab import ColabSessionStopped
from tpuwizard.core.launch.events.launch_events import Failed, Finished, ScriptLine
from tpuwizard.words.choice_words import all_words


class FakeColab(ColabProgram):
    """The calls a run makes, answered from memory; ``exec`` is a tiny Python process."""

    def __init__(self, new_fails: ColabCallFailed | None = None, stop_works: bool = True):
        super().__init__(["colab"])
        self.calls: list[tuple[str, ...]] = []
        self.listed: list[Listed] = []
        self.new_fails, self.stop_works = new_fails, stop_works
        self.exec_code = "print('hello'); print('[colab] not a script line')"
        self.status_silent = False

    def call(self, what: str, *args: str, timeout_s: float = 300) -> str:
        self.calls.append(args)
        command = args[0]
        if command == "version":
            return "Version: 0.7.5\n"  # PyPI's: no usage (test_colab_usage.py has 0.8.0)
        if command == "new":
            if self.new_fails:
                raise self.new_fails
            self.listed.append(Listed(args[2], "tpu-s-1", "V5E1"))
        if command == "stop" and self.stop_works:
            self.listed = [s for s in self.listed if s.name != args[2]]
        if command == "sessions":
            return "\n".join(
                f"[{s.name}] {s.endpoint} | Hardware: {s.hardware}" for s in self.listed
            )
        if command == "status" and self.status_silent:
            raise ColabCallFailed(what, "silent", "`colab status` gave no answer in 5 s")
        return ""

    def exec_argv(self, name: str, cell: Path, timeout_s: float, env: dict[str, str]) -> list[str]:
        self.calls.append(
            ("exec", name, str(timeout_s), *sorted(f"{k}={v}" for k, v in env.items()))
        )
        return [sys.executable, "-c", self.exec_code]


def a_run(tmp_path: Path, practice: bool = True) -> ColabRun:
    script = tmp_path / "project" / "main.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text("print('hi')\n")
    return prepare_run(
        script, ("--lr", "3"), ("*.txt",), 5, "r1", tmp_path / "runs" / "r1", practice
    )


def test_nothing_is_called_for_a_missing_script_a_limit_out_of_bounds_or_a_folder_too_large(
    tmp_path, monkeypatch
):
    with pytest.raises(BadInput, match="no such file"):
        prepare_run(tmp_path / "nope.py", (), (), None, "r", tmp_path / "r", True)
    run = a_run(tmp_path)
    for minutes in (0.5, 721):
        with pytest.raises(BadInput, match="--max-run must be 1 to 720 minutes on Colab"):
            prepare_run(tmp_path / "project" / "main.py", (), (), minutes, "r", tmp_path, True)
    assert run.session == "tpuwizard-r1" and run.expect == "cpu" and run.max_run_minutes == 5
    assert a_run(tmp_path, practice=False).expect == "tpu"
    monkeypatch.setattr(cells, "PACKED_LIMIT_BYTES", 10)
    with pytest.raises(BadInput, match="nothing was started"):
        prepare_run(tmp_path / "project" / "main.py", (), (), None, "r", tmp_path, True)


def test_the_clis_words_say_what_kind_of_failure_it_was():
    signed_out = "\nTo authorize colab-cli, visit this URL in any browser:\n  https://x\n"
    assert classify("x", 1, "", signed_out).kind == "sign-in"
    lost = "[colab] Session 's' appears to be lost (404/401). Cleaning up."
    assert classify("x", 1, lost, "").kind == "lost"
    assert classify("x", 1, "", "Traceback...\nTimeoutError: Timeout waiting").kind == "timeout"
    refused = "[colab] Allocation refused (precondition failed). This can mean..."
    assert classify("x", 1, "[colab] Creating session 's'...", refused).kind == "refused"
    assert classify("x", 1, "", "Traceback\nKeyError: 'x'").kind == "failed"


def test_a_refused_new_is_diagnosed_recorded_first_and_the_session_stop_still_verified(tmp_path):
    refused = ColabCallFailed("creating the session", "refused", "Allocation refused")
    colab = FakeColab(new_fails=refused)
    ledger = KernelLedger(tmp_path / "colab.jsonl")
    events = list(run_session(colab, a_run(tmp_path), ledger))
    [failed] = [e for e in events if isinstance(e, Failed)]
    assert failed.diagnosis.kind == "colab_no_tpu"
    assert "tpuwizard notebook --platform colab" in " ".join(map(str, failed.diagnosis.next_steps))
    assert [c[0] for c in colab.calls] == ["version", "new", "stop", "sessions"]
    assert isinstance(events[-2], ColabSessionStopped) and events[-2].verified
    assert isinstance(events[-1], Finished) and events[-1].exit_code == EXIT_CLOUD
    ops = [line for line in (tmp_path / "colab.jsonl").read_text().splitlines()]
    assert '"op": "intent"' in ops[0] and '"op": "deleted"' in ops[-1] and ledger.held() == []


def test_not_signed_in_makes_nothing_so_nothing_is_stopped(tmp_path):
    colab = FakeColab(new_fails=ColabCallFailed("creating the session", "sign-in", "visit URL"))
    ledger = KernelLedger(tmp_path / "colab.jsonl")
    events = list(run_session(colab, a_run(tmp_path), ledger))
    [failed] = [e for e in events if isinstance(e, Failed)]
    assert failed.diagnosis.kind == "colab_sign_in"
    assert "colab sessions" in all_words(failed.diagnosis.next_steps, "cli")[0]
    assert [c[0] for c in colab.calls] == ["version", "new"] and ledger.held() == []
    assert isinstance(events[-1], Finished) and events[-1].exit_code == EXIT_CLOUD


def test_a_session_still_listed_after_stop_is_not_verified_and_stays_in_the_ledger(tmp_path):
    colab = FakeColab(stop_works=False)
    ledger = KernelLedger(tmp_path / "colab.jsonl")
    colab.new("tpuwizard-r1", "v5e1")
    ledger.record("pushed", "tpuwizard-r1", "r1", endpoint="tpu-s-1")
    events = list(stop_session(colab, "tpuwizard-r1", "r1", ledger))
    assert events == [ColabSessionStopped("tpuwizard-r1", False, "colab sessions still lists it")]
    assert [r["kernel"] for r in ledger.held()] == ["tpuwizard-r1"]
    colab.stop_works = True
    stopped = list(stop_session(colab, "tpuwizard-r1", "r1", ledger))[-1]
    assert isinstance(stopped, ColabSessionStopped) and stopped.verified
    assert ledger.held() == []


def test_a_failed_stop_turns_the_runs_exit_into_4(tmp_path):
    colab = FakeColab(stop_works=False)
    colab.exec_code = "print('hi')"
    run = a_run(tmp_path)
    events = list(run_session(colab, run, KernelLedger(tmp_path / "colab.jsonl")))
    assert isinstance(events[-1], Finished) and events[-1].exit_code == EXIT_TEARDOWN


def test_exec_lines_come_as_script_lines_with_the_routes_environment(tmp_path):
    colab = FakeColab()
    run = a_run(tmp_path)
    cell = tmp_path / "cell.py"
    events = list(follow_exec(colab, run, cell, 60, "running your script", 5.0))
    assert events == [ScriptLine(worker=0, text="hello")]
    [call] = colab.calls
    assert "COURSE_EXPECT_PLATFORM=cpu" in call and "JAX_PLATFORMS=cpu" in call


def test_an_exec_whose_cli_stops_answering_is_ended_with_that_kind(tmp_path):
    colab = FakeColab()
    colab.exec_code = "import time; print('started', flush=True); time.sleep(60)"
    colab.status_silent = True
    with pytest.raises(ColabCallFailed) as caught:
        list(follow_exec(colab, a_run(tmp_path), tmp_path / "c.py", 600, "running", 0.05))
    assert caught.value.kind == "silent" and "no answer" in caught.value.detail


def test_on_colabs_tpu_the_receipt_must_show_one_v5e_chip(tmp_path):
    import json

    from tests.receipt_fixtures import verifier_receipt
    from tpuwizard.core.colab.run import _check

    run = a_run(tmp_path, practice=False)
    run.run_dir.mkdir(parents=True)
    receipt = run.run_dir / "receipt.json"
    receipt.write_text(json.dumps(verifier_receipt("tpu", 4, kind="TPU v5 lite")))
    events: list = []
    checked = _check(run, 0)
    try:
        while True:
            events.append(next(checked))
    except StopIteration as end:
        assert end.value is False
    [failed] = [e for e in events if isinstance(e, Failed)]
    assert "v5litepod-1 has 1" in failed.diagnosis.explanation
    receipt.write_text(json.dumps(verifier_receipt("tpu", 1, kind="TPU v5 lite")))
    assert list(_check(run, 0))[-1].ok


def test_a_folder_over_colabs_upload_limit_is_refused_before_anything_starts(tmp_path):
    from tpuwizard.core.colab.cells import PACKED_LIMIT_BYTES, pack_folder
    from tpuwizard.core.errors import BadInput

    (tmp_path / "main.py").write_text("print('hi')\n")
    (tmp_path / "data.bin").write_bytes(os.urandom(PACKED_LIMIT_BYTES + 1024))  # incompressible
    with pytest.raises(BadInput, match=r"more than 20 MiB .*Colab.*nothing was started"):
        pack_folder(tmp_path)
    (tmp_path / "data.bin").unlink()
    assert pack_folder(tmp_path)  # the script alone goes up
