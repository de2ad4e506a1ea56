"""`fit --program --measure`: which slice the devices at hand are, bad input where it cannot
measure, and how a run is said beside its prediction (issue 45). The run itself on CPU devices
is tests/integration/test_program_measure.py; on a real TPU, tests/tpu/."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from tpuwizard.cli import main
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.program_at_hand import (
    CPU_LABEL,
    Measurement,
    _matched,
    slice_at_hand,
    with_measurement,
)
from tpuwizard.core.plan.program_result import summarise
from tpuwizard.words.program_table import measured_words, render_program_fit

PLACEMENT = str(REPO / "examples" / "placement.py")


@pytest.mark.parametrize(
    ("kind", "devices", "name"),
    [
        ("TPU v5 lite", 1, "v5litepod-1"),
        ("TPU v5 lite", 4, "v5litepod-4"),
        ("TPU v6 lite", 8, "v6e-8"),
        ("TPU v4", 4, "v4-8"),  # megacore: a device per chip, the name counts TensorCores
        ("TPU v2", 8, "v2-8"),  # a device per TensorCore, two per chip
    ],
)
def test_the_devices_at_hand_are_a_catalog_slice(kind, devices, name):
    found = slice_at_hand({"device_kind": kind, "devices": devices})
    assert found is not None and found.name == name


def test_devices_that_are_no_slice_are_none():
    assert slice_at_hand({"device_kind": "TPU v5 lite", "devices": 2}) is None  # no v5litepod-2
    assert slice_at_hand({"device_kind": "TPU v9", "devices": 1}) is None


def test_slices_that_leave_out_the_tpu_at_hand_are_bad_input():
    seen = {"platform": "tpu", "device_kind": "TPU v5 lite", "devices": 1}
    asked = [catalog.parse_accelerator("v6e-1"), catalog.parse_accelerator("v5litepod-4")]
    with pytest.raises(BadInput, match="add v5litepod-1 to --slices"):
        _matched(seen, asked, allow_cpu=False)
    matched = _matched(seen, [catalog.parse_accelerator("v5litepod-1"), *asked], False)
    assert matched.slice_name == "v5litepod-1" and matched.on_tpu
    cpu = {"platform": "cpu", "device_kind": "cpu", "devices": 4}
    with pytest.raises(BadInput, match="sees cpu devices only"):
        _matched(cpu, asked, allow_cpu=False)
    assert _matched(cpu, asked, allow_cpu=True).label == CPU_LABEL


def test_measure_is_for_program():
    result = CliRunner().invoke(main, ["fit", "48", "--measure"])
    assert result.exit_code == 2 and "--measure is for --program" in result.stderr


def test_without_a_tpu_measure_says_what_it_needs():
    result = CliRunner().invoke(
        main,
        [
            "fit",
            "--program",
            PLACEMENT,
            "--measure",
            "--slices",
            "v5litepod-1",
            "--method",
            "shapes-only",
        ],
    )
    assert result.exit_code == 2, result.output
    said = " ".join(result.stderr.split())
    assert "--measure runs your step on a TPU at hand" in said
    assert "no TPU" in said or "libtpu is not installed" in said
    assert "leave out --measure" in said


def _row(name: str = "v5litepod-1"):
    record = {
        "devices": 1,
        "state_bytes": 100,
        "arguments": 2**30,
        "outputs": 2**29,
        "temporaries": 2**29,
        "aliased": 0,
        "code": 0,
        "optimal_seconds": 0.001,
    }
    return summarise(catalog.parse_accelerator(name), record, "tpu-compile", None, "vm")


def test_a_tpu_run_is_priced_at_its_measured_time_beside_the_prediction(capsys):
    run = Measurement(
        "v5litepod-1",
        "tpu",
        "TPU v5 lite",
        1,
        {
            "peak_bytes": 2**31 - 2**28,
            "peak_bytes_in_use": 2**30,
            "peak_bytes_reserved": 2**30 - 2**28,
            "step_seconds": 0.0036,
            "steps_timed": 5,
            "compile_seconds": 1.0,
            "donated": False,
        },
    )
    row = with_measurement(_row(), catalog.parse_accelerator("v5litepod-1"), run, "vm")
    m = row.measured
    assert m["fits"] is True and m["on"] == "tpu"
    assert m["usd_per_1000_steps"] == pytest.approx(1.20 * 0.0036 * 1000 / 3600, rel=1e-3)
    assert m["step_measured_over_predicted"] == 3.6
    assert m["peak_predicted_over_measured"] == pytest.approx(2**31 / (2**31 - 2**28), abs=1e-3)
    assert row.step_seconds == 0.001 and row.fits is True  # the prediction stays as it was
    render_program_fit("p.py", "tpu-compile", [row, _row("v6e-1")], "vm", [])
    out = " ".join(capsys.readouterr().out.split())
    assert "v5litepod-1, measured on the TPU at hand (TPU v5 lite x1)" in out
    assert "a step took 3.6ms (median of 5) against at least 1ms predicted" in out
    assert "A 'ran' row is measured" in out and "rows without one are predictions" in out
    assert row.to_dict()["measured"]["label"] == run.label


def test_a_cpu_run_is_labelled_practice_and_never_priced():
    run = Measurement("v5litepod-1", "cpu", "cpu", 1, {"step_seconds": 0.2, "steps_timed": 3})
    row = with_measurement(_row(), catalog.parse_accelerator("v5litepod-1"), run, "vm")
    assert row.measured["label"] == "CPU (practice), not a TPU"
    assert row.measured["usd_per_1000_steps"] is None
    assert "peak_predicted_over_measured" not in row.measured
    assert "step_measured_over_predicted" not in row.measured
    words = measured_words(row)
    assert words.startswith("v5litepod-1, CPU (practice), not a TPU:")
    assert words.endswith("the prediction above stands.")


@pytest.mark.parametrize(
    ("when", "words"),
    [
        ("compile", "the compiler refused it for lack of HBM"),
        ("run", "it ran out of memory while running"),
    ],
)
def test_a_step_that_does_not_fit_is_said_as_fit_says_it(when, words):
    record = {"out_of_memory": "RESOURCE_EXHAUSTED: Out of memory", "when": when}
    run = Measurement("v5litepod-1", "tpu", "TPU v5 lite", 1, record)
    row = with_measurement(_row(), catalog.parse_accelerator("v5litepod-1"), run, "vm")
    assert row.measured["fits"] is False
    assert measured_words(row) == (
        "v5litepod-1, measured on the TPU at hand (TPU v5 lite x1): does not fit: "
        f"{words}: RESOURCE_EXHAUSTED: Out of memory"
    )


def _shapes_row(name: str):
    record = {"devices": 1, "state_bytes": 100}
    return summarise(catalog.parse_accelerator(name), record, "shapes-only", None, "vm")


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        # Issue 55: without libtpu every slice has the same note: said once, not 15 times.
        (["v5litepod-1", "v6e-1"], ["Every slice: state only, from the shapes"]),
        # A slice's own words beside it stay its own (a compile-only topology's devices).
        (
            ["v5litepod-1", "v5litepod-4"],
            ["Every slice: state only, from the shapes", "v5litepod-4: libtpu's compile-only"],
        ),
        (["v5litepod-1"], ["v5litepod-1: state only, from the shapes"]),
    ],
)
def test_a_note_every_slice_shares_is_said_once(rows, said):
    from tpuwizard.core.plan.program_advice import slice_notes

    notes = slice_notes([_shapes_row(n) for n in rows])
    assert [n[: len(s)] for n, s in zip(notes, said, strict=True)] == said


@pytest.mark.parametrize(
    ("method", "said"),
    [
        ("shapes-only", "Counting p.py's state from its shapes for 15 slice(s)..."),
        ("tpu-compile", "Compiling p.py for 15 slice(s) (tpu-compile)..."),
    ],
)
def test_nothing_is_said_to_compile_without_a_compiler(method, said):
    from tpuwizard.core.plan.program_advice import working_words

    assert working_words("p.py", 15, method) == said


@pytest.mark.parametrize(
    ("row", "tail"),
    [
        (_row, "; the prediction above stands."),
        (_shapes_row, "; a CPU's run says nothing of a TPU's memory or step time."),
    ],
)
def test_a_cpu_run_stands_beside_a_prediction_only_where_one_was_made(row, tail):
    run = Measurement("v5litepod-1", "cpu", "cpu", 1, {"step_seconds": 0.2, "steps_timed": 3})
    measured = with_measurement(
        row("v5litepod-1"), catalog.parse_accelerator("v5litepod-1"), run, "vm"
    )
    assert measured_words(measured).endswith(tail)


def test_measure_without_a_tpu_names_the_kept_node_way():
    from tpuwizard.core.plan.program_at_hand import NEEDS_TPU

    words = NEEDS_TPU.format(what="JAX sees cpu devices only")
    assert "--measure --node NAME" in words and "compiler's prediction" not in words
