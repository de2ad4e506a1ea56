"""Which ledger a session writes: practice and real resources are never mixed in one.

Apart from :mod:`~tpuwizard.session.runtime` (which imports the launch machinery, about 0.1 s)
so that ``status`` and the leftover check read the ledger without it.
"""

from __future__ import annotations

from pathlib import Path

from tpuwizard.core import paths
from tpuwizard.core.launch.records.ledger import Ledger


def ledger_for(is_practice: bool) -> Ledger:
    """Practice and real resources are never mixed in one ledger."""
    state = paths.state_dir()
    return Ledger(state / "sandbox" / "ledger.jsonl" if is_practice else state / "ledger.jsonl")


def allow_read_only_home() -> None:
    """``status``, ``down`` and ``teardown``: work from a home this user may read but not write
    (listing, deleting and verifying need no write there; the ledger holds their records in a
    folder of this user's alone under the temporary folder). Other commands refuse it (exit 2)."""
    paths.allow_read_only_home()


def read_only_home() -> tuple[Path, Path | None] | None:
    """(the home, where this command's ledger records are held meanwhile, or None: only in its
    memory) when the home is read-only for this command; None when it is writable."""
    from tpuwizard.core.launch.records.ledger_file import fallback_folder

    home = paths.read_only_home()
    return None if home is None else (home, fallback_folder())
