"""`launch --fetch` end to end through the sandbox's local shell: bytes verified, links not
walked, and a file that did not come back whole fails the run before the node is deleted."""

import hashlib
import json
import random
import subprocess
from pathlib import Path

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import ZONE, env, names, sandbox_is_empty

SIZE = 3_000_000
SCRIPT = f"""
import os, pathlib, random
out = pathlib.Path("out")
out.mkdir()
(out / "data.bin").write_bytes(random.Random(7).randbytes({SIZE}))
os.symlink("/etc", "etc")
pathlib.Path("blocked").mkdir()
(pathlib.Path("blocked") / "r.txt").write_text("cannot land")
"""


def test_files_come_back_verified_and_an_incomplete_one_fails_the_run_before_teardown(
    tmp_path, home
):
    script = tmp_path / "outputs.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen(
        tpuwizard_cmd(
            "launch", "--sandbox", "--json", "--zone", ZONE, "--accelerator", "v5litepod-1",
            "--script", str(script), "--fetch", "**",
        ),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    events = []
    for line in proc.stdout:
        events.append(json.loads(line))
        if events[-1]["event"] == "planned":
            # Where blocked/ would land there is a file: this computer cannot write it.
            files = Path(events[-1]["run_dir"]) / "files"
            files.mkdir(parents=True)
            (files / "blocked").write_text("in the way")
    stderr = proc.stderr.read()
    assert proc.wait(timeout=240) == 1, stderr

    fetched = {Path(e["path"]).name: e["path"] for e in events if e["event"] == "file_fetched"}
    data = Path(fetched["data.bin"]).read_bytes()
    expected = random.Random(7).randbytes(SIZE)
    assert hashlib.sha256(data).hexdigest() == hashlib.sha256(expected).hexdigest()
    skipped = {e["path"]: e for e in events if e["event"] == "file_not_fetched"}
    # The link to /etc is one entry, not the thousands of files under it.
    # The script itself matched '**' too: as uploaded, so not the run's output.
    assert set(skipped) == {"etc", "blocked/r.txt", "outputs.py"}
    assert "unchanged since it was uploaded" in skipped["outputs.py"]["reason"]
    assert skipped["outputs.py"]["incomplete"] is False
    assert skipped["etc"]["incomplete"] is False
    assert skipped["blocked/r.txt"]["incomplete"] is True
    assert "cannot write it here" in skipped["blocked/r.txt"]["reason"]

    # The user hears of it while the node still exists; then it is deleted and verified gone.
    kinds = names(events)
    told = next(i for i, e in enumerate(events) if e.get("path") == "blocked/r.txt")
    assert told < kinds.index("teardown_started") < kinds.index("teardown_verified")
    assert events[-1]["event"] == "finished" and events[-1]["exit_code"] == 1
    said = stderr.index("Not copied back: 'blocked/r.txt'")
    assert said < stderr.index("Deleting ")
    assert sandbox_is_empty(home)
