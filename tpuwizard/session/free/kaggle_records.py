"""The Kaggle ledger's kernels for ``status`` and ``teardown``: practice ones by whether the
command that pushed them still runs (the stand-in, and its kernels, end with it), real ones by
asking Kaggle with the credentials kaggle 2.2.5 would find."""

from __future__ import annotations

from dataclasses import dataclass, field

from tpuwizard.core.kaggle.credentials import NoCredentials, find_credentials
from tpuwizard.core.kaggle.ledger import writer_alive
from tpuwizard.core.kaggle.protocol import KaggleCallFailed, Kernels
from tpuwizard.core.kaggle.records import (
    KernelRecord,
    KernelSeen,
    KernelTorn,
    check_kernel,
    held_kernels,
    named,
    practice_kernel,
    tear_down,
)
from tpuwizard.session.free.kaggle import call_timeout_s, kernel_ledger


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


def held_on_kaggle() -> KaggleHeld | None:
    """Each kernel the ledger holds, checked; None when it holds none (no call is made)."""
    ledger = kernel_ledger()
    records = held_kernels(ledger)
    if not records:
        return None
    seen = [practice_kernel(ledger, r, writer_alive(r.pid)) for r in records if r.practice]
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
        seen = practice_kernel(ledger, record, writer_alive(record.pid))
        why = "" if seen.gone else "its practice command still runs; it ends with it"
        torn.append(KernelTorn(seen, seen.gone, why or "the practice stand-in ended with it"))
    real = [r for r in records if not r.practice]
    if not real:
        return torn
    kernels = _signed_in()
    if isinstance(kernels, str):
        return kernels
    return torn + [tear_down(kernels, ledger, r) for r in real]
