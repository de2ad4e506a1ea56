"""The verifier's pure parts: GPU platform resolution, the peak table, trace file listing."""

import pytest
from tpuwizard_verify.tpu_verify import (
    PEAK_BF16_TFLOPS_PER_DEVICE,
    gpu_runtimes,
    jax_platform_for,
    trace_files,
)

from tpuwizard.core.plan import catalog


@pytest.mark.parametrize(
    ("runtimes", "platform"),
    [({"cuda"}, "cuda"), ({"rocm"}, "rocm"), ({"cuda", "rocm"}, "cuda"), (set(), "gpu")],
)
def test_gpu_resolves_to_the_runtime_present(runtimes, platform):
    assert jax_platform_for("gpu", runtimes) == platform


@pytest.mark.parametrize("expect", ["cpu", "tpu"])
def test_cpu_and_tpu_are_never_rewritten(expect):
    assert jax_platform_for(expect, {"cuda", "rocm"}) == expect


def test_gpu_runtimes_come_from_plugins_or_device_files():
    nothing = lambda path: False  # noqa: E731
    assert gpu_runtimes(["jax-cuda12-plugin", "jax-cuda12-pjrt"], nothing) == {"cuda"}
    assert gpu_runtimes(["jax_rocm60_plugin"], nothing) == {"rocm"}
    assert gpu_runtimes(["jax", "jaxlib", "numpy"], nothing) == set()
    # A jaxlib with CUDA built in has no plugin: the NVIDIA device file tells.
    assert gpu_runtimes(["jaxlib"], lambda path: path == "/dev/nvidiactl") == {"cuda"}
    assert gpu_runtimes([], lambda path: path == "/dev/kfd") == {"rocm"}


def test_the_verifier_peak_table_is_the_catalog():
    assert catalog.peak_bf16_tflops_per_device() == PEAK_BF16_TFLOPS_PER_DEVICE
    # Per device, not per chip: a v3 chip's 123 TFLOP/s is split over its two TensorCores.
    assert PEAK_BF16_TFLOPS_PER_DEVICE["TPU v3"] == 61.5
    assert "cpu" not in PEAK_BF16_TFLOPS_PER_DEVICE


def test_trace_files_lists_relative_paths_and_sizes(tmp_path):
    (tmp_path / "plugins" / "profile" / "s1").mkdir(parents=True)
    (tmp_path / "plugins" / "profile" / "s1" / "host.xplane.pb").write_bytes(b"x" * 7)
    (tmp_path / "top.json.gz").write_bytes(b"")
    assert trace_files(str(tmp_path)) == [
        {"path": "plugins/profile/s1/host.xplane.pb", "bytes": 7},
        {"path": "top.json.gz", "bytes": 0},
    ]
