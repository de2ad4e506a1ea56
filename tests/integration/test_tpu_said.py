"""What the TPU said, diagnosed end to end in practice (issue 54): a script whose output holds the
chip's own words (the traceback a real chip printed, tests/unit/data/tpu_errors/) is diagnosed by
them, not as "Your script failed", after a launch and on a kept node. A CPU cannot run out of HBM
or be held, so the practice script prints what the chip printed and exits as it did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.iterate_helpers import down, json_events, run, up
from tests.integration.launch_helpers import launch, sandbox_is_empty

DATA = Path(__file__).parents[1] / "unit" / "data" / "tpu_errors"


def dying_with(folder: Path, fixture: str) -> Path:
    """A script that prints a chip's whole traceback on stderr and exits 1, as Python would."""
    folder.mkdir(exist_ok=True)
    script = folder / "train.py"
    text = (DATA / fixture).read_text()
    script.write_text(f"import sys\nsys.stderr.write({text!r})\nsys.exit(1)\n")
    return script


@pytest.mark.rotating("deep-checks-e2e")
def test_a_launch_whose_script_ran_out_of_hbm_says_so_with_fits_answer(tmp_path, home):
    script = dying_with(tmp_path / "proj", "v5e_hbm_temporaries.txt")
    code, events, stderr = launch(tmp_path, "--accelerator", "v5litepod-4", "--script", str(script))
    assert code == 1, stderr
    failed = next(e for e in events if e["event"] == "failed")
    d = failed["diagnosis"]
    assert failed["stage"] == "script" and d["kind"] == "tpu_out_of_memory", d
    assert "15.89 GiB" in d["explanation"] and "15.75 GiB" in d["explanation"]
    steps = json.dumps(d["next_steps"])
    assert "v5litepod-8 holds it" in steps and "donate_argnums" in steps
    assert "the cause is in the script" not in json.dumps(events)
    assert any(e["event"] == "teardown_verified" for e in events)
    assert sandbox_is_empty(home)


@pytest.mark.rotating("kept-node-e2e")
def test_a_run_on_a_kept_node_that_finds_the_tpu_held_says_what_to_do_there(tmp_path, home):
    script = dying_with(tmp_path / "proj", "v5e_lockfile.txt")
    kept = up(tmp_path)
    try:
        held = run(tmp_path, "--json", str(script))
        assert held.returncode == 1, held.stderr
        failed = next(e for e in json_events(held.stdout) if e["event"] == "failed")
        d = failed["diagnosis"]
        assert d["kind"] == "tpu_held" and "lockfile" in d["explanation"], d
        assert "tpuwizard run again" in json.dumps(d["next_steps"])
    finally:
        down(tmp_path, kept["name"])
