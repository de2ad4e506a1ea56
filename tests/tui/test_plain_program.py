"""Plain mode's capacity question offers a program file too, and compiles it for each slice."""

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from tests.conftest import REPO
from tpuwizard.core.plan import fit, program_fit
from tpuwizard.plain.walk import PlainWizard

DOWN = "\x1b[B"


@pytest.mark.slow
@pytest.mark.skipif(not program_fit.libtpu_installed(), reason="libtpu is not installed")
def test_a_program_file_is_compiled_and_a_fitting_slice_offered():
    lines: list[str] = []
    program = str(REPO / "examples" / "placement.py")
    with create_pipe_input() as inp:
        # "my program" is the third answer; then its file, then the offered slice.
        inp.send_text(DOWN * 2 + "\r" + program + "\r" + "\r")
        chosen = PlainWizard(
            sandbox=True, input=inp, output=DummyOutput(), echo=lines.append
        ).choose_slice()
    text = "\n".join(lines)
    assert f"Compiling {program}" in text
    assert "Compiled with this computer's JAX" in text  # which JAX compiled, said first
    single_host = [s.name for s in fit.select_slices(single_host=True)]
    assert all(any(line.strip().startswith(n + " ") for line in lines) for n in single_host)
    assert chosen == single_host[0]  # the tiny step fits everywhere: the first row is offered
