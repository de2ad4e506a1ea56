"""`tpuwizard teardown` (and `down`), every way it ends, word for word, with the in-memory cloud
behind the real CLI: what it deletes and verifies, what it leaves alone (another user's), what
it refuses before any delete (exit 2), and its exit code (0; 4 when anything is not verified
gone). Pinned before the command was split (issue 46), so the split keeps them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from click.testing import CliRunner

from tests.fakes import MemoryCloud
from tpuwizard.cli import main
from tpuwizard.commands import cleanup as cleanup_commands
from tpuwizard.commands import colab_records, kaggle_records
from tpuwizard.core import paths
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session.session import Session

ZONE, OTHER_ZONE = "us-central1-a", "us-west1-c"
NOT_SEARCHED = (
    "Not searched: europe-west1-b. Google says your project may not use it, so nothing can be "
    "there. (Said once; --json lists it under skipped_zones.)"
)
NOTHING = "Nothing to delete: nothing tpuwizard created exists."
BILLING = "Nothing tpuwizard deleted is billing any more."
EMPTY_LIST = f"The TPU list of {ZONE} now: empty. No TPU, yours or anyone's, is there."


@dataclass
class Case:
    args: list[str]
    code: int
    stdout: str | list[str]  # text, or for --json the document's keys in order
    stderr: list[str]
    nodes: list[tuple[str, str, bool]] = field(default_factory=list)  # name, zone, mine
    left: list[str] = field(default_factory=list)  # the nodes still in the cloud after
    faults: str = ""


def deleted(name: str) -> list[str]:
    return [f"Deleting {name} and checking that it is gone...", f"  verified gone: {name}"]


CASES = {
    "a name and --all": Case(
        ["teardown", "mine", "--all"],
        2,
        "",
        ["Error: Name one resource (tpuwizard teardown NAME) or use --all."],
        [("mine", ZONE, True)],
        ["mine"],
    ),
    "down's own name said back": Case(
        ["down", "mine", "--all"],
        2,
        "",
        ["Error: Name one resource (tpuwizard down NAME) or use --all."],
    ),
    "nothing at all": Case(["teardown", "--all", "--yes"], 0, "", [NOT_SEARCHED, NOTHING]),
    "nothing at all, --json": Case(
        ["teardown", "--all", "--yes", "--json"],
        0,
        ["results", "unchecked", "kept"],
        [NOT_SEARCHED, NOTHING],
    ),
    "a recorded name": Case(
        ["teardown", "mine", "--yes"],
        0,
        EMPTY_LIST + "\n",
        [*deleted("mine"), BILLING],
        [("mine", ZONE, True)],
    ),
    "a recorded name, --json: the zone's list on stderr": Case(
        ["teardown", "mine", "--yes", "--json"],
        0,
        ["results", "unchecked", "kept"],
        [*deleted("mine"), EMPTY_LIST, BILLING],
        [("mine", ZONE, True)],
    ),
    "no --yes and no terminal": Case(
        ["teardown", "mine"],
        2,
        "",
        [f"Error: Would delete mine ({ZONE}): add --yes to confirm without a terminal."],
        [("mine", ZONE, True)],
        ["mine"],
    ),
    "a name nothing holds": Case(
        ["teardown", "nosuch", "--yes"],
        2,
        "",
        [NOT_SEARCHED, "Error: No tpuwizard resource called 'nosuch' exists (yours: mine)."],
        [("mine", ZONE, True)],
        ["mine"],
    ),
    "a recorded name, in another zone than asked": Case(
        ["teardown", "mine", "--yes", "--zone", OTHER_ZONE],
        2,
        "",
        [
            NOT_SEARCHED,
            f"Error: No tpuwizard resource called 'mine' exists in {OTHER_ZONE} (yours: mine).",
        ],
        [("mine", ZONE, True)],
        ["mine"],
    ),
    "--all leaves another user's alone": Case(
        ["teardown", "--all", "--yes"],
        0,
        f"The TPU list of {ZONE} now: 1 TPU.\n"
        "  theirs  v5litepod-1  READY  another tpuwizard user's\n",
        [
            NOT_SEARCHED,
            f"Left alone: theirs ({ZONE}), made by another user.",
            *deleted("mine"),
            BILLING,
        ],
        [("mine", ZONE, True), ("theirs", ZONE, False)],
        ["theirs"],
    ),
    "--all in one zone": Case(
        ["teardown", "--all", "--yes", "--zone", OTHER_ZONE],
        0,
        f"The TPU list of {OTHER_ZONE} now: empty. No TPU, yours or anyone's, is there.\n",
        [NOT_SEARCHED, *deleted("there"), BILLING],
        [("mine", ZONE, True), ("there", OTHER_ZONE, True)],
        ["mine"],
    ),
    "a delete that is not verified": Case(
        ["teardown", "mine", "--yes"],
        4,
        f"The TPU list of {ZONE} now: 1 TPU.\n  mine  v5litepod-1  READY  yours\n",
        [
            "Deleting mine and checking that it is gone...",
            "  NOT verified gone: mine; it may still exist (practice: not billed).",
            "mine is still listed",
            "The delete finished but the Cloud TPU API still lists it.",
            "  - Run tpuwizard teardown mine again in a minute.",
            f"  - Or by hand: gcloud compute tpus tpu-vm delete mine --zone {ZONE} "
            "--project practice-project",
        ],
        [("mine", ZONE, True)],
        ["mine"],
        "lying_delete=99",
    ),
}


@pytest.fixture
def cloud_for(monkeypatch):
    """A practice session over the in-memory cloud (with ``faults``), as the command's own."""

    def make(faults: str = "") -> Session:
        session = Session(practice=True, project="practice-project")
        session.clouds.use(MemoryCloud.faulty(faults) if faults else MemoryCloud())
        monkeypatch.setattr(cleanup_commands, "open_session", lambda project, sandbox: session)
        return session

    return make


