"""The Colab route's events in words: practice said so, a stop not verified says what to run."""

from __future__ import annotations

from tpuwizard.core.launch.events.colab import ColabPlanned, ColabSessionReady, ColabSessionStopped
from tpuwizard.core.launch.events.kaggle import KernelPlanned
from tpuwizard.words.event_text import describe


def test_colab_events_in_words():
    planned = ColabPlanned("r1", "tpuwizard-r1", "v5e1", 5, "cpu", True, "runs/r1")
    [line] = describe(planned)
    assert line.startswith("[practice] Asking the Colab stand-in") and "5 min" in line
    real = ColabPlanned("r1", "tpuwizard-r1", "v5e1", 60, "tpu", False, "runs/r1")
    assert "through Google's colab CLI" in describe(real)[0]
    assert "(V5E1)" in describe(ColabSessionReady("tpuwizard-r1", "tpu-s-1", "V5E1"))[0]
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
