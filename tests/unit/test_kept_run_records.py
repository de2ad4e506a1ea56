"""A kept node's run folder after its verified delete (issue 49, the newcomer's round 5): `up`
wrote cost.json and outcome.json saying "still running", and `down` verified the node gone while
those files went on saying so. The delete now brings them up to date: ended, when, verified gone,
and what it cost until then; each file is written whole (temporary file, then rename)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.fakes import MemoryCloud, proven_workers
from tests.unit.test_launch_safety import RUN, ZONE, make_plan, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.kept.record import KeptRecord
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.records import run_files
from tpuwizard.session.run_outcome import OUTCOME_FILE, close_kept_run, write_outcome
from tpuwizard.session.session import Session


def _kept_folder(tmp_path, as_of=1000.0):
    folder = tmp_path / "runs" / RUN
    folder.mkdir(parents=True)
    cost = {
        "accelerator": "v5litepod-4",
        "seconds": 2.4,
        "price_per_hour_usd": 4.8,
        "cost_usd": 0.0032,
        "cost_at_most_usd": None,
        "price_at_most_per_hour_usd": 4.8,
        "practice": True,
        "still_running": True,
        "as_of": as_of,
    }
    outcome = {"exit_code": 0, "verified_gone": [], "still_existing": ["tpu-a"], "kept": ["tpu-a"]}
    (folder / "cost.json").write_text(json.dumps(cost))
    (folder / OUTCOME_FILE).write_text(json.dumps(outcome))
    return folder


def read(folder, name):
    return json.loads((folder / name).read_text())


def test_the_verified_delete_ends_the_records_with_when_and_what_it_cost(tmp_path):
    folder = _kept_folder(tmp_path)
    close_kept_run(folder, "tpu-a", 1000.0 + 3600)
    cost = read(folder, "cost.json")
    assert cost["still_running"] is False and cost["verified_gone_at"] == 4600.0
    assert cost["seconds"] == 3602.4 and cost["cost_usd"] == 4.8032  # an hour more at $4.80/h
    assert cost["as_of"] == 4600.0 and cost["cost_at_most_usd"] is None
    outcome = read(folder, OUTCOME_FILE)
    assert outcome["still_existing"] == [] and outcome["verified_gone"] == ["tpu-a"]
    assert outcome["kept"] == ["tpu-a"] and outcome["kept_verified_gone_at"] == {"tpu-a": 4600.0}
    assert sorted(p.name for p in folder.iterdir()) == ["cost.json", OUTCOME_FILE]  # no .part


def test_a_second_close_changes_nothing(tmp_path):
    folder = _kept_folder(tmp_path)
    close_kept_run(folder, "tpu-a", 4600.0)
    before = (read(folder, "cost.json"), read(folder, OUTCOME_FILE))
    close_kept_run(folder, "tpu-a", 9999.0)
    assert (read(folder, "cost.json"), read(folder, OUTCOME_FILE)) == before


def test_a_record_edited_by_hand_or_gone_is_left_as_it_is(tmp_path):
    folder = _kept_folder(tmp_path)
    (folder / "cost.json").write_text("not json {")
    (folder / OUTCOME_FILE).unlink()
    close_kept_run(folder, "tpu-a", 4600.0)
    assert (folder / "cost.json").read_text() == "not json {"
    assert not (folder / OUTCOME_FILE).exists()
    close_kept_run(tmp_path / "moved-away", "tpu-a", 4600.0)  # no folder: nothing, no error


def test_a_refusing_disk_leaves_the_earlier_file_whole(tmp_path, monkeypatch):
    folder = _kept_folder(tmp_path)
    before = (folder / "cost.json").read_text()

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("tpuwizard.core.launch.records.run_files.os.replace", full)
    assert run_files.write_record(folder / "cost.json", {"still_running": False}) is False
    assert (folder / "cost.json").read_text() == before
    assert sorted(p.name for p in folder.iterdir()) == ["cost.json", OUTCOME_FILE]


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """A launch that kept its node, as `up` does: its run folder and the cloud that holds it."""
    proven_workers(monkeypatch)
    cloud = MemoryCloud()
    plan = replace(make_plan(tmp_path), deadline=Deadline(keep=True))
    rt = make_runtime(tmp_path, cloud)
    events: list[ev.Event] = []
    cancel = CancelToken()
    run_launch(plan, rt, events.append, cancel)
    summary = RunSummary()
    for event in events:
        summary.apply(event)
    assert isinstance(events[-1], ev.Finished)
    write_outcome(plan.run_dir, events[-1], summary, cancel)  # as the session's handle does
    assert (ZONE, "tpu-a") in cloud.nodes
    return cloud, plan.run_dir


def test_up_records_its_run_folder_and_down_brings_it_up_to_date(kept, tmp_path, monkeypatch):
    cloud, folder = kept
    assert read(folder, "cost.json")["still_running"] is True
    assert read(folder, OUTCOME_FILE)["still_existing"] == ["tpu-a"]
    session = Session(practice=False, project="practice-project")
    session.clouds.use(cloud)
    (entry,) = session.ledger.open_entries()
    assert KeptRecord.of(entry).run_dir == str(folder)
    monkeypatch.chdir(tmp_path / "state")  # `down` from another folder: the record knows where
    (result,) = session.delete([entry.resource])
    assert result.verified
    cost, outcome = read(folder, "cost.json"), read(folder, OUTCOME_FILE)
    assert cost["still_running"] is False and cost["verified_gone_at"] >= cost["as_of"] - 1e-6
    assert outcome["still_existing"] == [] and outcome["verified_gone"] == ["tpu-a"]


def test_outcome_names_what_was_verified_gone_as_the_ledger_does(tmp_path):
    """A walk compared the files with the screens: outcome.json listed "NAME in ZONE", the
    summary's words, where still_existing and the ledger hold names."""
    summary = RunSummary()
    summary.apply(ev.TeardownVerified("tpu-a", "node", 3.0, 0.01, ZONE))
    finished = ev.Finished(True, 0, str(tmp_path), 0.01)
    summary.apply(finished)
    write_outcome(tmp_path, finished, summary, CancelToken())
    assert read(tmp_path, OUTCOME_FILE)["verified_gone"] == ["tpu-a"]
