"""The Colab route's events in words: practice said so, a stop not verified says what to run."""

from __future__ import annotations

from tpuwizard.core.launch.events.colab import ColabPlanned, ColabSessionReady, ColabSessionStopped
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
