"""What the TPU says in a script's or the verifier's output, read with its numbers and said in
plain words (issue 54): each text inside a whole traceback, as printed (tests/unit/data/)."""

from pathlib import Path

import pytest

from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.diagnose.tpu_errors import XLA_CODES, fit_answer, tpu_error_diagnosis
from tpuwizard.core.cloud.diagnose.tpu_text import (
    OomWhen,
    TpuError,
    TpuErrorWatch,
    TpuTrouble,
    read_tpu_error,
)
from tpuwizard.core.errors import ScriptFailed, VerifierTpuError
from tpuwizard.core.plan import catalog

DATA = Path(__file__).parent / "data" / "tpu_errors"
G = 2**30


def watched(name: str) -> TpuError:
    watch = TpuErrorWatch()
    for line in (DATA / name).read_text().splitlines():
        watch.see(line)
    assert watch.found is not None, name
    return watch.found


@pytest.mark.parametrize(
    ("fixture", "trouble", "code", "needed", "available", "when"),
    [
        ("v5e_chip_hbm.txt", TpuTrouble.HBM_OUT_OF_MEMORY, "E1000", 17.32, 15.75, "compile"),
        ("v5e_hbm_temporaries.txt", TpuTrouble.HBM_OUT_OF_MEMORY, "E1000", 15.89, 15.75, "compile"),
        ("v6e_used_of_hbm.txt", TpuTrouble.HBM_OUT_OF_MEMORY, "E1000", 41.76, 31.25, "compile"),
        ("v5p_used_of_hbm.txt", TpuTrouble.HBM_OUT_OF_MEMORY, "E1000", 120.49, 95.74, "compile"),
        ("v3_lwm.txt", TpuTrouble.HBM_OUT_OF_MEMORY, "E1000", 21.95, 15.48, "compile"),
        ("e0100_runtime.txt", TpuTrouble.HBM_OUT_OF_MEMORY, "E0100", 8 / 1024, 6.43 / 1024, "run"),
        ("e1200_coded.txt", TpuTrouble.XLA_ERROR, "E1200", None, None, None),
        ("v5e_lockfile.txt", TpuTrouble.HELD, None, None, None, None),
        ("vfio_busy.txt", TpuTrouble.HELD, None, None, None, None),
        ("pid_in_use.txt", TpuTrouble.HELD, None, None, None, None),
    ],
)
def test_each_chip_text_is_read_from_its_whole_traceback(
    fixture, trouble, code, needed, available, when
):
    found = watched(fixture)
    assert found.trouble is trouble and found.code == code
    # The line kept is the one the chip printed, whole.
    assert found.line in (DATA / fixture).read_text()
    if needed is not None:
        assert found.needed_bytes == pytest.approx(needed * G, rel=1e-3)
        assert found.available_bytes == pytest.approx(available * G, rel=1e-3)
        assert found.when is OomWhen(when)


def test_the_holder_is_named_where_the_text_names_it():
    assert watched("pid_in_use.txt").holder_pid == 2718466
    assert watched("vfio_busy.txt").device_file == "/dev/vfio/0"
    busy = read_tpu_error("open(/dev/accel0): Device or resource busy")
    assert busy is not None and busy.device_file == "/dev/accel0"
    lockfile = watched("v5e_lockfile.txt")
    assert lockfile.holder_pid is None and lockfile.device_file is None
    # The chip's first line of it is kept, whole, with libtpu's own advice.
    assert lockfile.line.startswith("jax.errors.JaxRuntimeError: ABORTED: Internal error when")
    assert lockfile.line.endswith('Run "$ sudo rm /tmp/libtpu_lockfile".')


@pytest.mark.parametrize(
    "line",
    [
        # An absl log line's date is not an XLA code.
        "E1206 10:06:37.543846    2426 coredump_hook.cc:251] RAW: Remote crash gathering "
        "disabled for SIGTERM.",
        "ValueError: shapes (3,) and (4,) not aligned",
        "Used 3 of 4 GPUs",
        "ModuleNotFoundError: No module named 'optax'",
    ],
)
def test_other_lines_are_not_the_tpus(line):
    assert read_tpu_error(line) is None


def test_sparsecore_and_tensorcore_usage_add_up_to_the_need():
    found = read_tpu_error(
        "XlaRuntimeError: RESOURCE_EXHAUSTED: TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm "
        "usage 174.10G, exceeding available bytes: 95.74G"
    )
    assert found is not None and found.code == "E1000"
    assert found.needed_bytes == pytest.approx((34.82 + 174.10) * G, rel=1e-4)


def test_a_code_on_one_line_and_the_numbers_on_the_next_are_kept_together():
    watch = TpuErrorWatch()
    watch.see("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: E1000: CompileTimeHbmOom:")
    watch.see("Ran out of memory in memory space hbm. Used 16.94G of 15.75G hbm.")
    assert watch.found is not None and watch.found.trouble is TpuTrouble.HBM_OUT_OF_MEMORY
    assert watch.found.code == "E1000" and watch.found.needed_bytes == int(16.94 * G)


