"""AI zones (issue 33): the catalog lists them, labelled; a live survey shows them where the
project sees them and says once, with how to turn visibility on, where it does not; a launch
naming one is not refused for its being hidden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.plans import launch_plan
from tpuwizard.cli import main
from tpuwizard.commands import zones as zones_command
from tpuwizard.core.cloud import ai_zones
from tpuwizard.core.cloud.backend_choice import zone_offers
from tpuwizard.core.cloud.zones import ZoneSurvey
from tpuwizard.core.plan import catalog
from tpuwizard.session.decision import ZoneAnswer
from tpuwizard.session.session import Session


def test_the_catalog_lists_the_ai_zones_by_generation():
    assert catalog.generations()["tpu7x"].ai_zones == ("us-central1-ai1a",)
    assert catalog.generations()["v6e"].ai_zones == ("us-central1-ai1", "us-south1-ai1b")
    assert catalog.parse_accelerator("tpu7x-8").offered_zones[-1] == "us-central1-ai1a"
    assert "us-south1-ai1b" in catalog.documented_ai_zone_table()
    assert "us-south1-ai1b" not in catalog.documented_zone_table()  # never a plain zone's row


def test_a_launch_naming_a_hidden_ai_zone_is_not_refused():
    base = dict(project="practice-project", run_id="r1", run_dir=Path("/tmp/r1"))
    tpu7x = launch_plan(
        "tpu7x-8",
        "us-central1-c",
        zones=("us-central1-c", "us-central1-ai1a"),
        backend="compute",
        **base,  # type: ignore[arg-type]
    )
    assert tpu7x.problems() == []
    v6e = launch_plan("v6e-4", "us-east5-a", zones=("us-east5-a", "us-south1-ai1b"), **base)  # type: ignore[arg-type]
    assert v6e.problems() == []


def test_hidden_ones_are_said_with_how_to_see_them_and_visible_ones_offered():
    live: dict[str, list[str]] = {"us-central1-c": []}
    line = ai_zones.ai_zone_line(catalog.parse_accelerator("tpu7x-8"), live, "live")
    assert line is not None and "Not visible to this project: us-central1-ai1a" in line
    assert ai_zones.MANAGE_PAGE in line and "--zone us-central1-ai1a" in line
    seen = {**live, "us-central1-ai1a": []}
    assert ai_zones.ai_zone_line(catalog.parse_accelerator("tpu7x-8"), seen, "live") is None
    offers = zone_offers(
        catalog.parse_accelerator("tpu7x-8"),
        [],
        "live",
        ai_zones.visible_ai_zones(catalog.parse_accelerator("tpu7x-8"), seen),
    )
    assert [o.zone for o in offers] == ["us-central1-ai1a", "us-central1-c"]
    documented = ai_zones.ai_zone_line(catalog.parse_accelerator("v6e-4"), {}, "documented")
    assert documented is not None and documented.startswith("AI zones the catalog lists")
    assert (
        ai_zones.ai_zone_line(catalog.parse_accelerator("v5litepod-4"), {}, "live") is None
    )  # none for v5e


@pytest.fixture
def survey(monkeypatch):
    """Set the practice session's live survey to ``zones``."""

    def use(zones: dict[str, list[str]]) -> None:
        s = Session(practice=True, project="practice-project")
        answer = ZoneAnswer(ZoneSurvey("live", zones), practice=True)
        monkeypatch.setattr(s, "zone_survey", lambda **_: answer)
        monkeypatch.setattr(zones_command, "open_session", lambda project, sandbox: s)

    return use


def test_the_zones_command_says_it_once_and_lists_states_in_json(survey):
    survey({"us-east5-a": ["v6e-4"], "us-central1-ai1": ["v6e-4"]})
    args = ["zones", "--sandbox", "--accelerator", "v6e-4"]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0, text.output
    assert text.output.count("Not visible to this project: us-south1-ai1b") == 1
    doc = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    assert doc["ai_zones"] == {"us-central1-ai1": "listed", "us-south1-ai1b": "not visible"}
    assert "us-central1-ai1" in doc["zones"]
