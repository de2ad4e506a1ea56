"""The Kaggle ledger's kernels as `status` and `teardown` see them, against an in-memory
Kaggle: states read, records closed, only this user's runs touched, a running session never
deleted."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

from tpuwizard.core.kaggle.ledger import KernelLedger
from tpuwizard.core.kaggle.protocol import Downloaded, KaggleCallFailed, Pushed, Quota
from tpuwizard.core.kaggle.records import (
    PracticeSession,
    check_kernel,
    held_kernels,
    named,
    practice_kernel,
    tear_down,
)
from tpuwizard.words.kaggle_text import held_lines, torn_lines


class Kaggle:
    """Kernels by slug, with their session's state; what was deleted."""

    username = "ada"

    def __init__(self) -> None:
        self.states: dict[str, str] = {}
        self.deleted: list[str] = []
        self.asked: list[str] = []

    def status(self, ref: str) -> tuple[str, str | None]:
        self.asked.append(ref)
        if ref not in self.states:
            raise KaggleCallFailed("reading the kernel's status", "Kernel not found", 404)
        return self.states[ref], None

    def delete(self, ref: str) -> None:
        self.deleted.append(ref)
        self.states.pop(ref, None)

    def tpu_quota(self) -> Quota | None:
        raise AssertionError("not asked")

    def push(self, folder: Path, timeout_s: int, shape: str) -> Pushed:
        raise AssertionError("never pushed")

    def log_lines(self, ref: str) -> Iterator[str]:
        raise AssertionError("not asked")

    def download(self, ref: str, folder: Path) -> Downloaded:
        raise AssertionError("not asked")

    def docker_image(self, ref: str) -> str | None:
        raise AssertionError("not asked")


def _ledger(tmp_path: Path, *records: tuple[str, str, str]) -> KernelLedger:
    ledger = KernelLedger(tmp_path / "kaggle-ledger.jsonl")
    for op, kernel, run_id in records:
        ledger.record(op, kernel, run_id, timeout_s=600, practice=False, pid=1)
    return ledger


def test_a_pushed_kernel_is_read_and_said_running_until_its_limit(tmp_path):
    ledger = _ledger(tmp_path, ("intent", "ada/tpuwizard-r1", "r1"))
    ledger.record("pushed", "ada/tpuwizard-r1", "r1", url="https://k/ada/r1", ends_by=1000.0)
    [record] = held_kernels(ledger)
    assert record.url == "https://k/ada/r1" and record.ends_by == 1000.0 and record.pid == 1
    kaggle = Kaggle()
    kaggle.states["ada/tpuwizard-r1"] = "RUNNING"
    seen = check_kernel(kaggle, ledger, record)
    assert seen.state == "RUNNING" and seen.may_run and not seen.gone
    assert [r["op"] for r in ledger.open_sessions()] == ["pushed"]


def test_a_session_that_ended_since_is_recorded_ended_and_kept(tmp_path):
    ledger = _ledger(tmp_path, ("pushed", "ada/tpuwizard-r1", "r1"))
    kaggle = Kaggle()
    kaggle.states["ada/tpuwizard-r1"] = "COMPLETE"
    seen = check_kernel(kaggle, ledger, held_kernels(ledger)[0])
    assert seen.state == "COMPLETE" and not seen.may_run
    assert ledger.open_sessions() == [] and [r.op for r in held_kernels(ledger)] == ["ended"]


def test_a_kernel_kaggle_no_longer_has_is_closed(tmp_path):
    ledger = _ledger(tmp_path, ("intent", "ada/tpuwizard-r1", "r1"))  # its push never landed
    seen = check_kernel(Kaggle(), ledger, held_kernels(ledger)[0])
    assert seen.gone and not seen.may_run and held_kernels(ledger) == []


