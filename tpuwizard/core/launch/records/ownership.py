"""Which live resource is ours: only the one whose labels say this run (and owner) created it.

A name is not an identity. A node called ``x`` may be another person's, one made by hand, or an
earlier run's that the user kept; a create answering 409 proves only that the name is taken.
tpuwizard deletes a resource only after reading its labels and finding the very instance its
ledger describes: the same run id and, when the record has one, the same owner.
"""

from __future__ import annotations

from typing import Protocol

from tpuwizard.core.cloud.types import OWNER_LABEL, RUN_LABEL
from tpuwizard.core.launch.records.ledger import Resource


class _Reads(Protocol):
    def get_node(self, zone: str, node_id: str) -> object: ...
    def get_queued(self, zone: str, qr_id: str) -> object: ...


def is_instance(labels: dict[str, str], resource: Resource) -> bool:
    """Do these live labels belong to exactly the instance ``resource`` records?"""
    if labels.get(RUN_LABEL) != resource.run_id:
        return False
    return resource.owner is None or labels.get(OWNER_LABEL) == resource.owner


def live_labels(cloud: _Reads, resource: Resource) -> dict[str, str] | None:
    """The labels of whatever now holds ``resource``'s name; None when nothing does.

    Read failures propagate: "cannot tell" must never be taken for "ours".
    """
    if resource.kind == "queued":
        info = cloud.get_queued(resource.zone, resource.name)
    else:
        info = cloud.get_node(resource.zone, resource.name)
    if info is None:
        return None
    return dict(getattr(info, "labels", {}) or {})


def not_this_owners(labels: dict[str, str], owner: str) -> str | None:
    """Why a live resource is not this install's to use, in words, read from its owner label as
    the API returns it (a ledger's copy of it may come from another user's home); None when the
    label is ``owner``."""
    theirs = labels.get(OWNER_LABEL)
    if theirs == owner:
        return None
    if not theirs:
        return f"it carries no owner label (yours is {owner})"
    return f"its owner label is {theirs} (yours is {owner})"


def held_by(labels: dict[str, str]) -> str:
    """Who holds a name, in words, for the ledger and messages."""
    run, owner = labels.get(RUN_LABEL), labels.get(OWNER_LABEL)
    if run is None:
        return "a resource tpuwizard did not make"
    return (f"owner {owner}, " if owner else "") + f"tpuwizard run {run}"


# The server-side identity recorded in the ledger once the node is READY: Google's numeric
# node id (TPU ``Node.id``; on Compute Engine ``Instance.id``) and its create time. A name can
# be reused by anyone after a delete; an id never is.
UID_KEY, CREATED_KEY = "node_uid", "node_create_time"


def identity(uid: str, create_time: float | None) -> dict[str, object]:
    """The ledger fields that pin a record to one server-side instance."""
    return {UID_KEY: uid or None, CREATED_KEY: create_time}


def not_the_recorded_node(
    resource: Resource,
    recorded: dict[str, object],
    labels: dict[str, str],
    uid: str,
    create_time: float | None,
) -> str | None:
    """Why the live node under ``resource``'s name is not the one the ledger recorded (in
    words), or None when it is: its labels name this run and owner, and its id and create
    time, where recorded, are the recorded ones."""
    if not is_instance(labels, resource):
        return f"it belongs to {held_by(labels)}"
    want_uid, want_created = recorded.get(UID_KEY), recorded.get(CREATED_KEY)
    if want_uid and uid != want_uid:
        return f"it was created again since (id {uid or 'unknown'}, not {want_uid})"
    if (
        isinstance(want_created, int | float)
        and create_time is not None
        and abs(create_time - want_created) > 1.0
    ):
        return "it was created again since (a different create time)"
    return None
