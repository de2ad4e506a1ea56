"""The weekly Kaggle TPU quota left, for the wizard's Route step (read off the UI thread).

Practice reads the stand-in's own figure (the answer the Kaggle stand-in serves, parsed as
kaggle's client parses it), without starting a server: a read beside the first screen must
not point this process's HTTP proxy at a stand-in while other calls run. Real runs ask Kaggle
with the credentials kaggle 2.2.5 would find; none found is said, and nothing is asked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from tpuwizard.core.kaggle.credentials import NoCredentials, find_credentials
from tpuwizard.core.kaggle.protocol import KaggleCallFailed, Quota


@dataclass(frozen=True)
class QuotaRead:
    """What the Route step says of the weekly TPU quota: the figure, or why there is none."""

    quota: Quota | None
    practice: bool  # the figure is the practice stand-in's
    problem: str | None = None  # why it could not be read


def weekly_tpu_quota(practice: bool) -> QuotaRead:
    """The TPU quota left this week (blocking: call it off the UI thread)."""
    if practice:
        return QuotaRead(_stand_in_quota(), practice=True)
    found = find_credentials()
    if isinstance(found, NoCredentials):
        return QuotaRead(None, False, "no Kaggle credentials were found")
    from tpuwizard.core.kaggle.client import KaggleApiKernels
    from tpuwizard.session.free.kaggle import call_timeout_s

    try:
        return QuotaRead(KaggleApiKernels(call_timeout_s()).tpu_quota(), practice=False)
    except KaggleCallFailed as err:
        return QuotaRead(None, False, f"Kaggle failed while {err.what}: {err.detail}")


def _stand_in_quota() -> Quota | None:
    from tpuwizard.core.kaggle.client import tpu_quota_from_json
    from tpuwizard.sandbox.kaggle.server import quota_statistics
    from tpuwizard.sandbox.kaggle.sessions import parse_kaggle_faults
    from tpuwizard.session.free.kaggle import KAGGLE_FAULTS_ENV

    faults = parse_kaggle_faults(os.environ.get(KAGGLE_FAULTS_ENV))
    return tpu_quota_from_json(quota_statistics(faults))
