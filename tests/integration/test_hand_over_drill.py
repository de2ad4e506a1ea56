"""The hand-over drill (issue 56 items 3 and 5, issue 52 item 4): `up` and `launch --keep` in
practice, stopped by SIGTERM just before and just after their Kept event, and `launch --keep`
whose bootstrap fails. What a stop says is what happens: before the hand-over it deletes (said,
verified), after it the node stays kept (said, with its end), listed by `status` from the lasting
practice sandbox, and its watchdog can still delete it; either way the summary says exit 143."""

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
)
from tests.integration.signal_drill import Stopped, clean_up, stop_at
from tests.waiting import wait_until

pytestmark = pytest.mark.rotating("signal-drill")

DELETING = "SIGTERM: stopping now and deleting what this run created."
HANDED = "was handed over already: it stays kept."


def stopped(root: Path, command: str, trigger, *args: str, **extra: str) -> Stopped:
    """``command`` (``up`` or ``launch --keep``) in practice under ``root``, SIGTERM at the first
    line ``trigger(stream, line)`` holds for."""
    root.mkdir(parents=True, exist_ok=True)
    where = ("--zone", ZONE, "--accelerator", "v5litepod-1")
    if command == "up":
        argv = tpuwizard_cmd("up", "--sandbox", *where, *args)
    else:
        argv = tpuwizard_cmd("launch", "--sandbox", "--json", "--keep", *where, *args)
    environ = env(TPUWIZARD_HOME=str(root / "state"), TPUWIZARD_SANDBOX_DELAY="0.3", **extra)
    return stop_at(argv, root, environ, trigger, signal.SIGTERM)


def said(out: Stopped) -> str:
    return "\n".join(text for stream, text in out.lines if stream == "err")


def json_events(out: Stopped) -> list[dict]:
    return [json.loads(text) for stream, text in out.lines if stream == "out"]


def kept_said(out: Stopped, command: str) -> bool:
    """Whether the command said the node was handed over as kept (its Kept line)."""
    if command == "up":
        return any(text.startswith("Kept ") for _stream, text in out.lines)
    return any(e["event"] == "kept" for e in json_events(out))


def hold_words_and_outcome(out: Stopped, root: Path, command: str, handed: bool) -> None:
    """The words match what happened, and the summary and exit code say the signal."""
    home, words = root / "state", said(out)
    assert out.reached, words[-600:]
    assert kept_said(out, command) == handed, words[-600:]
    if not handed:  # deleted: said so, verified, nothing of it left
        assert out.code == 143, words[-600:]
        assert DELETING in words and HANDED not in words
        assert "verified gone" in words.lower() and "is up and kept" not in words
        assert sandbox_is_empty(home) and ledger_all_gone(home)
        assert command == "up" or "Exit code 143." in words  # launch's summary
        return
    # Kept: listed from the lasting practice cloud after the command, whenever the signal came.
    there = sandbox_names(home)
    assert len(there) == 1
    assert there <= {r["name"] for r in status(root, TPUWIZARD_HOME=str(home))}
    assert command != "up" or "is up and kept" in words
    if HANDED not in words:
        # The signal landed once the command had said everything, its last line the Kept
        # one, as it exited (on a loaded machine the drill's signal can come that late).
        assert out.code in (0, 143) and words.rstrip().splitlines()[-1].startswith(
            "[practice] Kept: "
        ), words[-600:]
        return
    assert out.code == 143 and DELETING not in words, words[-600:]
    after = words.split(HANDED, 1)[1]
    assert "It deletes itself" in after  # how it ends without you (words/kept_end.py)
    assert "Exit code 143." in words  # the summary's, or the stop's own words after it


@pytest.mark.parametrize("command", ["launch --keep", "up"])
def test_sigterm_just_before_the_kept_event_deletes_unless_the_hand_over_came_first(
    tmp_path, command
):
    # "Receipt ... saved" comes just before the Kept event: the signal lands before it (then
    # the node is deleted) or, on a loaded machine, just after it (then it is kept); which,
    # the command's own words must say, never the other.
    if command == "up":
        trigger = lambda stream, line: stream == "err" and line.startswith("Receipt ")  # noqa: E731
    else:
        trigger = lambda stream, line: stream == "out" and '"receipt_saved"' in line  # noqa: E731
    try:
        out = stopped(tmp_path, command, trigger)
        hold_words_and_outcome(out, tmp_path, command, kept_said(out, command))
    finally:
        clean_up(tmp_path / "state", tmp_path)


def test_launch_keep_stopped_just_after_kept_keeps_the_node_and_says_so(tmp_path):
    trigger = lambda stream, line: stream == "out" and '"event": "kept"' in line  # noqa: E731
    try:
        out = stopped(tmp_path, "launch --keep", trigger)
        hold_words_and_outcome(out, tmp_path, "launch --keep", handed=True)
        (finished,) = [e for e in json_events(out) if e["event"] == "finished"]
        # Its code is the signal's where the signal landed before it was printed; after it, the
        # summary, or the stop's own words, said "Exit code 143." (hold_words_and_outcome).
        assert finished["exit_code"] in (0, 143) and len(finished["remaining"]) == 1
    finally:
        clean_up(tmp_path / "state", tmp_path)


def test_up_stopped_just_after_kept_leaves_a_node_its_watchdog_still_deletes(tmp_path):
    # Issue 52 item 4: the node outlives the command that the signal ended, in the lasting
    # practice cloud, and its watchdog (idle 30 s: status, under load, comes first) reaches
    # it there.
    home = tmp_path / "state"
    trigger = lambda stream, line: stream == "err" and line.startswith("Kept ")  # noqa: E731
    try:
        out = stopped(tmp_path, "up", trigger, "--idle", "0.5")
        hold_words_and_outcome(out, tmp_path, "up", handed=True)
        wait_until(lambda: not sandbox_names(home), 120, "the idle watchdog's delete", 0.5)
    finally:
        clean_up(home, tmp_path)


def test_launch_keep_whose_bootstrap_fails_deletes_the_node_never_kept(tmp_path):
    home = tmp_path / "state"
    try:
        code, events, stderr = launch(
            tmp_path,
            "--keep",
            "--accelerator",
            "v5litepod-1",
            TPUWIZARD_HOME=str(home),
            TPUWIZARD_SANDBOX_FAULTS="bootstrap_fail=1",
        )
        names = [e["event"] for e in events]
        assert code == 1, stderr[-600:]
        assert "kept" not in names and "Kept " not in stderr
        (not_kept,) = [e for e in events if e["event"] == "not_kept"]
        assert not_kept["because"] == "unproven"
        assert names.index("not_kept") < names.index("teardown_verified")
        assert "No space left on device" in stderr and "Not kept: " in stderr
        assert events[-1]["event"] == "finished" and events[-1]["remaining"] == []
        assert sandbox_is_empty(home) and ledger_all_gone(home)
    finally:
        clean_up(home, tmp_path)
