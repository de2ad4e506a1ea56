"""The Colab route's events in words: practice said so, a stop not verified says what to run."""

from __future__ import annotations

import re

import pytest

from tpuwizard.core.launch.events.colab import (
    ColabAccount,
    ColabPlanned,
    ColabSessionReady,
    ColabSessionStopped,
)
from tpuwizard.core.launch.events.kaggle import KernelPlanned
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.words.colab_text import colab_chip
from tpuwizard.words.event_text import describe
from tpuwizard.words.summary_text import summary_lines


def test_colab_events_in_words():
    planned = ColabPlanned("r1", "tpuwizard-r1", "v5e1", 5, "cpu", True, "runs/r1")
    [line] = describe(planned)
    assert line.startswith("[practice] Asking the Colab stand-in") and "5 min" in line
    real = ColabPlanned("r1", "tpuwizard-r1", "v5e1", 60, "tpu", False, "runs/r1")
    assert "through Google's colab CLI" in describe(real)[0]
    assert "(TPU v5litepod-1)" in describe(ColabSessionReady("tpuwizard-r1", "tpu-s-1", "V5E1"))[0]
    stopped = describe(ColabSessionStopped("tpuwizard-r1", True))
    assert stopped == ["Stopped tpuwizard-r1: colab sessions no longer lists it."]
    [left] = describe(ColabSessionStopped("tpuwizard-r1", False, "colab stop failed: x"))
    assert "NOT verified stopped: colab stop failed: x" in left
    assert "`tpuwizard teardown tpuwizard-r1`" in left


def test_practice_says_why_first_and_how_to_make_it_real():
    why = "Google's colab program is not installed here and there is no ~/token.json"
    planned = ColabPlanned(
        "r1", "tpuwizard-r1", "v5e1", 5, "cpu", True, "runs/r1", practice_why=why
    )
    first, second = describe(planned)
    assert first.startswith(f"[practice] Using the local Colab stand-in because {why}")
    assert "pip install google-colab-cli" in first and second.startswith("[practice] Asking")
    asked = ColabPlanned(
        "r1", "tpuwizard-r1", "v5e1", 5, "cpu", True, "runs/r1", practice_why="asked"
    )
    assert "pip install" not in describe(asked)[0]


def test_a_kaggle_practice_run_without_credentials_says_why_first():
    why = "no Kaggle credentials were found (KAGGLE_API_TOKEN; ~/.kaggle/access_token)"
    planned = KernelPlanned(
        "r1", "u/tpuwizard-r1", "TpuV5E8", 5, "cpu", True, "r", 1.0, practice_why=why
    )
    first, second = describe(planned)
    assert first.startswith(f"[practice] Using the local Kaggle stand-in because {why}")
    assert "https://www.kaggle.com/settings/api" in first and second.startswith("[practice] Push")


CHIP_NAMES = re.compile(r"\bv5e-?1\b|\bv5litepod-1\b", re.IGNORECASE)


@pytest.mark.parametrize("practice", [True, False])
def test_the_colab_route_names_its_chip_one_way_and_colabs_label_once(practice):
    """Newcomer round 6, D4: "TPU v5e-1", "v5e1", "V5E1" and "v5e1 in Colab" on one route. Its
    lines (the plan, the ready session as colab lists it, the summary, the Notebook step's
    choice) name the accelerator type, from colab_chip, with Colab's own label once."""
    from tpuwizard.tui.screens.notebook import PLATFORMS

    planned = ColabPlanned("r1", "tpuwizard-r1", "v5e1", 5, "cpu", practice, "runs/r1")
    summary = RunSummary()
    summary.apply(planned)
    lines = [
        *describe(planned),
        *describe(ColabSessionReady("tpuwizard-r1", "tpu-s-1", "V5E1")),
        *summary_lines(summary, "wizard"),
        PLATFORMS["colab"],
    ]
    said = "\n".join(lines)
    names = CHIP_NAMES.findall(said)
    assert sorted(set(names)) == ["v5e1", "v5litepod-1"] and names.count("v5e1") == 1, names
    assert said.count(colab_chip("v5e1", with_label=True)) == 1
    assert said.count(colab_chip("v5e1")) == 3, said  # the plan's, the ready line's, the step's


def test_a_session_colab_lists_with_other_hardware_says_what_it_gave():
    [other] = describe(ColabSessionReady("tpuwizard-r1", "tpu-s-1", "NONE"))
    assert "colab sessions lists its hardware as NONE, not the v5e1 asked for" in other
    [unsaid] = describe(ColabSessionReady("tpuwizard-r1", "tpu-s-1", ""))
    assert "is ready:" in unsaid


@pytest.mark.parametrize(
    ("account", "said", "unsaid"),
    [
        (
            ColabAccount("0.7.5", ("usage",), practice=True),
            "The practice stand-in of colab CLI 0.7.5 (PyPI's) has no usage command",
            "lacks",
        ),
        (
            ColabAccount("0.7.5", ("usage",)),
            "colab CLI 0.7.5 lacks usage (google-colab-cli 0.8.0 has it)",
            "stand-in",
        ),
        (
            ColabAccount("0.8.0", (), 3.0, 0.1, 1, practice=True),
            "The practice stand-in of colab CLI 0.8.0: the practice account has 3.00",
            "your Colab account",
        ),
        (
            ColabAccount("0.8.0", (), 3.0, 0.1, 1),
            "colab CLI 0.8.0: your Colab account has 3.00 compute units",
            "practice",
        ),
    ],
)
def test_the_cli_version_is_the_stand_ins_in_practice(
    account: ColabAccount, said: str, unsaid: str
) -> None:
    """Issue 55.7: with no colab program here, "colab CLI 0.7.5 lacks usage" named a program
    that is not installed; practice says the version is the stand-in's."""
    words = " ".join(" ".join(describe(account)).split())
    assert said in words and unsaid not in words
