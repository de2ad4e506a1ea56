"""Whether what exists bills, said truly. Google bills what exists in a real project; the practice
sandbox bills nothing, so in practice a sentence that would say "billing" says what runs and that
practice is not billed. Every front end's words about billing ask here, with the one decision
(practice or real: the session's, carried on the plan and on the events that say what bills),
never with a guess of their own."""

from __future__ import annotations

NOT_BILLED = "practice: not billed"


def still_running(practice: bool) -> str:
    """``still running and billing``, or in practice ``still running (practice: not billed)``."""
    return f"still running ({NOT_BILLED})" if practice else "still running and billing"


def still_running_head(practice: bool) -> str:
    """The summary's loud word for what still exists: ``STILL BILLING`` (real)."""
    return f"STILL RUNNING ({NOT_BILLED})" if practice else "STILL BILLING"


def keeps_billing(practice: bool) -> str:
    """``keeps billing`` (a node left running), or ``keeps running (practice: not billed)``."""
    return f"keeps running ({NOT_BILLED})" if practice else "keeps billing"


def keep_billing(practice: bool) -> str:
    """As :func:`keeps_billing`, for several: ``keep billing`` / ``keep running (...)``."""
    return f"keep running ({NOT_BILLED})" if practice else "keep billing"


def bills_until_deleted(practice: bool, many: bool = False) -> str:
    """``it bills until you delete it`` (``they ... them``), or in practice that it runs."""
    if many:
        verb = "run" if practice else "bill"
        return f"they {verb} until you delete them" + (f" ({NOT_BILLED})" if practice else "")
    verb = "runs" if practice else "bills"
    return f"it {verb} until you delete it" + (f" ({NOT_BILLED})" if practice else "")


def may_still_bill(practice: bool) -> str:
    """``it may still bill``, or in practice ``it may still exist (practice: not billed)``."""
    return f"it may still exist ({NOT_BILLED})" if practice else "it may still bill"


def may_still_be_billing(practice: bool) -> str:
    """``may still be billing``, or in practice ``may still exist (practice: not billed)``."""
    return f"may still exist ({NOT_BILLED})" if practice else "may still be billing"


PRACTICE_COST = "nothing billed (practice); on Google"


def billed_for(practice: bool, seconds: float, figure: str) -> str:
    """A node verified gone: ``It billed 312 s: about $0.42 (estimate)``; in practice that it
    ran, nothing was billed, and what Google would have charged."""
    if practice:
        return f"It ran {seconds:.0f} s: {PRACTICE_COST} {figure} (estimate)"
    return f"It billed {seconds:.0f} s: {figure} (estimate)"


def cost_words(practice: bool, figure: str, seconds: float | None) -> str:
    """The summary's cost: ``about $0.42 (estimate) for 312 s of billing``; in practice
    ``nothing billed (practice); on Google about $0.42 (estimate) for 312 s``."""
    if practice:
        run = f" for {seconds:.0f} s" if seconds is not None else ""
        return f"{PRACTICE_COST} {figure} (estimate){run}"
    return f"{figure} (estimate)" + (
        f" for {seconds:.0f} s of billing" if seconds is not None else ""
    )


def billing_from_now(practice: bool, price: str) -> str:
    """A node up: ``billing from now, $4.80/h (estimate)``; in practice what Google would
    charge, said as such."""
    if practice:
        return f"running from now, not billed (practice); on Google {price}"
    return f"billing from now, {price}"


def meter_word(practice: bool) -> str:
    """The wizard's meter while something runs: ``BILLING``, or in practice ``RUNNING``."""
    return "RUNNING" if practice else "BILLING"


def meter_estimate(practice: bool) -> str:
    """After the meter's figure: ``est.``, or in practice ``if real`` (nothing is billed)."""
    return "if real" if practice else "est."
