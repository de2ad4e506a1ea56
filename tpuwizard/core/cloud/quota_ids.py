"""Which Compute Engine quota a TPU launch spends, by the names Google publishes or users report.

Two different names are involved, from two different sources:

* Cloud Quotas' quota ids (``PREEMPTIBLE-TPU-V6E-per-project-region``, ...). No Google page lists
  them for TPUs: every id below is from users' reports (``gcloud quotas info`` reads, quota errors),
  cited beside it, and reports disagree on some (which pool Flex-start spends; v5p's on-demand
  id). So each (generation, route) has *candidates*, read by name in the order below: the first
  one Cloud Quotas knows governs the plan, for the reason given beside it; a candidate that answers
  404 does not exist for the project and is passed over. The limits are read; usage is not.
* Compute Engine's ``regions.get`` metrics (``quotas[].metric``), which carry usage. These are an
  enum in Google's discovery document (compute.v1.json, revision 20261106, ``Quota.metric``), and
  its only TPU values are :data:`ENUM_TPU_METRICS`: v5e's and v4's. A candidate names the one that
  counts what its quota id limits (``usage_metric``), where the enum has it. No metric there counts
  v6e, v5p or TPU7x, so for them no source gives usage and the preflight says "usage not known".
"""

from __future__ import annotations

from dataclasses import dataclass

# The sources the ids rest on (all reports; none of them is Google's documentation).
_CE_REPORT = "report: compute-engine.md 'Quota' (users creating TPU VMs on Compute Engine)"
_V5P_REPORT = "report: one user's `gcloud quotas info`, 2026-08-11"
_ISSUE_REPORT = "report: users' Cloud Quotas reads quoted in tpuwizard issue 33"
_FLEX_PREEMPTIBLE = (
    "Flex-start draws on preemptible quota (Google's TPU Flex-start page for the TPU API, "
    "google-behaviour.md:26; compute-engine.md, report)"
)
_FLEX_FAMILY = "other reports say Compute Engine's Flex-start spends the on-demand pool"

# compute.v1.json (revision 20261106) ``Quota.metric``: every TPU value it has (a test reads the
# discovery document and holds the two together).
ENUM_TPU_METRICS = (
    "PREEMPTIBLE_TPU_LITE_DEVICE_V5",
    "PREEMPTIBLE_TPU_LITE_PODSLICE_V5",
    "PREEMPTIBLE_TPU_PODSLICE_V4",
    "TPU_LITE_DEVICE_V5",
    "TPU_LITE_PODSLICE_V5",
    "TPU_PODSLICE_V4",
)


@dataclass(frozen=True)
class QuotaCandidate:
    """A Cloud Quotas id a route may spend: its dimensions besides the region, why it would be
    the one that governs, the source of the id, and the ``regions.get`` metric that reports its
    usage (one of :data:`ENUM_TPU_METRICS`; None where the enum has none)."""

    quota_id: str
    dimensions: tuple[tuple[str, str], ...]
    why: str
    source: str
    usage_metric: str | None = None

    @property
    def dimension_map(self) -> dict[str, str]:
        return dict(self.dimensions)


def _c(
    quota_id: str, why: str, source: str, usage: str | None = None, **dimensions: str
) -> QuotaCandidate:
    return QuotaCandidate(quota_id, tuple(sorted(dimensions.items())), why, source, usage)


_V6E_FAMILY = _c(
    "TPUS-PER-TPU-FAMILY-per-project-region",
    "on-demand v6e spends the TPU family quota",
    _CE_REPORT,
    tpu_family="CT6E",
)
_V6E_SPOT = _c(
    "PREEMPTIBLE-TPU-V6E-per-project-region",
    "spot v6e spends the preemptible v6e quota",
    _CE_REPORT,
)
_V5P_OWN = _c("TPU-V5P-per-project-region", "on-demand v5p has its own quota", _V5P_REPORT)
_V5P_FAMILY = _c(
    "TPUS-PER-TPU-FAMILY-per-project-region",
    "on-demand TPUs spend the TPU family quota (as v6e does)",
    _CE_REPORT,
    tpu_family="CT5P",
)
_V5P_SPOT = _c(
    "PREEMPTIBLE-TPU-V5P-per-project-region",
    "spot v5p spends the preemptible v5p quota",
    _V5P_REPORT,
)
# Its regions.get metric is the id's own name in Compute Engine's spelling (as N2_CPUS is
# compute.googleapis.com/n2_cpus's), and compute.v1.json's enum has it. Compute Engine refuses
# v5e's machine types (backend_choice.SUPPORT), so no launch reads this today.
_V5E = _c(
    "TPU-LITE-PODSLICE-V5-per-project-region",
    "v5e spends the v5e podslice quota",
    _ISSUE_REPORT,
    "TPU_LITE_PODSLICE_V5",
)


# (generation, route) -> candidates, the likeliest first. No report names TPU7x's: none is given,
# and the preflight says so rather than guess.
COMPUTE_CANDIDATES: dict[tuple[str, str], tuple[QuotaCandidate, ...]] = {
    ("v6e", "vm"): (_V6E_FAMILY,),
    ("v6e", "spot"): (_V6E_SPOT,),
    ("v6e", "flex"): (
        _c(_V6E_SPOT.quota_id, _FLEX_PREEMPTIBLE, _CE_REPORT),
        _c(_V6E_FAMILY.quota_id, _FLEX_FAMILY, _ISSUE_REPORT, tpu_family="CT6E"),
    ),
    ("v5p", "vm"): (_V5P_OWN, _V5P_FAMILY),
    ("v5p", "spot"): (_V5P_SPOT,),
    ("v5p", "flex"): (
        _c(_V5P_SPOT.quota_id, _FLEX_PREEMPTIBLE, _V5P_REPORT),
        _c(_V5P_OWN.quota_id, _FLEX_FAMILY, _ISSUE_REPORT),
    ),
    ("v5e", "vm"): (_V5E,),
}


def compute_candidates(generation: str, route: str) -> tuple[QuotaCandidate, ...]:
    """The Cloud Quotas ids ``route`` (vm, spot, flex) may spend for ``generation`` on Compute
    Engine, the likeliest first; empty where no source names one."""
    return COMPUTE_CANDIDATES.get((generation, "vm" if route == "on-demand" else route), ())
