"""The lines printed for lifecycle events (the CLI, plain mode and the wizard's logs)."""

from tpuwizard.core.launch import events as ev
from tpuwizard.event_text import describe


def planned(max_run_minutes):
    return ev.Planned(
        run_id="20261130-060000-ab12",
        name="tpuwizard-ab12",
        accelerator="v5litepod-4",
        zone="us-west4-a",
        route="vm",
        project="p",
        chips=4,
        workers=1,
        price_per_hour_usd=4.8,
        max_run_minutes=max_run_minutes,
        practice=True,
        run_dir="runs/20261130-060000-ab12",
    )


def test_the_creating_line_says_the_deadline_in_whole_minutes_or_that_there_is_none():
    assert "deadline 120 min." in describe(planned(120.0))[0]
    assert "deadline 2.5 min." in describe(planned(2.5))[0]
    assert "no deadline." in describe(planned(None))[0]
    assert "None" not in describe(planned(None))[0]
