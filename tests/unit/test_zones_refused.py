"""`tpuwizard zones` says a zone Google refuses to the project once per project, as `status` and
`teardown` do (the same memory and words, commands/choosing.py), and always lists it in --json."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tpuwizard.cli import main
from tpuwizard.commands import zones as zones_command
from tpuwizard.core.cloud.zones import NOT_AVAILABLE, ZoneSurvey
from tpuwizard.session.decision import ZoneAnswer
from tpuwizard.session.session import Session

BAD, BROKEN = "europe-west1-b", "us-east1-d"


@pytest.fixture
def session(monkeypatch) -> Session:
    """A practice session whose live survey found one zone refused and one failing otherwise."""
    s = Session(practice=True, project="practice-project")
    survey = ZoneSurvey(
        "live",
        {"us-central1-a": ["v5litepod-4"]},
        failures={BAD: NOT_AVAILABLE, BROKEN: "ServiceUnavailable: try again"},
    )
    monkeypatch.setattr(s, "zone_survey", lambda **_: ZoneAnswer(survey, practice=True))
    monkeypatch.setattr(zones_command, "open_session", lambda project, sandbox: s)
    return s


def zones(*args: str):
    result = CliRunner().invoke(main, ["zones", "--sandbox", *args])
    assert result.exit_code == 0, result.output
    return result


def test_a_refused_zone_is_said_once_per_project_and_another_failure_every_time(session):
    first = zones()
    assert first.stderr.count(f"Not searched: {BAD}.") == 1
    assert "may not use it, so no TPU can be made there" in first.stderr
    assert f"{BAD}: not surveyed" not in first.output
    assert f"{BROKEN}: not surveyed (ServiceUnavailable" in first.stdout
    again = zones()
    assert BAD not in again.output  # the same known refusal: not repeated
    assert f"{BROKEN}: not surveyed" in again.stdout  # not a lasting answer: said each time
    doc = json.loads(zones("--json").stdout)
    assert doc["failures"][BAD] == NOT_AVAILABLE  # the document still says it
    session.project = "other-project"  # another project has not heard it yet
    assert f"Not searched: {BAD}." in zones().stderr


def test_status_having_said_it_zones_does_not_say_it_again(session):
    from tpuwizard.commands.choosing import first_time_refused

    assert first_time_refused("practice-project", [BAD]) == ([BAD], True)  # as status said it
    assert BAD not in zones().output


def test_a_memory_that_cannot_be_written_says_it_once_a_run_and_claims_no_memory(home):
    """Issue 56: with a read-only home, `status` said "Said once" on every run. Where the
    memory cannot be written it is said at most once in a command run, never as remembered."""
    import os

    import click

    from tpuwizard.commands.choosing import first_time_refused, say_refused_once
    from tpuwizard.core import paths

    # The memory's temporary file cannot be made (a folder holds its name): the write fails.
    (paths.state_dir() / f"refused-zones-said.{os.getpid()}.tmp").mkdir(parents=True)
    assert first_time_refused("p", [BAD]) == ([BAD], False)

    @click.command()
    def twice() -> None:  # two surveys in one command run (both backends of `status`)
        say_refused_once("p", [BAD], "nothing can be there", "skipped_zones")
        say_refused_once("p", [BAD, BROKEN], "nothing can be there", "skipped_zones")

    for _run in range(2):  # each run says each zone once: nothing remembers it between runs
        said = " ".join(CliRunner().invoke(twice, []).stderr.split())
        assert said.count(f"Not searched: {BAD}.") == 1 and said.count(BROKEN) == 1, said
        assert "Said once" not in said and "Not noted as said" in said, said
        assert "the next command says it again; --json lists it under skipped_zones" in said


def test_an_unreadable_memory_is_not_claimed_either(home):
    from tpuwizard.commands.choosing import first_time_refused
    from tpuwizard.core import paths

    (paths.state_dir() / "refused-zones-said.json").mkdir(parents=True)  # no file: unreadable
    assert first_time_refused("p", [BAD, BROKEN]) == ([BAD, BROKEN], False)
