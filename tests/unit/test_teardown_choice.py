"""What a teardown acts on, chosen from a survey: ``--all`` is all of *yours*; another user's
resource only by its exact name; a record whose zone could not be read is named, not deleted."""

from __future__ import annotations

import pytest

from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.records.billable import Billable
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.launch.teardown.choice import TeardownChoice, choose
from tpuwizard.core.launch.teardown.verified import Found, Unchecked

A, B = "us-central1-a", "us-west1-c"


def billable(name: str, zone: str = A, node_id: str | None = None, mine: bool = True) -> Billable:
    kind = "queued" if node_id else "node"
    resource = Resource(kind, "p", zone, name, "v5litepod-1", "run-1", node_id=node_id)
    return Billable(resource, "READY", 0.0, None, "labels", mine=mine)


def survey() -> Found:
    lost = billable("lost", B).resource
    return Found(
        [billable("mine"), billable("there", B), billable("mine-qr", node_id="kept")],
        others=[
            billable("theirs", mine=False),
            billable("theirs", B, mine=False),
            billable("their-qr", B, node_id="their-node", mine=False),
        ],
        unchecked=[Unchecked(lost, Diagnosis("zone_unavailable", "", "", []))],
    )


def names(choice: TeardownChoice) -> tuple[list[str], list[str], list[str], list[str]]:
    return (
        [r.name for r in choice.mine],
        [f"{b.resource.name}/{b.resource.zone}" for b in choice.theirs],
        [u.resource.name for u in choice.unchecked],
        [f"{b.resource.name}/{b.resource.zone}" for b in choice.left_alone],
    )


@pytest.mark.parametrize(
    ("name", "everything", "zone", "chosen"),
    [
        (
            None,
            True,
            None,
            (
                ["mine", "there", "mine-qr"],
                [],
                ["lost"],
                ["theirs/" + A, "theirs/" + B, "their-qr/" + B],
            ),
        ),
        (None, True, B, (["there"], [], ["lost"], ["theirs/" + B, "their-qr/" + B])),
        ("mine", False, None, (["mine"], [], [], [])),
        ("kept", False, None, (["mine-qr"], [], [], [])),  # a queued resource by its node
        ("theirs", False, None, ([], ["theirs/" + A, "theirs/" + B], [], [])),
        ("theirs", False, B, ([], ["theirs/" + B], [], [])),
        ("their-qr", False, None, ([], ["their-qr/" + B], [], [])),
        ("lost", False, None, ([], [], ["lost"], [])),
    ],
)
def test_all_is_yours_and_another_users_only_by_its_name(name, everything, zone, chosen):
    assert names(choose(survey(), name, everything, zone)) == chosen


@pytest.mark.parametrize(
    ("name", "zone", "said"),
    [
        (
            "nosuch",
            None,
            "No tpuwizard resource called 'nosuch' exists (yours: mine, there, mine-qr).",
        ),
        (  # another user's queued resource: by its own exact name only, never its node's
            "their-node",
            None,
            "No tpuwizard resource called 'their-node' exists (yours: mine, there, mine-qr).",
        ),
        (
            "mine",
            B,
            f"No tpuwizard resource called 'mine' exists in {B} (yours: mine, there, mine-qr).",
        ),
    ],
)
def test_a_name_that_matches_nothing_names_yours(name, zone, said):
    with pytest.raises(BadInput) as err:
        choose(survey(), name, False, zone)
    assert str(err.value) == said
    with pytest.raises(BadInput, match=r"\(yours: none\)"):
        choose(Found([]), name, False, zone)
