"""A single receipt whose own fields contradict each other is refused (issue 39, item 9): each
is resealed after the edit, so its hash matches and only its contents can refuse it."""

from __future__ import annotations

import pytest

from tests.receipt_fixtures import reseal, verifier_receipt
from tpuwizard.core.evidence.receipt import check_receipt

FOUR = verifier_receipt("cpu", 4)
TPU = verifier_receipt("tpu", 4, kind="TPU v5 lite")


def checked(receipt: dict, expect: str) -> list[str]:
    result = check_receipt(reseal(receipt), expect)
    assert any("hash" in fact for fact in result.facts)  # the hash matches
    return result.problems


@pytest.mark.parametrize(
    ("receipt", "expect", "said"),
    [
        (dict(FOUR, device_kinds=["TPU v5 lite"] * 4), "cpu", "cpu backend started, but it lists"),
        (dict(TPU, device_kinds=["cpu"] * 4), "tpu", "tpu backend started, but it lists 'cpu'"),
        (
            dict(TPU, device_kinds=["TPU v5 lite"] * 3 + ["TPU v4"]),
            "tpu",
            "one slice of several TPU kinds",
        ),
        (dict(FOUR, jax_platforms="tpu"), "cpu", "JAX_PLATFORMS was 'tpu', which does not start"),
        (dict(FOUR, memory=FOUR["memory"][:1]), "cpu", "memory of 1 devices for 4 local"),
        (dict(FOUR, memory_limit_is="usable_hbm"), "cpu", "read as 'usable_hbm', but the cpu"),
        (dict(TPU, memory_limit_is="jax_gpu_pool"), "tpu", "the tpu backend has 'usable_hbm'"),
        (dict(FOUR, checks=FOUR["checks"] + FOUR["checks"][-1:]), "cpu", "'contract' more than"),
        (
            dict(FOUR, perf={"bf16_tflops": 1.0, "device_kind": "TPU v5 lite"}),
            "cpu",
            "perf figures are for 'TPU v5 lite', a device kind it did not run on",
        ),
    ],
    ids=[
        "cpu-with-tpu-kinds",
        "tpu-with-cpu-kinds",
        "mixed-tpu-kinds",
        "platforms-exclude-backend",
        "memory-rows",
        "cpu-hbm",
        "tpu-gpu-pool",
        "check-twice",
        "perf-kind",
    ],
)
def test_fields_that_contradict_each_other_refuse_the_receipt(receipt, expect, said):
    assert check_receipt(FOUR, "cpu").ok and check_receipt(TPU, "tpu").ok
    problems = checked(receipt, expect)
    assert any(said in p for p in problems), problems


@pytest.mark.parametrize("allowed", ["cpu", "tpu,cpu", "CPU", "", None, "proxy,cpu", "cuda"])
def test_platforms_that_allow_the_backend_or_are_unknown_here_pass(allowed):
    if allowed == "cuda":  # a name known here that excludes cpu: refused
        assert any("JAX_PLATFORMS" in p for p in checked(dict(FOUR, jax_platforms=allowed), "cpu"))
        return
    assert check_receipt(reseal(dict(FOUR, jax_platforms=allowed)), "cpu").ok


def test_a_gpu_receipt_names_its_pool_and_its_own_kinds():
    gpu = verifier_receipt("gpu", 2, kind="NVIDIA H200")
    gpu = reseal(dict(gpu, memory_limit_is="jax_gpu_pool", jax_platforms="cuda"))
    result = check_receipt(gpu, "gpu")
    assert result.ok, result.problems
