"""A receipt's own verdict and internal consistency, judged by the verifier's own rules.

A hash shows only that nobody edited the receipt after sealing it. These rules show that what it
says adds up: the verifier said pass, every check that verifier writes is there and passed, every
error is within the verifier's tolerance, and the device and process counts agree with each
other and with the contract's closed-form sums.

A receipt tpu_verify wrote (``tool: "tpu_verify"``) must hold all its fields. The course's own
receipt holds fewer, so for it a rule applies to each field that is there.
"""

from __future__ import annotations

import json
from typing import Any, TypeGuard

from tpuwizard_verify.tpu_verify import (
    CHECKS,
    COURSE_PREDICTION,
    OPTIONAL_CHECKS,
    PRECISION_BOUNDS,
    SLICE_CHECKS,
    TOLERANCE,
    expected_sum_of_squares,
)

from tpuwizard.core.evidence.receipt_agreement import agreement_problems

VERIFIER_TOOL = "tpu_verify"


def whole(value: object) -> TypeGuard[int]:
    """An int that JSON wrote as a whole number (``true`` is not 1 here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def expected_checks(receipt: dict[str, Any]) -> list[str]:
    """The check names tpu_verify writes on the run this receipt describes."""
    names = list(CHECKS)
    procs = receipt.get("process_count", 1)
    if whole(procs) and procs > 1:
        names += SLICE_CHECKS
    return names + [name for name in OPTIONAL_CHECKS if receipt.get(name) is not None]


def consistency_problems(receipt: dict[str, Any]) -> list[str]:
    """Every way the receipt contradicts its own verdict or itself, in words; [] when none."""
    tool = receipt.get("tool")
    full = tool == VERIFIER_TOOL
    problems: list[str] = []
    if tool is not None and not full:
        problems.append(f"it was written by {tool!r}, not by tpu_verify or the course")

    def wanted(key: str) -> bool:
        return full or key in receipt

    if receipt.get("contract_ok") is not True:
        problems.append("the runtime contract did not hold (contract_ok is not true)")
    if wanted("ok") and receipt.get("ok") is not True:
        problems.append(
            f"the verifier's own verdict is not a pass (ok is {show(receipt.get('ok'))})"
        )
    boundary = receipt.get("failed_boundary")
    if boundary is not None:
        problems.append(f"the verifier reported a failure at the {boundary} boundary")
    if "expected" in receipt and receipt["expected"] != receipt.get("expected_backend"):
        problems.append(
            f"it says it expected {receipt['expected']} and {receipt.get('expected_backend')}"
        )
    if wanted("checks"):
        problems += _check_list_problems(receipt)
    problems += _prediction_problems(receipt, full)
    problems += _count_problems(receipt, full)
    problems += _precision_problems(receipt.get("precision"))
    problems += agreement_problems(receipt)
    return problems


def _check_list_problems(receipt: dict[str, Any]) -> list[str]:
    checks = receipt.get("checks")
    if not isinstance(checks, list) or not all(isinstance(c, dict) for c in checks):
        return ["its checks are not a list of check entries"]
    names = [c.get("name") for c in checks]
    expected = expected_checks(receipt)
    problems = []
    failed = [str(c.get("name")) for c in checks if c.get("ok") is not True]
    if failed:
        problems.append(f"these checks did not pass: {', '.join(failed)}")
    missing = [n for n in expected if n not in names]
    if missing:
        problems.append(f"checks tpu_verify writes on such a run are missing: {', '.join(missing)}")
    extra = sorted({repr(n) for n in names if n not in expected})
    if extra:
        problems.append(f"checks tpu_verify does not write on such a run: {', '.join(extra)}")
    return problems


def _prediction_problems(receipt: dict[str, Any], full: bool) -> list[str]:
    problems = []
    if full or "max_absolute_error" in receipt:
        error = receipt.get("max_absolute_error")
        # `not error < TOLERANCE` also refuses NaN, as the verifier's own comparison does.
        if not number(error) or not error < TOLERANCE:
            problems.append(
                f"the prediction's max |error| {show(error)} is not within the verifier's "
                f"tolerance {TOLERANCE:g}"
            )
    if full or "prediction" in receipt:
        values = receipt.get("prediction")
        if (
            not isinstance(values, list)
            or len(values) != len(COURSE_PREDICTION)
            or not all(
                number(v) and abs(v - c) < TOLERANCE
                for v, c in zip(values, COURSE_PREDICTION, strict=True)
            )
        ):
            problems.append(
                f"the prediction is not the course's {COURSE_PREDICTION[0]} ... "
                f"{COURSE_PREDICTION[-1]} within {TOLERANCE:g}"
            )
    if (full or "shape" in receipt) and receipt.get("shape") != [len(COURSE_PREDICTION)]:
        problems.append(f"the prediction's shape is {show(receipt.get('shape'))}, not [8]")
    if (full or "dtype" in receipt) and receipt.get("dtype") != "float32":
        problems.append(f"the prediction's dtype is {show(receipt.get('dtype'))}, not float32")
    return problems


def _count_problems(receipt: dict[str, Any], full: bool) -> list[str]:
    """Devices, local devices, processes and the contract's sums must agree."""
    count, local = receipt.get("device_count"), receipt.get("local_device_count")
    procs, index = receipt.get("process_count", 1), receipt.get("process_index", 0)
    problems = []
    for key, value, least in (
        ("device_count", count, 1),
        ("local_device_count", local, 1),
        ("process_count", procs, 1),
        ("process_index", index, 0),
    ):
        if not whole(value) or value < least:
            problems.append(f"{key} {show(value)} is not a whole number of at least {least}")
    # (No problem means all four are whole; the second test says so to the type checker.)
    if problems or not (whole(count) and whole(local) and whole(procs) and whole(index)):
        return problems
    if index >= procs:
        problems.append(
            f"it calls itself process {index}, but there are {procs} (0 to {procs - 1})"
        )
    if count != local * procs:
        problems.append(
            f"{count} device{'' if count == 1 else 's'}, but {procs} process(es) of {local} "
            "local devices make"
            f" {local * procs}"
        )
    kinds = receipt.get("device_kinds")
    if (full or "device_kinds" in receipt) and (not isinstance(kinds, list) or len(kinds) != count):
        shown = len(kinds) if isinstance(kinds, list) else show(kinds)
        problems.append(f"it lists {shown} device kinds for {count} devices")
    least_devices = receipt.get("min_devices")
    if "min_devices" in receipt and (not whole(least_devices) or count < least_devices):
        problems.append(f"{count} devices, fewer than the {show(least_devices)} it required")
    problems += _sum_problems(
        "pmap sum of squares",
        receipt.get("pmap_sum_of_squares"),
        receipt.get("expected_sum_of_squares"),
        expected_sum_of_squares(local),
        f"{local} local device(s)",
    )
    if procs > 1 or "global_psum" in receipt:
        problems += _sum_problems(
            "slice psum",
            receipt.get("global_psum"),
            receipt.get("expected_global_psum"),
            expected_sum_of_squares(count),
            f"{count} devices",
        )
        if (full or "expected_processes" in receipt) and receipt.get("expected_processes") != procs:
            problems.append(
                f"it ran {procs} processes, but expected {show(receipt.get('expected_processes'))}"
            )
    return problems


