"""`tpuwizard fit`'s options, held as they are answered: which mistake is said first when several
are made at once (each one exit 2, before anything is read or compiled), and what a size, a
parameter count and a route's spelling each print. Pinned before the command was split
(issue 46), so the split keeps them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.test_receipt import tpu_receipt
from tpuwizard.cli import main

PROGRAM = str(Path(__file__).resolve().parents[2] / "examples" / "placement.py")
NO_SLICE = "No slice matches those filters: loosen --generation, --max-chips or --single-host."
EITHER_PROGRAM = "Give either --program FILE or a size (or --params), not both."
EITHER_SIZE = (
    "Give either a state size (tpuwizard fit 48GiB) or --params 7B [--recipe bf16-adam], "
    "not both and not neither."
)
JAX_ALONE = "--jax is for --program: the worker's JAX, said beside the one that compiles."
MEASURE_ALONE = "--measure is for --program: it runs your training step on the TPU at hand."
NODE_ALONE = "--node is for --program --measure: it measures your step on a kept node."
USABLE = "--usable must be a fraction above 0 and at most 1, such as 0.94; got {}."


def run(*args: str):
    return CliRunner().invoke(main, ["fit", *args])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # --jax first, then --measure, then --node, then a program given with a size.
        (["48", "--jax", "0.4.30", "--measure", "--node", "n"], JAX_ALONE),
        (["48", "--measure", "--node", "n"], MEASURE_ALONE),
        (["48", "--node", "n"], NODE_ALONE),
        (["--program", PROGRAM, "--node", "n"], NODE_ALONE),
        (["--program", PROGRAM, "48", "--usable", "2"], EITHER_PROGRAM),
        (["--program", PROGRAM, "--params", "7B"], EITHER_PROGRAM),
        # --program: the fraction, then the slices' names, then their filters, then none left.
        (["--program", PROGRAM, "--usable", "2", "--slices", "v9-1"], USABLE.format(2.0)),
        (["--program", PROGRAM, "--slices", "v9-1", "--generation", "v9"], "'v9-1' is not a TPU"),
        (["--program", PROGRAM, "--generation", "v9", "--max-chips", "0"], "Unknown generation"),
        (["--program", PROGRAM, "--single-host", "--slices", "v5litepod-16"], NO_SLICE),
        # a size: given once, then the recipe, then the count, then the fraction, the slices.
        (["48", "--params", "7B"], EITHER_SIZE),
        ([], EITHER_SIZE),
        (["--params", "seven", "--recipe", "sgd"], "Unknown recipe 'sgd'. Choose one of:"),
        (["--params", "seven", "--usable", "2"], "'seven'"),
        (["7B", "--usable", "2"], "Type instead: tpuwizard fit --params 7B --recipe adam-fp32"),
        (["48", "--usable", "0", "--slices", "v9-1"], USABLE.format(0.0)),
        (["48", "--slices", "v9-1", "--generation", "v9"], "'v9-1' is not a TPU"),
        (["48", "--single-host", "--slices", "v5litepod-16", "--receipt", "/none.json"], NO_SLICE),
        (["48", "--receipt", "/none.json"], "No receipt at /none.json"),
    ],
)
def test_the_first_mistake_is_said_alone_and_exits_2(args, said):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: ") and said in line


def test_with_a_program_the_receipt_is_read_before_no_slice_is_found(tmp_path):
    # The program's branch reads --receipt first and says so; a size's finds no slice first.
    receipt = tmp_path / "receipt.json"
    receipt.write_text(json.dumps(tpu_receipt()))
    asked = ["--single-host", "--slices", "v5litepod-16", "--receipt", str(receipt)]
    program = run("--program", PROGRAM, *asked)
    assert program.exit_code == 2, program.output
    assert program.stderr.splitlines() == [
        f"Usable HBM per v5e chip from {receipt}: 15.00 GiB (measured).",
        f"Error: {NO_SLICE}",
    ]
    size = run("48", *asked)
    assert size.exit_code == 2 and size.stderr.splitlines() == [f"Error: {NO_SLICE}"]


def test_on_demand_is_the_vm_route_by_its_other_name():
    asked = ["48", "--slices", "v5litepod-4,v6e-4"]
    vm, on_demand = run(*asked, "--route", "vm"), run(*asked, "--route", "on-demand")
    assert vm.exit_code == on_demand.exit_code == 0
    assert on_demand.stdout == vm.stdout and "$/h: vm (on-demand) price." in vm.stdout
    spot = run(*asked, "--route", "spot")
    assert spot.stdout != vm.stdout


def test_a_size_or_a_parameter_count_heads_the_table_with_its_recipe():
    size = run("48", "--slices", "v5litepod-4,v6e-4")
    params = run("--params", "7B", "--slices", "v5litepod-4,v6e-4")
    assert size.stdout.splitlines()[0] == "Training state 48.00 GiB"
    assert params.stdout.splitlines()[0] == (
        "Training state 78.23 GiB (bf16-adam: 12 bytes per parameter)"
    )
    for result in (size, params):
        assert result.exit_code == 0 and result.stderr == ""
        assert "Activations are not included" in result.stdout


@pytest.mark.parametrize(
    ("args", "state", "per_param"),
    [
        (["48"], 48.0, None),
        (["--params", "7B", "--recipe", "adam-fp32"], 104.308128, 16),
        (["51.5GB"], 47.963113, None),  # 51.5e9 bytes
    ],
)
def test_the_json_document_holds_the_state_the_slices_and_no_prices_until_read(
    args, state, per_param
):
    result = run(*args, "--json", "--slices", "v6e-4,v5litepod-4")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["state_gib", "bytes_per_param", "slices", "prices"]
    assert (doc["state_gib"], doc["bytes_per_param"]) == (state, per_param)
    assert [s["name"] for s in doc["slices"]] == ["v5litepod-4", "v6e-4"]  # cheapest first
    assert doc["prices"]["read"] is None and doc["prices"]["slices"] == {}
    assert "--refresh-prices" in doc["prices"]["why_not_read"]
