"""The Kaggle ledger's kernels for ``status`` and ``teardown``: practice ones by whether the
command that pushed them still runs (its stand-in ends their sessions when it ends) and by the
stand-in's files (a command killed outright leaves its kernel running to its session limit),
real ones by asking Kaggle with the credentials kaggle 2.2.5 would find."""

from __future__ import annotations

from dataclasses import dataclass, field

from tpuwizard.core.kaggle.credentials import NoCredentials, find_credentials
from tpuwizard.core.kaggle.ledger import KernelLedger, writer_alive
from tpuwizard.core.kaggle.protocol import KaggleCallFailed, Kernels
from tpuwizard.core.kaggle.records import (
    KernelRecord,
    KernelSeen,
    KernelTorn,
    PracticeSession,
    check_kernel,
    held_kernels,
    named,
    practice_kernel,
    tear_down,
)
from tpuwizard.session.free.kaggle import call_timeout_s, kernel_ledger, practice_kernels_dir


@dataclass(frozen=True)
class KaggleHeld:
    """What ``status`` says of the Kaggle ledger's kernels."""

    seen: list[KernelSeen] = field(default_factory=list)
    # Why the real ones could not be asked about (no credentials, a refused sign-in), or None.
    unchecked: str | None = None
    not_checked: list[KernelRecord] = field(default_factory=list)


def _signed_in() -> Kernels | str:
    """Kaggle's client, signed in; or why not, in words."""
    found = find_credentials()
    if isinstance(found, NoCredentials):
        return "no Kaggle credentials were found (" + "; ".join(found.looked_at) + ")"
    from tpuwizard.core.kaggle.client import KaggleApiKernels

    try:
        return KaggleApiKernels(call_timeout_s())
    except KaggleCallFailed as err:
        return f"Kaggle failed while {err.what}: {err.detail}"


def _practice_session(record: KernelRecord) -> PracticeSession:
    from tpuwizard.sandbox.kaggle.sessions import session_on_disk

    return session_on_disk(practice_kernels_dir(), record.kernel)


def _practice_seen(ledger: KernelLedger, record: KernelRecord) -> KernelSeen:
    return practice_kernel(ledger, record, writer_alive(record.pid), _practice_session(record))


def held_on_kaggle() -> KaggleHeld | None:
    """Each kernel the ledger holds, checked; None when it holds none (no call is made)."""
    ledger = kernel_ledger()
    records = held_kernels(ledger)
    if not records:
        return None
    seen = [_practice_seen(ledger, r) for r in records if r.practice]
    real = [r for r in records if not r.practice]
    if not real:
        return KaggleHeld(seen)
    kernels = _signed_in()
    if isinstance(kernels, str):
        return KaggleHeld(seen, kernels, real)
    return KaggleHeld(seen + [check_kernel(kernels, ledger, r) for r in real])


def kernels_named(name: str) -> list[KernelRecord]:
    """The ledger's kernels that ``teardown NAME`` means (none: NAME is not a kernel of ours)."""
    return named(held_kernels(kernel_ledger()), name)


def kernels_held() -> list[KernelRecord]:
    """Every kernel the Kaggle ledger holds (``teardown --all``); no call is made."""
    return held_kernels(kernel_ledger())


def tear_down_kernels(records: list[KernelRecord]) -> list[KernelTorn] | str:
    """Each kernel deleted where it is this user's and its session ended, verified by asking
    Kaggle for it; or why Kaggle could not be asked at all."""
    ledger = kernel_ledger()
    practice = [r for r in records if r.practice]
    torn = []
    for record in practice:
        seen = _practice_seen(ledger, record)
        if seen.gone:
            why = "the practice stand-in ended with its command, and its session with it"
        elif seen.held_by_command:
            why = "its practice command still runs; it ends with it"
        else:
            why = "its session still runs, and no call cancels it"
        torn.append(KernelTorn(seen, seen.gone, why))
    real = [r for r in records if not r.practice]
    if not real:
        return torn
    kernels = _signed_in()
    if isinstance(kernels, str):
        return kernels
    return torn + [tear_down(kernels, ledger, r) for r in real]