@pytest.mark.parametrize(
    ("fixture", "accelerator", "said"),
    [
        # One v5e device's need sharded: 15.89 GiB fits 4 chips (not 1); over all 4, 63.56 GiB:
        # 8 chips hold it.
        (
            "v5e_hbm_temporaries.txt",
            "v5litepod-4",
            ("fits v5litepod-4;", "63.56 GiB", "v5litepod-8"),
        ),
        # The chip's own: 17.32 GiB on v5litepod-1 (one device): 4 chips hold it either way.
        (
            "v5e_chip_hbm.txt",
            "v5litepod-1",
            ("17.32 GiB", "fits v5litepod-4;", "v5litepod-4 holds"),
        ),
        ("v6e_used_of_hbm.txt", "v6e-1", ("41.76 GiB", "v6e-4", "31.25 GiB usable")),
        ("v5p_used_of_hbm.txt", "v5p-8", ("120.49 GiB", "v5p-8", "481.96 GiB", "v5p-16")),
        # v3: per TensorCore; 8 devices on v3-8.
        ("v3_lwm.txt", "v3-8", ("21.95 GiB", "v3-8", "all 8 devices", "175.60 GiB", "v3-32")),
    ],
)
def test_hbm_out_of_memory_says_the_need_the_limit_and_fits_answer(fixture, accelerator, said):
    slice_ = catalog.parse_accelerator(accelerator)
    d = tpu_error_diagnosis(watched(fixture), slice_)
    assert d.kind == "tpu_out_of_memory" and d.title == "The TPU ran out of memory (HBM)"
    assert "That step did not run" in d.explanation and "E1000" in d.explanation
    steps = " ".join(map(str, d.next_steps))
    answer = fit_answer(watched(fixture).needed_bytes or 0, slice_)
    assert answer in d.next_steps
    for words in said:
        assert words in answer, (words, answer)
    for remedy in ("donate_argnums", "jax.checkpoint", "smaller batch", "--measure"):
        assert remedy in steps
    assert "Then launch again." in steps and watched(fixture).line in steps


def test_a_run_time_allocation_says_what_was_free_not_fits_answer():
    d = tpu_error_diagnosis(watched("e0100_runtime.txt"), catalog.parse_accelerator("v5litepod-1"))
    assert "asked for 0.01 GiB" in d.explanation and "was free then" in d.explanation
    assert "E0100" in d.explanation and "error_0100" in d.explanation
    assert not any(str(s).startswith("fit's answer") for s in d.next_steps)


@pytest.mark.parametrize("kept", [False, True])
def test_a_held_tpu_is_not_the_scripts_fault_and_says_what_to_do_on_this_route(kept):
    d = tpu_error_diagnosis(watched("pid_in_use.txt"), None, kept=kept)
    assert d.kind == "tpu_held" and "process 2718466" in d.explanation
    assert "libtpu_lockfile" not in " ".join(map(str, d.next_steps))  # a named holder runs
    assert "not a fault in your code" in d.explanation
    steps = " ".join(map(str, d.next_steps))
    assert ("tpuwizard run again" in steps) is kept
    assert ("Launch again for a fresh node" in steps) is not kept


@pytest.mark.parametrize("code", sorted(XLA_CODES))
def test_every_documented_code_is_said_with_its_meaning_and_page(code):
    found = read_tpu_error(f"jax.errors.JaxRuntimeError: INTERNAL: {code}: SomeName: details")
    assert found is not None and found.code == code
    if found.trouble is TpuTrouble.XLA_ERROR:
        d = tpu_error_diagnosis(found, None)
        assert XLA_CODES[code][0] in d.explanation
        assert f"openxla.org/xla/errors/error_{code[1:]}" in d.explanation


def test_a_code_without_a_page_read_here_is_named_with_its_page_only():
    found = read_tpu_error("See https://openxla.org/xla/errors/error_0301 for more details.")
    assert found is not None
    d = tpu_error_diagnosis(found, None)
    assert d.title == "XLA error E0301" and "error_0301" in d.explanation


@pytest.mark.parametrize(
    ("err", "kind"),
    [
        (
            ScriptFailed(1, tpu_error=read_tpu_error("Used 16.94G of 15.75G hbm")),
            "tpu_out_of_memory",
        ),
        (ScriptFailed(1), "script_failed"),
        # A missing package is said first: the script never reached the TPU.
        (
            ScriptFailed(1, "optax", "optax", read_tpu_error("Used 16.94G of 15.75G hbm")),
            "missing_package",
        ),
        (VerifierTpuError(0, watched("v5e_lockfile.txt")), "tpu_held"),
    ],
)
def test_the_launchs_diagnosis_reads_what_the_tpu_said_first(err, kind):
    ctx = Context(slice=catalog.parse_accelerator("v5litepod-1"))
    d = diagnose(err, ctx)
    assert d.kind == kind
    if isinstance(err, VerifierTpuError):
        assert d.explanation.startswith("The verifier on worker 0 could not start JAX")
