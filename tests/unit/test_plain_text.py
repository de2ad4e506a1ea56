"""Plain mode's own paragraphs fit the terminal at word boundaries, and its zone survey is named
in the CLI's words."""

import pytest

from tests.fakes import MemoryCloud
from tpuwizard.core.cloud import zones
from tpuwizard.core.plan import catalog
from tpuwizard.plain.walk import PlainWizard
from tpuwizard.session.session import Session
from tpuwizard.words.text_wrap import wrap_paragraph

KEPT = (
    "Kept tpuwizard-20261129-154550-c2a0 in us-central1-a on purpose: it keeps billing about "
    "$4.80/h (estimate) until you delete it: tpuwizard down --sandbox "
    "tpuwizard-20261129-154550-c2a0."
)


def test_a_long_paragraph_breaks_between_words_within_the_width():
    wrapped = wrap_paragraph(KEPT, 80).splitlines()
    assert len(wrapped) > 1 and all(len(line) <= 80 for line in wrapped)
    assert " ".join(wrapped).split() == KEPT.split()  # no word cut ("unti" / "l you")
    assert wrap_paragraph("short", 80) == "short"


def test_indents_are_kept_and_a_step_hangs_under_its_words():
    step = "    - " + "Fix the script and launch again; its output shows why. " * 3
    lines = wrap_paragraph(step.rstrip(), 50).splitlines()
    assert lines[0].startswith("    - ") and all(line.startswith("      ") for line in lines[1:])
    assert all(len(line) <= 50 for line in lines)


def test_plain_mode_wraps_its_own_paragraphs_to_the_width():
    lines: list[str] = []
    PlainWizard(echo=lines.append, width=60).say(KEPT)
    (text,) = lines
    assert all(len(line) <= 60 for line in text.splitlines()) and text.split() == KEPT.split()


def test_plain_mode_names_practice_zones_as_the_cli_does(monkeypatch):
    lines: list[str] = []
    wizard = PlainWizard(sandbox=True, echo=lines.append)
    monkeypatch.setattr(wizard, "select", lambda message, choices, default=None: default)
    survey = zones.ZoneSurvey("live", {"us-central1-a": ["v5litepod-4"]})
    monkeypatch.setattr(zones, "live", lambda cloud, refresh=False: survey)
    session = Session(practice=True, project="practice-project")
    session.clouds.use(MemoryCloud())
    assert (
        wizard.choose_zone(session, catalog.parse_accelerator("v5litepod-4"), None)
        == "us-central1-a"
    )
    said = next(line for line in lines if line.startswith("Zones offering v5litepod-4"))
    assert "(from the practice sandbox" in said and "(live)" not in said


def test_plain_mode_lists_zones_with_the_route_s_prices_and_cannot_choose_one_it_refuses(
    monkeypatch,
):
    """Flex-start v6e-4 from the catalog: the zones Flex-start serves come first, priced at most
    on-demand's; the others say why and are disabled, so no answer is refused eight questions
    later."""
    asked: dict = {}

    def select(message, choices, default=None):
        asked.update(choices=choices, default=default)
        return default

    lines: list[str] = []
    wizard = PlainWizard(sandbox=True, echo=lines.append)
    monkeypatch.setattr(wizard, "select", select)
    monkeypatch.setattr(zones, "live", lambda cloud, refresh=False: zones.documented())
    session = Session(practice=True, project="practice-project")
    session.clouds.use(MemoryCloud())
    chosen = wizard.choose_zone(
        session, catalog.parse_accelerator("v6e-4"), "europe-west4-a", "flex"
    )
    usable = [c for c in asked["choices"] if not c.disabled]
    refused = [c for c in asked["choices"] if c.disabled]
    assert chosen == usable[0].value != "europe-west4-a"  # the earlier zone Flex cannot use
    assert asked["choices"][: len(usable)] == usable and refused
    assert all("no Flex-start here" in c.disabled for c in refused)
    assert all("<=$" in c.title for c in asked["choices"])  # at most, never a bare price


def test_plain_mode_s_packages_answer_is_checked_as_typed():
    from tpuwizard.core.errors import BadInput
    from tpuwizard.plain.prompt import packages_check

    packages_check("flax optax, orbax-checkpoint")  # the course's, as typed
    with pytest.raises(BadInput, match="jax"):
        packages_check("flax jax==0.4.1")  # tpuwizard's tested JAX stays