def test_a_kernel_of_another_account_or_name_is_never_asked_about_nor_deleted(tmp_path):
    ledger = _ledger(
        tmp_path,
        ("ended", "bob/tpuwizard-r1", "r1"),  # pushed while signed in as bob
        ("ended", "ada/my-notebook", "r2"),  # a name tpuwizard did not give run r2
    )
    kaggle = Kaggle()
    kaggle.states.update({"bob/tpuwizard-r1": "COMPLETE", "ada/my-notebook": "COMPLETE"})
    torn = [tear_down(kaggle, ledger, record) for record in held_kernels(ledger)]
    assert [t.verified for t in torn] == [False, False]
    assert "signed in as ada" in torn[0].detail and "not touched" in torn[0].detail
    assert "not the one tpuwizard gave run r2" in torn[1].detail
    assert kaggle.asked == [] and kaggle.deleted == [] and len(held_kernels(ledger)) == 2


def test_teardown_deletes_an_ended_kernel_and_verifies_it_gone(tmp_path):
    ledger = _ledger(tmp_path, ("ended", "ada/tpuwizard-r1", "r1"))
    kaggle = Kaggle()
    kaggle.states["ada/tpuwizard-r1"] = "COMPLETE"
    torn = tear_down(kaggle, ledger, held_kernels(ledger)[0])
    assert torn.verified and kaggle.deleted == ["ada/tpuwizard-r1"]
    assert held_kernels(ledger) == []


def test_teardown_never_deletes_a_kernel_whose_session_still_runs(tmp_path):
    ledger = _ledger(tmp_path, ("pushed", "ada/tpuwizard-r1", "r1"))
    kaggle = Kaggle()
    kaggle.states["ada/tpuwizard-r1"] = "QUEUED"
    torn = tear_down(kaggle, ledger, held_kernels(ledger)[0])
    assert not torn.verified and "no public call cancels it" in torn.detail
    assert kaggle.deleted == [] and [r.op for r in held_kernels(ledger)] == ["pushed"]


def test_a_delete_kaggle_does_not_carry_out_is_not_verified(tmp_path):
    class Stubborn(Kaggle):
        def delete(self, ref: str) -> None:
            self.deleted.append(ref)  # and Kaggle still lists it

    ledger = _ledger(tmp_path, ("ended", "ada/tpuwizard-r1", "r1"))
    kaggle = Stubborn()
    kaggle.states["ada/tpuwizard-r1"] = "COMPLETE"
    torn = tear_down(kaggle, ledger, held_kernels(ledger)[0])
    assert not torn.verified and "still lists it" in torn.detail
    assert len(held_kernels(ledger)) == 1


NOTHING_RUNS = PracticeSession(runs=False, state="ERROR", ends_by=1500.0, group=None)


def test_a_practice_kernel_is_running_while_its_command_runs_and_gone_after(tmp_path):
    ledger = KernelLedger(tmp_path / "kaggle-ledger.jsonl")
    ledger.record("pushed", "practice-user/tpuwizard-r1", "r1", practice=True, ends_by=2000.0)
    [record] = held_kernels(ledger)
    running = PracticeSession(runs=True, state="RUNNING", ends_by=1990.0, group=4321)
    held = practice_kernel(ledger, record, alive=True, session=running)
    assert held.may_run and held.held_by_command and held_kernels(ledger) == [record]
    gone = practice_kernel(ledger, record, alive=False, session=NOTHING_RUNS)
    assert gone.gone and held_kernels(ledger) == []
    [closed] = [d for d in ledger.last_words().values()]
    assert closed["op"] == "deleted" and "no process of its session runs" in closed["why"]


