"""What ``teardown NAME`` or ``teardown --all`` acts on, chosen from a survey (:class:`Found`).

``--all`` means all of *yours*: another user's resource is chosen only by its exact name (and
deleted only once the person confirms it), and otherwise left alone. A record of this install's
whose zone could not be read is neither deleted nor called gone: it is said as unchecked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tpuwizard.core.errors import BadInput

if TYPE_CHECKING:
    from tpuwizard.core.launch.records.billable import Billable
    from tpuwizard.core.launch.records.ledger import Resource
    from tpuwizard.core.launch.teardown.verified import Found, Unchecked


@dataclass(frozen=True)
class TeardownChoice:
    """The resources a teardown deletes, and what it names without deleting."""

    mine: list[Resource]  # this install's, to delete
    theirs: list[Billable] = field(default_factory=list)  # another user's, by exact name
    unchecked: list[Unchecked] = field(default_factory=list)  # asked for, zone unreadable
    left_alone: list[Billable] = field(default_factory=list)  # --all: other users', untouched


def choose(
    found: Found, name: str | None, everything: bool, zone: str | None = None
) -> TeardownChoice:
    """This install's resources named ``name`` (or ``everything``), in ``zone`` when one is
    given; another user's only by its exact name. A name that matches nothing at all raises
    :class:`BadInput`, naming this install's resources."""

    def wanted(resource: Resource) -> bool:
        named = everything or name in (resource.name, resource.node_id)
        return named and zone in (None, resource.zone)

    unchecked = [u for u in found.unchecked if wanted(u.resource)]
    mine = [b.resource for b in found if wanted(b.resource)]
    if everything:
        left_alone = [b for b in found.others if zone in (None, b.resource.zone)]
        return TeardownChoice(mine, [], unchecked, left_alone)
    theirs = [b for b in found.others if b.resource.name == name and wanted(b.resource)]
    if not mine and not theirs and not unchecked:
        names = ", ".join(b.resource.name for b in found) or "none"
        where = f" in {zone}" if zone else ""
        raise BadInput(f"No tpuwizard resource called '{name}' exists{where} (yours: {names}).")
    return TeardownChoice(mine, theirs, unchecked)
