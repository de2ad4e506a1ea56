"""Usable HBM per generation (issue 45): a compiled step fits when its peak is within its
generation's figure, one the compiler refuses does not, and the limit the refusal names is said
beside the catalog's; export's larger-slice advice and `fit --program --receipt` use the same."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.conftest import REPO
from tests.unit.test_receipt import tpu_receipt
from tpuwizard.cli import main
from tpuwizard.core.handover.larger import larger_slice, larger_slice_text
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.program_result import compiler_limit_bytes, summarise

V5E_1 = catalog.parse_accelerator("v5litepod-1")


def _compiled(peak: int) -> dict:
    return {
        "devices": 1,
        "state_bytes": peak // 2,
        "arguments": peak // 2,
        "outputs": 0,
        "temporaries": peak - peak // 2,
        "aliased": 0,
        "code": 0,
        "optimal_seconds": 0.01,
    }


def test_a_compiled_peak_between_16_15_and_16_6_gb_fits_v5litepod_1():
    # Both ran on a real v5e chip (issue 45); nominal x 0.94 (16.15e9 B) had said no to both.
    for peak in (int(16.15e9), int(16.6e9)):
        row = summarise(V5E_1, _compiled(peak), "tpu-compile", None, "vm")
        assert row.fits is True, peak
        assert row.usable_bytes_per_device == 16_909_336_064
        assert row.extra["usable_from"] == "catalog"
    over = summarise(V5E_1, _compiled(16_909_336_065), "tpu-compile", None, "vm")
    assert over.fits is False


def test_a_step_the_compiler_refuses_does_not_fit_and_its_limit_is_said():
    message = (
        "RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory required for HLO "
        "temporaries (16.00G) exceeds available HBM (15.75G)."
    )
    row = summarise(V5E_1, {"devices": 1, "out_of_memory": message}, "tpu-compile", None, "vm")
    assert row.fits is False
    assert row.extra["compiler_limit_bytes"] == int(15.75 * 2**30)
    assert "the compiler's limit 15.75 GiB per device; usable here 15.75 GiB" in row.note


def test_the_limit_of_either_refusal_wording_is_read():
    assert compiler_limit_bytes("... exceeds available HBM (15.75G).") == int(15.75 * 2**30)
    used = "Ran out of memory in memory space hbm. Used 215.17G of 31.25G hbm. Exceeded ..."
    assert compiler_limit_bytes(used) == int(31.25 * 2**30)
    assert compiler_limit_bytes("something else") is None


def test_v6e_and_v4_rows_use_their_sourced_figures():
    v6e_4 = catalog.parse_accelerator("v6e-4")
    v6e = summarise(v6e_4, {**_compiled(1), "devices": 4}, "tpu-compile", None, "vm")
    assert v6e.usable_bytes_per_device == int(31.25 * 2**30)
    # libtpu's compile-only v4 has a device per TensorCore: half a chip's 30.75 GiB each.
    v4 = summarise(
        catalog.parse_accelerator("v4-8"), {**_compiled(1), "devices": 8}, "tpu-compile", None, "vm"
    )
    assert v4.usable_bytes_per_device == int(30.75 * 2**30 / 2)
    # --usable overrides the catalog for every generation.
    said = summarise(v6e_4, {**_compiled(1), "devices": 4}, "tpu-compile", 0.06, "vm")
    assert said.usable_bytes_per_device == int(32 * 2**30 * 0.94)
    assert said.extra["usable_from"] == "usable"


def test_the_larger_slice_advice_uses_the_catalogs_figure():
    sizes = [larger_slice(15.5), larger_slice(15.9)]
    assert [s and s.name for s in sizes] == ["v5litepod-1", "v6e-1"]  # x 0.94 had said v6e-1
    assert "is v5litepod-1" in larger_slice_text(15.5, None, "vm")


def test_a_receipt_gives_program_fit_its_usable_figure(tmp_path):
    receipt = tmp_path / "receipt.json"
    receipt.write_text(json.dumps(tpu_receipt()))  # a v5e receipt whose bytes_limit is 15 GiB
    args = [
        "fit",
        "--program",
        str(REPO / "examples" / "placement.py"),
        "--method",
        "shapes-only",
        "--slices",
        "v5litepod-1,v6e-1",
        "--json",
    ]
    result = CliRunner().invoke(main, [*args, "--receipt", str(receipt)])
    assert result.exit_code == 0, result.output
    rows = {s["name"]: s for s in json.loads(result.stdout)["slices"]}
    assert rows["v5litepod-1"]["usable_bytes_per_device"] == 15 * 2**30
    assert rows["v5litepod-1"]["usable_from"] == "receipt"
    assert rows["v6e-1"]["usable_bytes_per_device"] == int(31.25 * 2**30)  # its own figure
    assert "Usable HBM per v5e chip" in result.stderr


def test_fit_json_says_where_each_usable_figure_comes_from():
    slices = "v5litepod-1,v5p-8,tpu7x-8"
    result = CliRunner().invoke(main, ["fit", "1", "--json", "--slices", slices])
    rows = {s["name"]: s for s in json.loads(result.stdout)["slices"]}
    assert rows["v5litepod-1"]["usable_from"] == "catalog"
    assert rows["v5p-8"]["usable_from"] == "catalog"  # the compiler's limit, sourced (issue 54)
    assert rows["tpu7x-8"]["usable_from"] == "unconfirmed"  # the one generation without one
