"""Fields of one receipt that must agree with each other: the backend that started, the kinds of
its devices, the platforms JAX was allowed, the memory it read, and the checks it lists.

receipt_rules.py judges the verdict, the numbers and the counts; these are the remaining ways a
resealed receipt could say two things at once (a CPU run whose devices are TPUs, a memory limit
read as TPU HBM on a CPU, a check listed twice with two outcomes), each in the verifier's terms.
"""

from __future__ import annotations

from typing import Any

from tpuwizard_verify.tpu_verify import MEMORY_LIMIT_MEANING

# JAX_PLATFORMS names and the backend each starts (jax.default_backend()).
_PLATFORM_BACKEND = {"cpu": "cpu", "tpu": "tpu", "gpu": "gpu", "cuda": "gpu", "rocm": "gpu"}


def agreement_problems(receipt: dict[str, Any]) -> list[str]:
    """Every pair of fields that contradict each other, in words; [] when they agree."""
    backend = receipt.get("observed_backend")
    problems = _kind_problems(backend, receipt.get("device_kinds"))
    problems += _allowed_problems(backend, receipt.get("jax_platforms"))
    problems += _memory_problems(receipt, backend)
    problems += _duplicate_checks(receipt.get("checks"))
    perf, kinds = receipt.get("perf"), receipt.get("device_kinds")
    measured = perf.get("device_kind") if isinstance(perf, dict) else None
    if measured is not None and isinstance(kinds, list) and measured not in kinds:
        problems.append(f"its perf figures are for {measured!r}, a device kind it did not run on")
    return problems


def _kind_of(kind: str) -> str:
    """The backend a device kind belongs to: JAX calls CPU devices "cpu", TPUs "TPU ..."."""
    if kind == "cpu":
        return "cpu"
    return "tpu" if kind.startswith("TPU") else "gpu"


def _kind_problems(backend: object, kinds: object) -> list[str]:
    if not isinstance(backend, str) or not isinstance(kinds, list) or not kinds:
        return []
    if not all(isinstance(k, str) for k in kinds):
        return ["its device kinds are not all names"]
    foreign = sorted({k for k in kinds if _kind_of(k) != backend})
    if foreign:
        return [f"the {backend} backend started, but it lists {', '.join(map(repr, foreign))}"]
    if backend == "tpu" and len(set(kinds)) > 1:  # one slice is one TPU generation
        return [f"one slice of several TPU kinds: {', '.join(map(repr, sorted(set(kinds))))}"]
    return []


def _allowed_problems(backend: object, allowed: object) -> list[str]:
    """JAX starts only a platform JAX_PLATFORMS allows (when it names only ones known here)."""
    if not isinstance(backend, str) or not isinstance(allowed, str) or not allowed.strip():
        return []
    names = [name.strip().lower() for name in allowed.split(",") if name.strip()]
    if not all(name in _PLATFORM_BACKEND for name in names):
        return []
    if backend not in {_PLATFORM_BACKEND[name] for name in names}:
        return [f"JAX_PLATFORMS was {allowed!r}, which does not start the {backend} backend"]
    return []


def _memory_problems(receipt: dict[str, Any], backend: object) -> list[str]:
    """The memory table: one row per local device, and a limit named as this backend's."""
    problems = []
    memory, local = receipt.get("memory"), receipt.get("local_device_count")
    if isinstance(memory, list) and isinstance(local, int) and len(memory) != local:
        problems.append(f"it read the memory of {len(memory)} devices for {local} local device(s)")
    meaning = receipt.get("memory_limit_is")
    if meaning is not None and isinstance(backend, str):
        own = MEMORY_LIMIT_MEANING.get(backend)
        if meaning != own:
            what = "no memory limit JAX reports" if own is None else repr(own)
            problems.append(
                f"its memory limit is read as {meaning!r}, but the {backend} backend has {what}"
            )
    return problems


def _duplicate_checks(checks: object) -> list[str]:
    if not isinstance(checks, list):
        return []  # receipt_rules says so
    names = [c.get("name") for c in checks if isinstance(c, dict)]
    twice = sorted({repr(n) for n in names if names.count(n) > 1})
    return [f"it lists the check {', '.join(twice)} more than once"] if twice else []
