"""A ledger record this computer's disk refused, in words: the same sentence wherever one is
said (a launch's events, its summary, ``teardown``, and Kaggle's and Colab's ``status`` and
``teardown``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.core.launch.events.launch_events import LedgerRecordHeld

# What a held record says of its resource, in words.
_RECORD_WORDS = {
    "created": "was created",
    "kept": "is kept",
    "delete_pending": "is being deleted",
    "gone": "is verified gone",
    "pushed": "was pushed",  # a Kaggle kernel; a Colab session: made
    "ended": "has ended",
    "deleted": "is gone",
}


def held_record_words(event: LedgerRecordHeld) -> str:
    """A ledger record the disk refused: which, why, and where it is until the ledger takes it
    (a full disk and a read-only home alike: "has room" would be untrue of the second)."""
    said = _RECORD_WORDS.get(event.op, f"is {event.op}")
    if event.kept_in:
        where = (
            f"the record is kept in {event.kept_in} meanwhile (tpuwizard reads it from there) "
            "and moved into the ledger by the first command that can write it again"
        )
    else:
        where = (
            "the record is held in this command's memory only, and written if the ledger can "
            f"be written before it ends; else tpuwizard status finds {event.name} from its earlier "
            "record, as something that may still bill"
        )
    return (
        f"The ledger {event.ledger} could not record that {event.name} {said} "
        f"({event.reason}): {where}."
    )
