"""Colab's `usage` (issue 47 item 3): the installed CLI's version read and what it lacks said;
where it has `usage` (0.8.0), the account's balance and rate before the run and its active
assignments before and after, the whole account's; the FAQ's policy said before the run. The
stand-in plays 0.7.5 and 0.8.0."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.integration.colab_helpers import (
    calls,
    launch,
    make_project,
    named,
    practice_home,
    user_env,
)
from tpuwizard.core.colab.program import ColabProgram, Usage, lacking


def stand_in(tmp_path: Path, version: str, faults: str = "") -> ColabProgram:
    env = {
        "TPUWIZARD_COLAB_HOME": str(tmp_path / "colab"),
        "TPUWIZARD_COLAB_VERSION": version,
        "TPUWIZARD_COLAB_FAULTS": faults,
    }
    return ColabProgram([sys.executable, "-m", "tpuwizard.sandbox.colab.cli"], env)


def test_the_version_and_usage_are_read_as_each_version_prints_them(tmp_path):
    old = stand_in(tmp_path, "0.7.5")
    assert old.version() == "0.7.5" and lacking("0.7.5") == ("usage",)
    assert old.usage() is None  # Click's "No such command", exit 2: read as lacking
    new = stand_in(tmp_path, "0.8.0", "cu_balance=298.53;cu_rate=0.07;other_assignments=2")
    assert new.version() == "0.8.0" and lacking("0.8.0") == ()
    assert new.usage() == Usage(298.53, 0.07, 2)
    new.new("s1", "v5e1")
    assert new.usage() == Usage(298.53, 0.07, 3)  # the account's count: the session is in it


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.7.5", "0.8.0"])
def test_a_run_says_the_cli_version_its_usage_and_the_policy(tmp_path, version):
    project = make_project(tmp_path)
    env = user_env(tmp_path, "cu_balance=12.5;cu_rate=0.07;other_assignments=1")
    env["TPUWIZARD_COLAB_VERSION"] = version
    code, events, err = launch(project, env, "--script", "main.py", "--max-run", "5")
    assert code == 0, err
    [account] = named(events, "colab_account")
    assert account["version"] == version
    assert "research.google.com/colaboratory/faq.html" in err
    assert "may be terminated at any time without warning" in err
    made = [c[0] for c in calls(practice_home(tmp_path))]
    if version == "0.7.5":
        assert account["lacks"] == ["usage"] and account["balance"] is None
        assert "usage" not in made and not named(events, "colab_assignments_after")
        # Issue 55.7: no colab program here, so the version is said as the stand-in's.
        said = " ".join(err.split())
        assert f"The practice stand-in of colab CLI {version} (PyPI's) has no usage" in said
        assert "lacks usage" not in said
    else:
        assert account["lacks"] == [] and account["balance"] == 12.5
        assert account["rate_hourly"] == 0.07 and account["assignments"] == 1
        [after] = named(events, "colab_assignments_after")
        assert after["before"] == 1 and after["after"] == 1  # the other session stays
        assert made.index("usage") < made.index("new") and made[-1] == "usage"
        assert "the practice account has 12.50 compute units, spending 0.07/hr" in err
        assert "counts every session of the account" in err
    [stopped] = named(events, "colab_session_stopped")
    assert stopped["verified"]
