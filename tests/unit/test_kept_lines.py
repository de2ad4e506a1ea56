"""Every command (and plain mode) says which kept nodes still bill, from the ledger alone."""

import json
import subprocess
import time
from pathlib import Path

from tests.conftest import tpuwizard_cmd
from tests.unit.test_imports import heavy, loaded_after, run_probe
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.plan import catalog
from tpuwizard.session.kept.lines import recorded_kept
from tpuwizard.session.practice.sandbox import LASTING_SERVER_FILE, PRACTICE_PROJECT
from tpuwizard.words.kept_end import kept_info_line

LINE = "Kept: tpuwizard-ab12 (v5litepod-4) in us-central1-a, $"


def keep(home: Path, name: str = "tpuwizard-ab12", practice: bool = False, **extra) -> None:
    """What `up` leaves in the ledger for a kept node (idle 30 min, a 2-hour deadline)."""
    folder = home / "sandbox" if practice else home
    folder.mkdir(parents=True, exist_ok=True)
    ledger = Ledger(folder / "ledger.jsonl")
    project = PRACTICE_PROJECT if practice else "my-project"
    resource = Resource("node", project, "us-central1-a", name, "v5litepod-4", "run1")
    ledger.record("intent", resource)
    ledger.record("created", resource)
    now = time.time()
    fields = {"deadline": now + 7200, "idle_s": 1800.0, "kept_at": now, **extra}
    ledger.record("kept", resource, **fields)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(tpuwizard_cmd(*args), capture_output=True, text=True, timeout=120)


def test_fit_says_the_kept_node_on_stderr_and_its_json_stays_json(home):
    keep(home)
    done = cli("fit", "48", "--json")
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # one JSON document, the kept line is not in it
    lines = [line for line in done.stderr.splitlines() if "Kept:" in line]
    assert len(lines) == 1 and lines[0].startswith(LINE)
    assert "It deletes itself after 30 minutes without a run" in lines[0]
    assert lines[0].endswith("End it with: tpuwizard down tpuwizard-ab12.")
    # Cheap: reading the ledger loads no cloud client, no grpc, no jax.
    assert loaded_after(["fit", "48", "--json"]) == []


# What a Kept line may cost to import: the ledger reader, the heartbeat book and the billing
# arithmetic. Not the launch (lifecycle, its events, the run machinery) nor any transport.
LINE_ONLY_LAUNCH_MODULES = {
    "tpuwizard.core.launch",
    "tpuwizard.core.launch.records",  # the rooms' packages: a docstring each
    "tpuwizard.core.launch.kept",
    "tpuwizard.core.launch.records.billing_state",
    "tpuwizard.core.launch.kept.heartbeat_book",
    "tpuwizard.core.launch.kept.record",  # the kept record's fields, read once
    "tpuwizard.core.launch.records.ledger",
    "tpuwizard.core.launch.records.ledger_file",  # its file: read with the records held aside
}


def test_the_kept_line_imports_only_the_ledger_reader(home):
    keep(home)
    said, modules = run_probe(["fit", "48", "--json"])
    lines = [line for line in said if "Kept:" in line]
    assert len(lines) == 1 and lines[0].startswith(LINE)
    assert heavy(modules) == []
    launch = {m for m in modules if m.startswith("tpuwizard.core.launch")}
    assert launch <= LINE_ONLY_LAUNCH_MODULES, sorted(launch - LINE_ONLY_LAUNCH_MODULES)
    assert "tpuwizard.core.launch.lifecycle.launch" not in modules
    assert "tpuwizard.session.kept.nodes" not in modules
    assert "tpuwizard.core.cloud.backends" not in modules  # the backends' words: not for a line
    assert not [m for m in modules if m.startswith("tpuwizard.core.remote")]


def test_no_kept_node_no_line(home):
    done = cli("fit", "48")
    assert done.returncode == 0 and "Kept:" not in done.stderr + done.stdout
    zones = cli("zones", "--accelerator", "v5litepod-4")
    assert "Kept:" not in zones.stderr + zones.stdout


def test_a_deleted_node_and_a_passed_deadline(home):
    keep(home, "tpuwizard-gone")
    resource = Resource(
        "node", "my-project", "us-central1-a", "tpuwizard-gone", "v5litepod-4", "run1"
    )
    Ledger(home / "ledger.jsonl").record("gone", resource)
    assert recorded_kept() == []
    keep(home, kept_at=time.time() - 3600)  # idle for an hour: the watchdog's turn
    (info,) = recorded_kept()
    # Its watchdog should have deleted it, unless Google preempted it: the line says which
    # command makes sure, not that it "should be deleting itself".
    assert "Past its deadline, so gone unless Google preempted it" in kept_info_line(info)
    assert "`tpuwizard down tpuwizard-ab12` deletes it if it is there" in kept_info_line(info)
    assert info.to_dict()["practice"] is False and not info.checked


def test_practice_nodes_count_while_the_practice_cloud_runs(home):
    keep(home, "tpuwizard-cd34", practice=True)
    assert recorded_kept() == []  # no practice cloud holds it any more
    (home / "sandbox" / LASTING_SERVER_FILE).write_text("{}")
    (info,) = recorded_kept()
    assert kept_info_line(info).startswith("[practice] Kept: tpuwizard-cd34 (v5litepod-4)")
    assert "End it with: tpuwizard down --sandbox tpuwizard-cd34." in kept_info_line(info)


def test_down_says_what_is_still_kept_after_it_and_lists_it_in_json(home):
    keep(home)
    done = cli("down", "--sandbox", "--all", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["results"] == [] and [k["name"] for k in data["kept"]] == ["tpuwizard-ab12"]
    assert LINE in done.stderr  # nothing of practice to delete; the real kept node still bills


def test_down_without_kept_nodes_says_none(home):
    done = cli("down", "--sandbox", "--all", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kept"] == [] and "Kept:" not in done.stderr


def test_a_kept_flex_start_node_says_the_most_it_has_cost_not_unknown(home):
    from tpuwizard.core.plan import cost
    from tpuwizard.session.kept.lines import kept_info

    ledger = Ledger(home / "ledger.jsonl")
    flex = Resource("node", "my-project", "us-east5-a", "tpuwizard-fx", "v6e-4", "r", "flex")
    ledger.record("intent", flex)
    ledger.record("kept", flex, deadline=time.time() + 7200, kept_at=time.time())
    (entry,) = [e for e in ledger.entries() if e.op == "kept"]
    info = kept_info(entry, "READY", {}, practice=False)
    assert (
        cost.estimate(catalog.parse_accelerator("v6e-4"), "flex", 60, "us-east5-a") is None
    )  # no published price
    assert info.cost_usd is None and info.cost_at_most_usd is not None
    assert f"at most ${info.cost_at_most_usd:.2f} so far" in kept_info_line(info)
    assert "unknown" not in kept_info_line(info)
