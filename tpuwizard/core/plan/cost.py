"""Price estimates: chips x catalog price per chip-hour x time. Always an estimate."""

from __future__ import annotations

from tpuwizard.core.plan import catalog


def hourly(accelerator: str, route: str = "vm") -> float | None:
    slice_ = catalog.parse_accelerator(accelerator)
    return slice_.price_per_hour({"vm": "on-demand"}.get(route, route))


def estimate(accelerator: str, route: str, seconds: float) -> float | None:
    """USD for ``seconds`` of ``accelerator`` on ``route``; None when the catalog has no price."""
    per_hour = hourly(accelerator, route)
    return None if per_hour is None else round(per_hour * max(0.0, seconds) / 3600, 4)


def label() -> str:
    """How every figure is labelled: an estimate, with where the prices came from and when."""
    src = catalog.sources()
    return (
        f"estimate from approximate list prices (a public price-catalog snapshot, read "
        f"{src['price_date']}); check the pricing page"
    )
