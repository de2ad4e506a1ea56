"""Autocheckpoint's drills (issue 47, item 5; the rules of tests/integration/signal_drill.py):
asked where the run cannot have it, `launch` exits 2 before any cloud call; a SIGINT while its
spot request is being made through v2alpha1 deletes what was made and exits 130."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import ZONE, env, launch
from tests.integration.signal_drill import Case, clean_up, judge, stop_at

SLEEPS = "import time\nprint('starting', flush=True)\ntime.sleep(600)\n"


@pytest.mark.parametrize(
    ("where", "asked", "said"),
    [
        (  # a generation Google's Autocheckpoint does not serve
            ("--accelerator", "v6e-4", "--zone", "us-east5-b", "--route", "spot"),
            ("--checkpoints", "ckpt"),
            "--autocheckpoint is for TPU-API nodes of v2, v3, v4 and v5e only",
        ),
        (  # Compute Engine: Autocheckpoint is the TPU API's
            ("--accelerator", "v6e-4", "--zone", "us-east5-b", "--route", "spot"),
            ("--backend", "compute", "--checkpoints", "ckpt"),
            "v6e-4 on compute cannot have it",
        ),
        (  # on demand nothing resumes: no checkpoints folder to save into
            ("--accelerator", "v5litepod-4", "--zone", ZONE, "--route", "vm"),
            (),
            "--autocheckpoint needs --checkpoints DIR",
        ),
    ],
    ids=["v6e", "compute", "on-demand"],
)
def test_autocheckpoint_where_the_run_cannot_have_it_is_exit_2_before_any_cloud_call(
    tmp_path, home, where, asked, said
):
    (tmp_path / "train.py").write_text(SLEEPS)
    code, events, stderr = launch(
        tmp_path, *where, "--script", "train.py", *asked, "--autocheckpoint", where=()
    )
    assert code == 2, stderr
    assert said in " ".join(stderr.split()) and "Traceback" not in stderr
    assert events == []  # not even "planned"
    assert not (home / "sandbox" / "ledger.jsonl").exists()  # no intent: no create was near
    assert not (home / "sandbox" / "state.json").exists()  # the practice cloud was asked nothing


def v2alpha1_request_held(home: Path) -> bool:
    """The practice cloud holds a queued request whose node asks for Autocheckpoint: a field
    only its v2alpha1 accepts (v2 answers 400)."""
    try:
        state = json.loads((home / "sandbox" / "state.json").read_text())
    except (OSError, ValueError):
        return False
    return any(
        spec.get("node", {}).get("autocheckpointEnabled")
        for queued in state.get("queued", {}).values()
        for spec in queued.get("tpu", {}).get("nodeSpec", [])
    )


@pytest.mark.rotating("signal-drill")
def test_a_sigint_during_the_v2alpha1_create_deletes_what_was_made(tmp_path):
    home = tmp_path / "state"
    (tmp_path / "train.py").write_text(SLEEPS)
    argv = tpuwizard_cmd(
        "launch", "--sandbox", "--json", "--zone", ZONE, "--accelerator", "v5litepod-1",
        "--route", "spot", "--script", str(tmp_path / "train.py"), "--checkpoints", "ckpt",
    )  # fmt: skip
    environ = env(TPUWIZARD_HOME=str(home), TPUWIZARD_SANDBOX_DELAY="3")
    try:
        stopped = stop_at(
            argv,
            tmp_path,
            environ,
            lambda stream, line: False,
            signal.SIGINT,
            lambda: v2alpha1_request_held(home),
        )
        said = "\n".join(text for stream, text in stopped.lines if stream == "err")
        assert "Autocheckpoint: on" in said, said  # said before the create
        outcome = judge(Case("launch", "create", signal.SIGINT), stopped, home, tmp_path, 0)
        assert outcome.passed, outcome.problems
        assert not any(json.loads(t)["event"] == "ready" for s, t in stopped.lines if s == "out")
    finally:
        clean_up(home, tmp_path)
