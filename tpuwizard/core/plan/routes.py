"""The ways to get a TPU, and which one to take, from four answers.

Routes:
* ``notebook``: a free hosted notebook TPU (Colab v5e-1, Kaggle v5e-8); no billing account;
* ``vm``: a Cloud TPU VM on demand: starts now if the zone has capacity, runs until deleted;
* ``spot``: the same VM at a large discount, but Google may preempt it at any moment;
* ``flex``: Flex-start: the request waits in a queue for capacity, then runs for a bounded time
  (up to 7 days), after which the VMs are deleted.
"""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.plan import catalog

BUDGETS = ("free", "low", "normal")
RUN_LENGTHS = ("under 1 hour", "1-4 hours", "4-24 hours", "days")
CHIP_COUNTS = (1, 4, 8, 16, 64)  # the answers to "Chips needed?"


@dataclass(frozen=True)
class RouteInfo:
    """One route as the first step's card shows it."""

    key: str
    title: str
    cost: str
    wait: str
    max_run: str
    chips: str
    account: str


def route_table() -> list[RouteInfo]:
    v5e = catalog.generations()["v5e"]
    return [
        RouteInfo(
            "notebook",
            "Free notebook",
            "free",
            "seconds, if one is free",
            "a session (~1.5 h on Colab)",
            "1 (Colab) or 8 (Kaggle)",
            "a Google account",
        ),
        RouteInfo(
            "vm",
            "TPU VM, on demand",
            f"${v5e.price_on_demand:.2f}/chip-h (v5e)",
            "minutes, if capacity",
            "until you delete it",
            "1 to thousands",
            "billing + TPU quota",
        ),
        RouteInfo(
            "spot",
            "TPU VM, spot",
            f"${v5e.price_spot:.2f}/chip-h (v5e)",
            "minutes, if capacity",
            "until preempted",
            "1 to thousands",
            "billing + spot quota",
        ),
        RouteInfo(
            "flex",
            "Flex-start, queued",
            "discounted",
            "in a queue",
            "up to a deadline (≤ 7 days)",
            "1 to many",
            "billing + quota",
        ),
    ]


def route_title(key: str) -> str:
    """The route's name as its card shows it (``TPU VM, on demand``), never its key (``vm``)."""
    return next(info.title for info in route_table() if info.key == key)


@dataclass(frozen=True)
class Advice:
    """The route recommended for four answers, and why."""

    route: str
    reason: str


def recommend(budget: str, chips: int, run_length: str, billing_account: bool) -> Advice:
    """Which route fits, and why, in one sentence."""
    if budget not in BUDGETS or run_length not in RUN_LENGTHS or chips < 1:
        raise ValueError("unknown answer")
    if not billing_account or budget == "free":
        # The reason names the answer that rules out paying: no billing account, or no budget.
        why = "Without a billing account" if not billing_account else "With a budget of nothing"
        if chips > 8:
            return Advice(
                "notebook",
                f"{why} only the free notebooks are open to you; Kaggle's v5e-8 (8 chips) is "
                "the largest free TPU, so plan for 8 chips or fewer.",
            )
        which = "Kaggle's v5e-8" if chips > 1 else "Colab's v5e-1 (or Kaggle's v5e-8)"
        limit = " Sessions are short, so save checkpoints." if run_length != "under 1 hour" else ""
        return Advice(
            "notebook",
            f"{why}, the free notebooks fit: {which} has "
            f"{'8 chips' if chips > 1 else 'a chip'} for you.{limit}",
        )
    if budget == "low":
        if run_length in ("under 1 hour", "1-4 hours"):
            return Advice(
                "spot",
                "Spot costs about a fifth of on-demand; a short run can "
                "simply be restarted if Google preempts it.",
            )
        return Advice(
            "flex",
            "Flex-start is discounted and bounded: a long run waits for "
            "capacity, then runs to the deadline you set without preemption.",
        )
    if chips > 8:
        return Advice(
            "flex",
            "Large slices are often out of capacity on demand; Flex-start "
            "queues the request and starts it when the chips are free.",
        )
    return Advice(
        "vm",
        "On demand starts as soon as the zone has capacity and runs until you "
        "delete it: the simplest way to a TPU you control.",
    )
