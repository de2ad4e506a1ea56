"""Issue 55: a run on a kept node ends with exit_codes.py's meanings: a script the stall guard
ended is the script's failure (1), as a launch's is; a command on the node that failed is the
cloud's (3)."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import pytest

from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.errors import RemoteError, WorkersStalled
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED
from tpuwizard.core.launch.records.ledger import Entry, Resource
from tpuwizard.session.kept.nodes import KeptNode


def kept_node(raised: Exception) -> KeptNode:
    """A kept node whose script run raises ``raised``, with no heartbeats or transport."""
    r = Resource("node", "p", "us-central1-a", "node-a", "v5litepod-1", "r1")
    node = KeptNode.__new__(KeptNode)
    node.entry, node.name = Entry(r, "kept", 1000.0, 900.0, {}), "node-a"
    node.keep_alive = lambda _missed: contextlib.nullcontext()  # type: ignore[method-assign]

    def run_script(*_args: object) -> int:
        raise raised

    node._run_script = run_script  # type: ignore[method-assign]
    return node


@pytest.mark.parametrize(
    ("raised", "code", "kind"),
    [
        (WorkersStalled([0], "w0 printed nothing", ["w0 printed nothing"]), EXIT_FAILED,
         "workers_stalled"),
        (RemoteError("ssh: connection reset"), EXIT_CLOUD, None),
    ],
)  # fmt: skip
def test_a_run_s_failure_ends_with_its_meaning(raised, code, kind):
    said: list = []
    ended, gone = kept_node(raised).run_once(
        SimpleNamespace(), SimpleNamespace(), said.append, CancelToken()
    )
    assert (ended, gone) == (code, None)
    (failed,) = said
    assert failed.stage == "script"
    if kind is not None:
        assert failed.diagnosis.kind == kind