def add_node(session: Session, name: str, zone: str, mine: bool) -> None:
    """A node in the cloud; this install's is recorded in its ledger too."""
    owner = paths.owner_label() if mine else "someone-else"
    accelerator = parse_accelerator("v5litepod-1")
    session.cloud.create_node(NodeRequest(zone, name, accelerator, "run-1", owner=owner))
    if mine:
        resource = Resource(
            "node", "practice-project", zone, name, "v5litepod-1", "run-1", owner=owner
        )
        session.ledger.record("created", resource)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_teardown_ends_as_it_did(cloud_for, case: Case):
    session = cloud_for(case.faults)
    for name, zone, mine in case.nodes:
        add_node(session, name, zone, mine)
    result = CliRunner().invoke(main, [*case.args, "--sandbox"])
    assert result.exit_code == case.code, result.output
    assert result.stderr.splitlines() == case.stderr
    if isinstance(case.stdout, list):
        doc = json.loads(result.stdout)
        assert list(doc) == case.stdout
        assert doc["kept"] == [] and doc["unchecked"] == []
        assert [(r["name"], r["verified"]) for r in doc["results"]] == [
            (n, True) for n, _, _ in case.nodes if n not in case.left
        ]
    else:
        assert result.stdout == case.stdout
    assert sorted(name for _, name in session.cloud.nodes) == sorted(case.left)


