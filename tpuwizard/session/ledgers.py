"""Which ledger a session writes: practice and real resources are never mixed in one.

Apart from :mod:`~tpuwizard.session.runtime` (which imports the launch machinery, about 0.1 s)
so that ``status`` and the leftover check read the ledger without it.
"""

from __future__ import annotations

from tpuwizard.core import paths
from tpuwizard.core.launch.records.ledger import Ledger


def ledger_for(is_practice: bool) -> Ledger:
    """Practice and real resources are never mixed in one ledger."""
    state = paths.state_dir()
    return Ledger(state / "sandbox" / "ledger.jsonl" if is_practice else state / "ledger.jsonl")
