"""Plain mode's free route runs the script on Kaggle or Colab for the user, through the session
as the wizard does: driven through a pipe end to end in practice (kaggle's own client and its
stand-in; the stand-in colab program)."""

from __future__ import annotations

import os

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from tpuwizard.plain.walk import PlainWizard
from tpuwizard.session.free.kaggle import PRACTICE_ENV

pytestmark = pytest.mark.slow

DOWN = "\x1b[B"
MAIN = 'import jax\nprint("devices:", len(jax.devices()), jax.devices()[0].platform)\n'


def test_plain_runs_the_script_on_kaggle_and_ends_with_the_checked_summary(tmp_path, monkeypatch):
    for name in PRACTICE_ENV:  # practice points kaggle at the stand-in: put back after
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("TPUWIZARD_KAGGLE_POLL", "0.1")
    (tmp_path / "project").mkdir()
    script = tmp_path / "project" / "main.py"
    script.write_text(MAIN)
    # budget, chips, length, billing: no -> the notebook route is recommended and taken; then
    # the third choice, "Run it on Kaggle for me", and the script's path.
    keys = "\r\r\r" + DOWN + "\r" + "\r" + DOWN + DOWN + "\r" + str(script) + "\r"
    lines: list[str] = []
    with create_pipe_input() as inp:
        inp.send_text(keys)
        inp.close()  # a walk that asked for more would fail, not wait
        code = PlainWizard(
            sandbox=True,
            run_dir=tmp_path / "runs",
            input=inp,
            output=DummyOutput(),
            echo=lines.append,
        ).run()
    text = "\n".join(lines)
    assert code == 0, text
    assert "[practice] Pushing practice-user/tpuwizard-" in text
    assert "Kaggle: RUNNING" in text and "devices: 8 cpu" in text
    summary = text[text.index("Summary of practice-user/tpuwizard-") :]
    assert "(proves the run)" in summary
    [receipt] = (tmp_path / "runs").glob("*/receipt.json")
    assert (receipt.parent / "output.txt").is_file()
    assert not (tmp_path / "tpuwizard-kaggle.ipynb").exists()  # run, not written
    assert "HTTP_PROXY" not in os.environ  # the stand-in's proxy is put back after the run


def test_plain_runs_the_script_on_colab_and_stops_the_session(tmp_path, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("TPUWIZARD_COLAB_FAULTS", raising=False)
    (tmp_path / "project").mkdir()
    script = tmp_path / "project" / "main.py"
    script.write_text(MAIN)
    # As above, then the fourth choice, "Run it on Colab for me".
    keys = "\r\r\r" + DOWN + "\r" + "\r" + DOWN * 3 + "\r" + str(script) + "\r"
    lines: list[str] = []
    with create_pipe_input() as inp:
        inp.send_text(keys)
        inp.close()
        code = PlainWizard(
            sandbox=True,
            run_dir=tmp_path / "runs",
            input=inp,
            output=DummyOutput(),
            echo=lines.append,
        ).run()
    text = "\n".join(lines)
    assert code == 0, text
    assert "devices: 1 cpu" in text  # as launch --route colab prints it
    assert "colab sessions no longer lists it" in text
    [receipt] = (tmp_path / "runs").glob("*/receipt.json")
    assert (receipt.parent / "output.txt").is_file()
    from tpuwizard.session.free.colab import colab_ledger

    assert colab_ledger().held() == []  # the session stopped and its record closed
