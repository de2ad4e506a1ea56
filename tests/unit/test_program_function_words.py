"""A program without the function `fit --program` calls: the core's words name no command-line
flag (the wizard's "From my program..." has none to offer), and the field's example is not a
file a course folder lacks; `fit` itself still adds its --function
(tests/integration/test_program_fit_errors.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpuwizard.core.plan import fit, program_fit
from tpuwizard.core.plan.program_result import ProgramInputError


def test_a_program_without_its_function_is_told_without_a_flag(tmp_path):
    program = tmp_path / "train.py"
    program.write_text("def plan(mesh):\n    pass\n")
    planner = program_fit.ProgramPlanner(str(program), fit.select_slices(single_host=True)[:1])
    with pytest.raises(ProgramInputError) as raised:
        list(planner.results())
    assert raised.value.kind == "no-function"
    words = str(raised.value)
    assert (
        "defines no function tpuwizard_plan(mesh)" in words
        and "Functions it defines: plan" in words
    )
    assert "--" not in words


def test_the_wizard_s_program_field_suggests_no_file_of_this_repository():
    # A beginner's folder has no examples/: the example is named as tpuwizard's, not as a path.
    source = Path("tpuwizard/tui/widgets/program_fit.py").read_text()
    assert "examples/" not in source and "examples folder of tpuwizard's" in source