def test_a_practice_kernel_left_running_by_a_killed_command_is_said_running_not_gone(tmp_path):
    """Its command killed outright (SIGKILL): the stand-in's keeper still runs the session to
    its limit, so status says so, with the stand-in's own limit, and closes nothing."""
    ledger = KernelLedger(tmp_path / "kaggle-ledger.jsonl")
    ledger.record(
        "pushed", "practice-user/tpuwizard-r1", "r1", practice=True, ends_by=2000.0, url="U"
    )
    [record] = held_kernels(ledger)
    running = PracticeSession(runs=True, state="RUNNING", ends_by=1990.0, group=4321)
    seen = practice_kernel(ledger, record, alive=False, session=running)
    assert (seen.may_run, seen.gone, seen.state, seen.group) == (True, False, "RUNNING", 4321)
    assert seen.to_dict()["ends_by"] == 1990.0 and seen.to_dict()["process_group"] == 4321
    assert held_kernels(ledger) == [record]  # no "deleted": nothing verified it


def test_a_practice_kernel_whose_command_still_runs_is_never_closed(tmp_path):
    """Its session ended at its limit while its command still runs: held by that command's
    stand-in, not recorded deleted."""
    ledger = KernelLedger(tmp_path / "kaggle-ledger.jsonl")
    ledger.record("pushed", "practice-user/tpuwizard-r1", "r1", practice=True, ends_by=2000.0)
    [record] = held_kernels(ledger)
    seen = practice_kernel(ledger, record, alive=True, session=NOTHING_RUNS)
    assert not seen.gone and not seen.may_run and seen.held_by_command
    assert held_kernels(ledger) == [record]


def test_status_words_for_a_practice_kernel_left_running_give_its_end_and_page(tmp_path):
    from tpuwizard.core.kaggle.records import KernelTorn
    from tpuwizard.words.kaggle_text import held_lines, torn_lines

    ledger = KernelLedger(tmp_path / "kaggle-ledger.jsonl")
    url = "http://localhost/code/practice-user/tpuwizard-r1"
    ledger.record("pushed", "practice-user/tpuwizard-r1", "r1", practice=True, url=url)
    [record] = held_kernels(ledger)
    running = PracticeSession(runs=True, state="RUNNING", ends_by=1990.0, group=4321)
    seen = practice_kernel(ledger, record, alive=False, session=running)
    [line] = held_lines(seen)
    assert "RUNNING after the command that pushed it ended" in line
    assert "left running until about" in line and url in line and "kill -- -4321" in line
    torn = torn_lines(KernelTorn(seen, False, "its session still runs, and no call cancels it"))
    assert "not deleted" in torn[0] and torn[1] == line


def test_teardown_names_a_kernel_by_its_slug_or_its_name(tmp_path):
    ledger = _ledger(tmp_path, ("ended", "ada/tpuwizard-r1", "r1"))
    records = held_kernels(ledger)
    assert named(records, "ada/tpuwizard-r1") == records == named(records, "tpuwizard-r1")
    assert named(records, "bob/tpuwizard-r1") == [] and named(records, "r1") == []


def test_status_words_say_a_running_kernel_is_left_running_with_its_page(tmp_path):
    from tpuwizard.words.kaggle_text import held_lines

    ledger = _ledger(tmp_path, ("pushed", "ada/tpuwizard-r1", "r1"))
    kaggle = Kaggle()
    kaggle.states["ada/tpuwizard-r1"] = "RUNNING"
    [line] = held_lines(check_kernel(kaggle, ledger, held_kernels(ledger)[0]))
    assert line.startswith("ada/tpuwizard-r1: RUNNING on Kaggle, left running until about")
    assert line.endswith("https://www.kaggle.com/code/ada/tpuwizard-r1")


def test_status_of_a_kernel_of_another_account_says_not_checked(tmp_path):
    from tpuwizard.words.kaggle_text import held_lines

    ledger = _ledger(tmp_path, ("pushed", "bob/tpuwizard-r1", "r1"))
    seen = check_kernel(Kaggle(), ledger, held_kernels(ledger)[0])
    assert seen.problem and seen.may_run
    [line] = held_lines(seen)
    assert "bob/tpuwizard-r1: not checked: it belongs to the Kaggle account bob" in line
    assert "may still run until about" in line


