"""A kept node is used only when its owner label, as the cloud returns it now, is this install's
(issue 56, item 6): a ledger holding another user's record (a copied or restored home) makes
`run`, `ssh`, `watch` and `fit --measure --node` refuse it, exit 2, before any SSH."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.fakes import MemoryCloud
from tpuwizard.cli import main
from tpuwizard.core import paths
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.records.ownership import not_this_owners
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session.kept import nodes as kept_module
from tpuwizard.session.session import Session

ZONE, ALICE = "us-central1-a", "0a11ce0a11ce0a11"
NOT_YOURS = "alice1 in us-central1-a is not yours: "


@pytest.mark.parametrize(
    ("labels", "why"),
    [
        ({"tpuwizard-owner": "me"}, None),
        ({"tpuwizard-owner": ALICE}, f"its owner label is {ALICE} (yours is me)"),
        ({}, "it carries no owner label (yours is me)"),
        ({"tpuwizard-owner": ""}, "it carries no owner label (yours is me)"),
    ],
)
def test_only_this_installs_owner_label_is_ours(labels, why):
    assert not_this_owners(labels, "me") == why


def kept_node(session: Session, label: str | None, recorded: str | None) -> None:
    """alice1 in the cloud with the owner ``label`` (None: no label), kept in this session's
    ledger with the owner ``recorded`` (a copied record carries its maker's)."""
    session.cloud.create_node(
        NodeRequest(ZONE, "alice1", parse_accelerator("v5litepod-1"), "run-a", owner=label)
    )
    resource = Resource(
        "node", "practice-project", ZONE, "alice1", "v5litepod-1", "run-a", owner=recorded
    )
    for op in ("intent", "created", "kept"):
        session.ledger.record(op, resource)


@pytest.fixture
def session(home, monkeypatch) -> Session:
    """A practice session over the in-memory cloud; a KeptNode built (the step before SSH) is
    only marked, never connected."""
    session = Session(practice=True, project="practice-project")
    session.clouds.use(MemoryCloud())
    monkeypatch.setattr(kept_module, "KeptNode", lambda nodes, entry, node: ("opened", node.name))
    return session


@pytest.mark.parametrize(
    ("label", "recorded", "refusal"),
    [
        ("mine", "mine", None),  # our own kept node
        (ALICE, ALICE, f"its owner label is {ALICE}"),  # Alice's record in our ledger
        (None, None, "it carries no owner label"),  # an old record, a node with no owner label
    ],
)
def test_a_kept_node_opens_only_under_this_installs_owner_label(session, label, recorded, refusal):
    mine = paths.owner_label()
    kept_node(session, mine if label == "mine" else label, mine if recorded == "mine" else recorded)
    if refusal is None:
        assert session.kept.open("alice1") == ("opened", "alice1")
        return
    with pytest.raises(BadInput) as refused:
        session.kept.open("alice1")
    assert str(refused.value).startswith(NOT_YOURS + refusal + f" (yours is {mine}).")
    assert "nothing was copied to it or run on it" in str(refused.value)
    # left as it was: the node, and the ledger's record (not ours to close)
    assert session.cloud.count("delete_node") == 0
    assert [e.op for e in Ledger(session.ledger.path).open_entries()] == ["kept"]


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--node", "alice1", "SCRIPT"],
        ["watch", "--node", "alice1", "SCRIPT"],
        ["ssh", "--node", "alice1"],
        ["fit", "--program", "SCRIPT", "--measure", "--node", "alice1"],
    ],
    ids=["run", "watch", "ssh", "fit --measure"],
)
def test_every_kept_node_command_refuses_another_users_node_before_any_ssh(
    session, tmp_path, monkeypatch, command
):
    script = tmp_path / "train.py"
    script.write_text("print('hello')\n")
    kept_node(session, ALICE, ALICE)
    # The session every command opens (a module that imports open_session by name meanwhile
    # must not keep a stand-in: Session.open itself answers).
    monkeypatch.setattr(Session, "open", classmethod(lambda cls, *a, **k: session))
    args = [str(script) if a == "SCRIPT" else a for a in command]
    result = CliRunner().invoke(main, [*args, "--sandbox"])
    assert result.exit_code == EXIT_BAD_INPUT, result.output
    assert NOT_YOURS in result.stderr
    assert "opened" not in result.output  # no KeptNode: no transport, no SSH
