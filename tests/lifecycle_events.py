"""Lifecycle events as tests need them: every field at a plain default, the ones a test cares
about given by name."""

from __future__ import annotations

from typing import Any

from tpuwizard.core.launch.events import launch_events as ev


def planned(run_id: str = "r1", **fields: Any) -> ev.Planned:
    """A practice launch of v5litepod-4 in us-central1-a, $4.80/h, 120 minutes' deadline."""
    defaults: dict[str, Any] = dict(
        run_id=run_id,
        name=f"tpuwizard-{run_id}",
        accelerator="v5litepod-4",
        zone="us-central1-a",
        route="vm",
        project="p",
        chips=4,
        workers=1,
        price_per_hour_usd=4.8,
        max_run_minutes=120,
        practice=True,
        run_dir=f"runs/{run_id}",
    )
    return ev.Planned(**{**defaults, **fields})