def test_a_command_that_ended_unreaped_is_not_still_running():
    """A killed command whose parent never reaps it (a container's first process reaping
    none) stays a zombie: it answers kill(pid, 0), yet runs nothing, so its kernel is not
    "held by that command"."""
    import subprocess
    import sys

    from tests.waiting import wait_until
    from tpuwizard.core.kaggle.ledger import writer_alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        zombie = lambda: Path(f"/proc/{child.pid}/stat").read_text().rpartition(")")[2].split()[0]  # noqa: E731
        wait_until(lambda: zombie() == "Z", 30, "the child to end, unreaped")
        assert not writer_alive(child.pid)
    finally:
        child.wait()
    assert not writer_alive(child.pid)


def refusing_ledger(tmp_path: Path, *records: tuple[str, str, str]) -> KernelLedger:
    """A Kaggle ledger whose disk takes the records given, then refuses every other (a full
    disk, a home turned read-only): each refused one is held under ``tmp_path / "tmp"``."""
    written = _ledger(tmp_path, *records)
    full = OSError(errno.ENOSPC, "No space left on device")

    def refuse(path: Path, data: bytes) -> None:
        raise full

    return KernelLedger(written.path, tmp_path / "tmp", refuse)


def test_a_record_the_disk_refuses_is_said_with_the_kernel_by_status_and_teardown(tmp_path):
    """`status` closes or ends a kernel's record, `teardown` records its delete: where the disk
    refuses, each says so beside the kernel (and where the record is held), in its words and its
    --json, rather than only the kernel's state."""
    (tmp_path / "tmp").mkdir()
    ledger = refusing_ledger(tmp_path, ("intent", "ada/tpuwizard-r1", "r1"))
    gone = check_kernel(Kaggle(), ledger, held_kernels(ledger)[0])  # Kaggle: not found
    [held] = gone.unrecorded
    assert (held.name, held.op, held.reason) == (
        "ada/tpuwizard-r1",
        "deleted",
        "No space left on device",
    )
    assert held.kept_in is not None and Path(held.kept_in).parent.parent == tmp_path / "tmp"
    [line] = [x for x in held_lines(gone) if x.startswith("The ledger")]
    assert "could not record that ada/tpuwizard-r1 is gone (No space left on device)" in line
    assert f"kept in {held.kept_in}" in line
    assert gone.to_dict()["records_held"] == [
        {"op": "deleted", "reason": "No space left on device", "ledger": str(ledger.path),
         "kept_in": held.kept_in}
    ]  # fmt: skip

    ended = refusing_ledger(tmp_path / "e", ("pushed", "ada/tpuwizard-r2", "r2"))
    kaggle = Kaggle()
    kaggle.states["ada/tpuwizard-r2"] = "COMPLETE"
    torn = tear_down(kaggle, ended, held_kernels(ended)[0])
    assert torn.verified and [h.op for h in torn.seen.unrecorded] == ["ended", "deleted"]
    said = torn_lines(torn)
    assert (
        said[0]
        == "Deleted ada/tpuwizard-r2 from your Kaggle account, and Kaggle no longer finds it."
    )
    assert [x.split(" (")[0] for x in said[1:]] == [
        f"The ledger {ended.path} could not record that ada/tpuwizard-r2 has ended",
        f"The ledger {ended.path} could not record that ada/tpuwizard-r2 is gone",
    ]
    assert [h["op"] for h in torn.to_dict()["records_held"]] == ["ended", "deleted"]


def test_records_the_disk_takes_add_nothing_to_what_is_said(tmp_path):
    ledger = _ledger(tmp_path, ("ended", "ada/tpuwizard-r1", "r1"))
    kaggle = Kaggle()
    kaggle.states["ada/tpuwizard-r1"] = "COMPLETE"
    torn = tear_down(kaggle, ledger, held_kernels(ledger)[0])
    assert torn.seen.unrecorded == () and "records_held" not in torn.to_dict()
    assert len(torn_lines(torn)) == 1
