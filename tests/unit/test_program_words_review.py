"""Issue 55: Review's fit line for a slice picked from the program's table says the program's
figures on it (its state and peak per device, of the usable), never the size box's default."""

from __future__ import annotations

import pytest

from tpuwizard.core.plan.program_result import SliceProgramFit
from tpuwizard.words.program_table import program_verdict

MIB = 2**20


def row(fits: bool | None, peak: int | None) -> SliceProgramFit:
    return SliceProgramFit(
        name="v5litepod-4",
        chips=4,
        devices=4,
        per_device_bytes={"arguments": 96 * MIB, "peak": peak},
        state_bytes_per_device=96 * MIB,
        usable_bytes_per_device=16128 * MIB,
        fits=fits,
        step_seconds=None,
        usd_per_1000_steps=None,
        note="",
    )


@pytest.mark.parametrize(
    ("fits", "peak", "said"),
    [
        (True, 200 * MIB, "Your program p.py: its state, 96.00 MiB per device; its step's peak "
         "200.00 MiB, fits on v5litepod-4 (15.75 GiB usable per device)."),
        (True, None, "its state, 96.00 MiB per device, fits on v5litepod-4"),
        (None, None, "96.00 MiB per device, may fit (not known) on v5litepod-4"),
        (False, 17000 * MIB, "Your program p.py needs 16.60 GiB per device on v5litepod-4, of "
         "15.75 GiB usable: it does not fit."),
    ],
)  # fmt: skip
def test_review_says_the_program_s_figures(fits, peak, said):
    assert said in program_verdict("p.py", row(fits, peak))