def _sum_problems(
    what: str, measured: object, recorded: object, closed_form: float, over: str
) -> list[str]:
    problems = []
    if recorded != closed_form:
        problems.append(f"the expected {what} is {show(recorded)}, not {closed_form} over {over}")
    # The verifier's own comparison: numpy.isclose's default tolerances.
    if not number(measured) or not abs(measured - closed_form) <= 1e-8 + 1e-5 * abs(closed_form):
        problems.append(f"the {what} is {show(measured)}, not {closed_form} over {over}")
    return problems


def _precision_problems(precision: object) -> list[str]:
    """Each variant within the verifier's bound, and bf16 and int8 less exact than fp32."""
    if precision is None:
        return []
    if not isinstance(precision, dict):
        return ["its precision profile is not a table of variants"]
    problems = []
    relative: dict[str, float] = {}
    for variant, bound in PRECISION_BOUNDS.items():
        entry = precision.get(variant)
        if not isinstance(entry, dict):
            problems.append(f"precision {variant} is missing or malformed")
            continue
        parts = [("", entry)] + [
            (f" ({part})", entry[part])
            for part in ("matmul", "mlp")
            if isinstance(entry.get(part), dict)
        ]
        for label, values in parts:
            error = values.get("max_rel_error")
            if not number(error) or not error <= bound:
                problems.append(
                    f"precision {variant}{label}: relative error {show(error)} is not within "
                    f"the verifier's bound {bound:g}"
                )
            elif not label:
                relative[variant] = error
    reference = relative.get("fp32")
    for variant in ("bf16", "int8"):
        if reference is not None and variant in relative and not relative[variant] > reference:
            problems.append(
                f"precision {variant} is no less exact than fp32: it did not run in {variant}"
            )
    return problems


def show(value: object) -> str:
    """A value as the receipt spells it (true, null), shortened."""
    text = repr(value) if isinstance(value, float) else json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."