def test_a_zone_list_that_fails_costs_only_its_line(cloud_for, monkeypatch):
    session = cloud_for()
    add_node(session, "mine", ZONE, True)

    def refused(zone: str, backend: str) -> None:
        raise RuntimeError("the list failed")

    monkeypatch.setattr(session, "zone_listed", refused)
    result = CliRunner().invoke(main, ["teardown", "mine", "--yes", "--sandbox"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        *deleted("mine"),
        f"Could not list {ZONE} now (RuntimeError); what was deleted stays so.",
        BILLING,
    ]


# -- the free routes' part: Kaggle's kernels and Colab's sessions, with the TPUs or alone --------
@dataclass
class Opened:
    session: Session  # the one the command opens, if it opens one
    times: int = 0  # how many times it did


@pytest.fixture
def opened(cloud_for, monkeypatch) -> Opened:
    """The session the command opens, counted (none, where a kernel or a Colab session was
    named)."""
    seen = Opened(cloud_for())

    def open_session(project: str | None, sandbox: bool) -> Session:
        seen.times += 1
        return seen.session

    monkeypatch.setattr(cleanup_commands, "open_session", open_session)
    return seen


def free_routes(monkeypatch, kaggle=({}, True), colab_held=(), colab_ok=True, named=()):
    """The Kaggle and Colab ledgers' answers as the command asks for them; what it asked."""
    asked: list[object] = []
    monkeypatch.setattr(kaggle_records, "teardown_all_kaggle", lambda yes: kaggle)
    monkeypatch.setattr(kaggle_records, "kernels_named", lambda name: list(named))
    monkeypatch.setattr(
        kaggle_records, "teardown_kaggle", lambda records, yes, as_json: asked.append(records)
    )
    monkeypatch.setattr(colab_records, "colab_held", lambda: list(colab_held))
    monkeypatch.setattr(colab_records, "colab_named", lambda name: [])

    def stop(records, yes, as_json):
        asked.append(records)
        return colab_ok

    monkeypatch.setattr(colab_records, "teardown_colab", stop)
    return asked


def test_a_named_kernel_is_the_kaggle_ledgers_and_no_tpu_is_looked_for(opened, monkeypatch):
    asked = free_routes(monkeypatch, named=["its record"])
    result = CliRunner().invoke(main, ["teardown", "k", "--yes", "--sandbox"])
    assert result.exit_code == 0, result.output
    assert asked == [["its record"]] and opened.times == 0 and result.output == ""


@pytest.mark.parametrize(("stopped", "code"), [(True, 0), (False, 4)])
def test_a_named_colab_session_is_stopped_and_no_tpu_is_looked_for(
    opened, monkeypatch, stopped, code
):
    asked = free_routes(monkeypatch, colab_ok=stopped)
    monkeypatch.setattr(colab_records, "colab_named", lambda name: [{"kernel": name}])
    result = CliRunner().invoke(main, ["teardown", "s", "--yes", "--sandbox"])
    assert result.exit_code == code, result.output
    assert asked == [[{"kernel": "s"}]] and opened.times == 0 and result.output == ""


def test_all_with_kernels_and_no_tpu_says_no_tpu_and_exits_4_for_a_kernel_left(opened, monkeypatch):
    free_routes(monkeypatch, kaggle=({"kaggle": []}, False))
    result = CliRunner().invoke(main, ["teardown", "--all", "--yes", "--json", "--sandbox"])
    assert result.exit_code == 4, result.output
    assert json.loads(result.stdout) == {"results": [], "unchecked": [], "kept": [], "kaggle": []}
    assert result.stderr.splitlines() == [
        NOT_SEARCHED,
        "No TPU to delete: none tpuwizard created exists.",
    ]


def test_all_with_a_kernel_left_deletes_the_tpus_then_exits_4(opened, monkeypatch):
    free_routes(monkeypatch, kaggle=({"kaggle": []}, False))
    add_node(opened.session, "mine", ZONE, True)
    result = CliRunner().invoke(main, ["teardown", "--all", "--yes", "--sandbox"])
    assert result.exit_code == 4, result.output
    assert result.stderr.splitlines() == [NOT_SEARCHED, *deleted("mine"), BILLING]


@pytest.mark.parametrize("with_tpu", [False, True])
def test_all_with_a_colab_session_not_stopped_exits_4_and_never_says_nothing(
    opened, monkeypatch, with_tpu
):
    asked = free_routes(monkeypatch, colab_held=[{"kernel": "s"}], colab_ok=False)
    if with_tpu:
        add_node(opened.session, "mine", ZONE, True)
    result = CliRunner().invoke(main, ["teardown", "--all", "--yes", "--sandbox"])
    assert result.exit_code == 4, result.output
    assert asked == [[{"kernel": "s"}]]
    said = [NOT_SEARCHED, *deleted("mine")] if with_tpu else [NOT_SEARCHED]
    assert result.stderr.splitlines() == said
