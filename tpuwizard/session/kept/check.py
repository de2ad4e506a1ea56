"""What ``status`` learns of the kept nodes from the cloud (:meth:`KeptNodes.check`).

Apart from :mod:`~tpuwizard.session.kept.nodes` (the kept-node machinery, about 0.1 s to import) so
that ``status`` can say "none" without it when the ledger records no kept node, and from
:mod:`~tpuwizard.session.kept.lines` so that every command's kept-node lines stay light.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.core.launch.kept.end_reason import EndReason, GoneEvidence
    from tpuwizard.core.launch.teardown.verified import TeardownResult
    from tpuwizard.session.kept.lines import KeptInfo


@dataclass(frozen=True)
class KeptGone:
    """A kept node no tpuwizard command here deleted, found gone: its line, and its route (a
    spot node may have been preempted away)."""

    info: KeptInfo
    route: str | None
    evidence: GoneEvidence
    reason: EndReason  # what its evidence's times support (end_reason.py)


@dataclass
class KeptCheck:
    """The kept nodes as the cloud sees them now, the preempted ones just deleted, and those
    that something other than tpuwizard deleted (``gone``: said, never dropped silently)."""

    infos: list[KeptInfo]
    preempted: list[TeardownResult]
    gone: list[KeptGone] = field(default_factory=list)
