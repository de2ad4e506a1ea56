"""A full disk at the hand-over and at the teardown, in practice (issue 48, item 1): `up` and
`launch --keep` keep the node and say it is kept and billing, exit 4, and a plain launch deletes
its node, verifies it gone and says so, while the ledger's disk refuses every line.

The disk is made full for the command's own process with a real limit that holds as root too:
``ulimit -f`` (RLIMIT_FSIZE, set on the running command), at the size its ledger has then. The
ledger is padded with blank lines first (which it skips), so that every other file the command
writes afterwards (receipt, cost, output) stays under the limit and only the ledger's appends
are refused (EFBIG), as a disk with room for nothing more would refuse them."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import threading
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import ZONE, env, sandbox_is_empty, status, teardown_all

LAUNCH = ["launch", "--sandbox", "--zone", ZONE, "--accelerator", "v5litepod-1"]
KEEP = [*LAUNCH, "--keep"]
PAD = 256 * 1024  # the ledger's size before the launch: every other file stays below it
WAIT_SCRIPT = """\
import pathlib, sys, time
print("WAITING", flush=True)
while not pathlib.Path(sys.argv[1]).exists():
    time.sleep(0.05)
print("GOING ON", flush=True)
"""


def ledger(home: Path) -> Path:
    return home / "sandbox" / "ledger.jsonl"


@pytest.fixture
def disk(home, tmp_path) -> dict[str, str]:
    """The environment of each command: its own temporary folder (where held lines go), and
    a ledger padded so that the limit set later refuses nothing but its appends."""
    ledger(home).parent.mkdir(parents=True)
    ledger(home).write_bytes(b"\n" * PAD)
    (tmp_path / "tmp").mkdir()
    return {"TMPDIR": str(tmp_path / "tmp")}


def held_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "tmp").glob("tpuwizard-*/*.held"))


def on_file(home: Path) -> list[str]:
    lines = ledger(home).read_bytes().splitlines()
    return [json.loads(line)["op"] for line in lines if line.strip()]


def fill_the_disk(pid: int, home: Path) -> None:
    """From now on the command may not make any file longer than its ledger is now."""
    size = ledger(home).stat().st_size
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (size, size))


def run_until(tmp_path: Path, args: list[str], full_at, extra: dict[str, str], go: Path | None):
    """Run ``tpuwizard ARGS --json``; when ``full_at(event)`` first holds, fill the disk (and
    let the waiting script go on). Returns (exit code, events, stderr)."""
    proc = subprocess.Popen(
        tpuwizard_cmd(args[0], "--json", *args[1:]),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env(**extra),
    )
    events: list[dict] = []
    said: list[str] = []  # stderr, read beside stdout so that neither pipe fills
    reader = threading.Thread(target=lambda: said.extend(proc.stderr or ()), daemon=True)
    reader.start()
    filled = False
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            events.append(json.loads(line))
            if not filled and full_at(events[-1]):
                fill_the_disk(proc.pid, Path(os.environ["TPUWIZARD_HOME"]))
                filled = True
                if go is not None:
                    go.touch()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(timeout=60)
    err = "".join(said)
    assert filled, f"never reached the hand-over; saw {[e['event'] for e in events]}\n{err}"
    return proc.returncode, events, err


def script_waiting(event: dict) -> bool:
    return event["event"] == "script_line" and event["text"] == "WAITING"


def of(events: list[dict], name: str) -> list[dict]:
    return [e for e in events if e["event"] == name]


def node_states(home: Path) -> dict[str, str]:
    state = json.loads((home / "sandbox" / "state.json").read_text())
    return {key.rsplit("/", 1)[-1]: node["state"] for key, node in state["nodes"].items()}


def status_doc(tmp_path: Path, extra: dict[str, str]) -> dict:
    shown = subprocess.run(
        tpuwizard_cmd("status", "--sandbox", "--json"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(**extra),
    )
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def assert_kept_and_said(tmp_path, home, code, events, err, extra) -> str:
    """The node is READY in the cloud's list, the command said it is kept and billing, with
    its name and deadline, said where its record is held, and exited 4; the next command reads
    the record and moves it into the ledger."""
    (kept,) = of(events, "kept")
    name = kept["name"]
    assert node_states(home) == {name: "READY"}
    assert code == 4, err
    (held,) = of(events, "ledger_record_held")
    assert (held["name"], held["op"]) == (name, "kept")
    assert held["reason"] == os.strerror(errno.EFBIG)  # "File too large"
    assert held["kept_in"] and Path(held["kept_in"]) in held_files(tmp_path)
    # Practice: it runs, not billed (a real run's words say it keeps billing).
    assert f"Kept {name} in {ZONE} on purpose: it keeps running (practice: not billed" in err
    assert "It deletes itself" in err  # its end, one sentence
    assert f"could not record that {name} is kept" in err and held["kept_in"] in err
    assert "Nothing was created" not in err and "Nothing is billing" not in err
    assert not of(events, "teardown_started")
    assert "kept" not in on_file(home)  # the ledger itself refused it ...
    doc = status_doc(tmp_path, extra)
    assert [(r["name"], r["state"]) for r in doc["resources"]] == [(name, "READY")]
    assert [k["name"] for k in doc["kept"]] == [name], doc["kept"]
    assert on_file(home)[-1] == "kept" and held_files(tmp_path) == []  # ... moved in since
    done = teardown_all(tmp_path, **extra)
    assert done.returncode == 0, done.stderr
    assert sandbox_is_empty(home)
    return name


def test_launch_keep_on_a_full_disk_keeps_the_node_and_says_it_bills(tmp_path, home, disk):
    (tmp_path / "wait.py").write_text(WAIT_SCRIPT)
    go = tmp_path / "go"
    code, events, err = run_until(
        tmp_path,
        [*KEEP, "--script", "wait.py", "--", str(go)],
        script_waiting,
        disk,
        go,
    )
    name = assert_kept_and_said(tmp_path, home, code, events, err, disk)
    (finished,) = of(events, "finished")
    assert finished["exit_code"] == 4 and finished["remaining"] == [name]
    assert f"STILL RUNNING (practice: not billed): {name}." in err and "Exit code 4" in err


def test_up_on_a_full_disk_keeps_the_node_and_says_it_bills(tmp_path, home, disk):
    code, events, err = run_until(
        tmp_path,
        ["up", *LAUNCH[1:]],
        lambda event: event["event"] == "watchdog" and event["armed"],
        disk,
        None,
    )
    name = assert_kept_and_said(tmp_path, home, code, events, err, disk)
    assert events[-1]["event"] == "kept"  # up --json's last line, as ever
    assert f"{name} is up and kept" in err and "Its record is not in the ledger" in err


def test_a_plain_launch_on_a_full_disk_deletes_verifies_and_says_gone(tmp_path, home, disk):
    (tmp_path / "wait.py").write_text(WAIT_SCRIPT)
    go = tmp_path / "go"
    code, events, err = run_until(
        tmp_path,
        [*LAUNCH, "--script", "wait.py", "--", str(go)],
        script_waiting,
        disk,
        go,
    )
    assert sandbox_is_empty(home) or node_states(home) == {}
    (verified,) = of(events, "teardown_verified")
    assert not of(events, "teardown_failed")
    (held,) = of(events, "ledger_record_held")
    assert (held["name"], held["op"]) == (verified["name"], "gone")
    assert code == 0 and of(events, "finished")[0]["remaining"] == [], err
    assert f"{verified['name']} in {ZONE} verified gone" in err and "NOT verified" not in err
    assert "STILL BILLING" not in err and "Nothing is billing" in err
    assert "gone" not in on_file(home)  # refused by the ledger's disk, held aside
    assert status(tmp_path, **disk) == []  # the next command reads it, and moves it in
    assert on_file(home)[-1] == "gone" and held_files(tmp_path) == []
