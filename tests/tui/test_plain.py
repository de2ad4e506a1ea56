"""Plain mode driven through prompt_toolkit's pipe input, with a real sandbox launch."""

import os
from pathlib import Path

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from tests.tui.pilot_helpers import sandbox_nodes
from tpuwizard.plain import PlainWizard


def run_plain(tmp_path, keys: str):
    lines: list[str] = []
    with create_pipe_input() as inp:
        inp.send_text(keys)
        code = PlainWizard(
            sandbox=True,
            run_dir=tmp_path / "runs",
            input=inp,
            output=DummyOutput(),
            echo=lines.append,
        ).run()
    return code, lines


def test_plain_walk_launches_verifies_and_tears_down(tmp_path):
    code, lines = run_plain(tmp_path, "\r" * 12)  # every default, then "yes, create"
    assert code == 0, "\n".join(lines)
    text = "\n".join(lines)
    assert "Recommended: vm" in text and "[practice]" in text
    assert "proves the run" in text and "Verified gone" in text
    assert list((tmp_path / "runs").glob("*/receipt.json"))
    assert sandbox_nodes(Path(os.environ["TPUWIZARD_HOME"])) == {}


def test_plain_notebook_route_writes_the_notebook(tmp_path):
    down = "\x1b[B"
    # budget, chips, length, billing: no -> the notebook is recommended; then Colab.
    code, lines = run_plain(tmp_path, "\r\r\r" + down + "\r" + "\r" + "\r")
    assert code == 0, "\n".join(lines)
    assert (tmp_path / "tpuwizard-colab.ipynb").is_file()
    assert any("receipt check" in line for line in lines)
