"""tpuwizard held against the accelerator at hand, in one run that writes one JSON (issue 45).

Run by scripts/device-check.sh from the repository root on the accelerator machine. It needs only
Python 3.11, NumPy and JAX (with libtpu on a TPU): tpuwizard's own dependencies are not imported;
its core modules come from this checkout (PYTHONPATH), and nothing here opens a socket. Steps:

1. the devices at hand (``jax.devices()`` in a child process), and which catalog slice they are;
2. the verifier, ``verify/tpu_verify.py --expect PLATFORM --perf --precision``, its receipt kept;
3. the course's two programs, unchanged: the completed prediction and the pmap sum of squares
   (140.0 on one device);
4. every example that defines ``tpuwizard_plan`` through ``fit --program --measure``'s core
   (``ProgramPlanner(measure=True)``) for the slice at hand: predicted and measured peak HBM and
   step time side by side;
5. JAX's persistent compilation cache: the same 24-layer MLP gradient compiled in two processes
   over one ``JAX_COMPILATION_CACHE_DIR``, both times reported;
6. the tests under tests/tpu/, run as plain scripts (pytest is not needed);
7. the launcher every worker's script and verifier start through (``verify/tpu_launch.py``): the
   verifier through it, and the stall guard's stack: a script that holds the chip and then hangs
   is asked for its Python stack by SIGUSR1, as the guard asks a stalled worker;
8. what the chip says of itself (scripts/device_check_tpu_words.py, issue 54): a step over its
   HBM and a second process while one holds the TPU, each read and diagnosed by the code that
   reads a script's output in practice, the chip's lines kept whole (TPU only: skipped on a CPU);
   and the held-chip listing `run` and `watch` make before a run on a kept node, which must name
   the process holding the chip (on a CPU it runs against practice's stand-in, and is skipped).

Without a TPU it says so in the JSON and exits 1, unless ``--allow-cpu`` (a practice run of every
step on CPU devices, labelled so; what a TPU alone can show is skipped).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PREDICTION = (
    "Completed prediction: [0.34375, 0.8125, 1.28125, 1.75, 2.21875, 2.6875, 3.15625, 3.625]"
)
PROBE = """
import json, jax
d = jax.devices()
print("DEVICES " + json.dumps({"platform": d[0].platform, "device_kind": str(d[0].device_kind),
      "devices": len(d), "jax": jax.__version__,
      "bytes_limit": (d[0].memory_stats() or {}).get("bytes_limit")}))
"""
# A 24-layer MLP's gradient, unrolled, compiled once and timed (JAX's persistent cache stores it
# when the compile takes at least the threshold; 0 here, so that the check never depends on how
# fast this machine compiles).
CACHE_PROGRAM = """
import json, os, sys, time
import jax, jax.numpy as jnp
jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
jax.config.update("jax_persistent_cache_min_compile_time_secs", float(sys.argv[3]))
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
layers, width = int(sys.argv[1]), int(sys.argv[2])
def loss(params, x):
    for w, b in params:
        x = jax.nn.gelu(x @ w + b)
    return jnp.mean(x * x)
params = [(jax.ShapeDtypeStruct((width, width), jnp.bfloat16),
           jax.ShapeDtypeStruct((width,), jnp.bfloat16)) for _ in range(layers)]
x = jax.ShapeDtypeStruct((256, width), jnp.bfloat16)
start = time.perf_counter()
jax.jit(jax.grad(loss)).lower(params, x).compile()
print("COMPILED " + json.dumps({"seconds": round(time.perf_counter() - start, 3),
      "platform": jax.devices()[0].platform}))
"""


def run(
    command: list[str], env: dict[str, str] | None = None, timeout: float = 600
) -> dict[str, Any]:
    """A child process's exit code, time and output's tail; never raises."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            timeout=timeout,
            cwd=REPO,
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as expired:
        code, out, err = 124, str(expired.stdout or ""), f"timed out after {timeout} s"
    return {
        "code": code,
        "seconds": round(time.perf_counter() - start, 2),
        "stdout": out,
        "stderr_tail": err.strip().splitlines()[-5:],
    }


def marked(text: str, mark: str) -> dict[str, Any] | None:
    for line in text.splitlines():
        if line.startswith(mark + " "):
            parsed: dict[str, Any] = json.loads(line[len(mark) + 1 :])
            return parsed
    return None


def devices_at_hand() -> dict[str, Any]:
    probe = run([sys.executable, "-c", PROBE], timeout=300)
    seen = marked(probe["stdout"], "DEVICES")
    return seen or {"platform": None, "error": probe["stderr_tail"]}


def check_verifier(platform_name: str, out: Path) -> dict[str, Any]:
    receipt = out / "receipt.json"
    done = run(
        [
            sys.executable,
            "-u",
            "verify/tpu_verify.py",
            "--expect",
            platform_name,
            "--perf",
            "--precision",
            "--receipt",
            str(receipt),
        ],
        timeout=300,
    )
    said: dict[str, Any] = {"code": done["code"], "seconds": done["seconds"]}
    said["lines"] = [ln for ln in done["stdout"].splitlines() if not ln.startswith("TPUWIZARD ")][
        -20:
    ]
    if receipt.exists():
        r = json.loads(receipt.read_text())
        said.update(
            ok=r.get("ok"),
            checks_passed=sum(1 for c in r.get("checks", []) if c.get("ok")),
            checks=len(r.get("checks", [])),
            device_kinds=sorted(set(r.get("device_kinds") or [])),
            perf=r.get("perf"),
            memory=r.get("memory"),
            memory_limit_is=r.get("memory_limit_is"),
            precision=r.get("precision"),
            receipt_sha256=r.get("receipt_sha256"),
        )
    else:
        said.update(ok=False, stderr_tail=done["stderr_tail"])
    return said


def check_course(platform_name: str) -> dict[str, Any]:
    course = REPO / "tests" / "data" / "course"
    moved = run(
        [sys.executable, str(course / "move-your-experiment" / "main.py")],
        env={"COURSE_EXPECT_PLATFORM": platform_name},
        timeout=120,
    )
    setup = run([sys.executable, str(course / "tpu-setup" / "main.py")], timeout=120)
    receipt_line = next(
        (ln for ln in setup["stdout"].splitlines() if "Verified runtime receipt: " in ln), ""
    )
    receipt = json.loads(receipt_line.split(": ", 1)[1]) if receipt_line else {}
    devices = int(receipt.get("local_device_count") or 0)
    expected = float(sum(i * i for i in range(devices * 8)))
    return {
        "move_your_experiment": {
            "code": moved["code"],
            "prediction_line": PREDICTION in moved["stdout"],
            "ok": moved["code"] == 0 and PREDICTION in moved["stdout"],
            "stderr_tail": moved["stderr_tail"] if moved["code"] else [],
        },
        "tpu_setup": {
            "code": setup["code"],
            "pmap_sum_of_squares": receipt.get("pmap_sum_of_squares"),
            "expected": expected,
            "observed_backend": receipt.get("observed_backend"),
            "ok": setup["code"] == 0
            and receipt.get("pmap_sum_of_squares") == expected
            and receipt.get("observed_backend") == platform_name,
            "stderr_tail": setup["stderr_tail"] if setup["code"] else [],
        },
    }


def examples_with_plan() -> list[Path]:
    return sorted(
        p for p in (REPO / "examples").glob("*.py") if "def tpuwizard_plan(" in p.read_text()
    )


def check_example(example: Path, slice_name: str, allow_cpu: bool) -> dict[str, Any]:
    """``fit --program EXAMPLE --measure --slices SLICE`` through fit's core: the row as JSON."""
    from tpuwizard.core.errors import BadInput
    from tpuwizard.core.plan import catalog, program_fit

    start = time.perf_counter()
    try:
        planner = program_fit.ProgramPlanner(
            example,
            [catalog.parse_accelerator(slice_name)],
            measure=True,
            measure_on_cpu=allow_cpu,
            use_cache=False,
        )
        (row,) = list(planner.results())
    except BadInput as err:
        return {"example": example.name, "ok": False, "error": str(err)}
    doc = row.to_dict()
    measured = doc.get("measured") or {}
    b = doc["per_device_bytes"]
    return {
        "example": example.name,
        "slice": slice_name,
        "method": planner.method,
        "ok": bool(doc["fits"] and measured.get("fits")),
        "predicted": {
            "fits": doc["fits"],
            "peak_bytes": b.get("peak"),
            "bytes": b,
            "step_seconds_at_least": doc["step_seconds_at_least"],
            "usd_per_1000_steps_at_least": doc["usd_per_1000_steps_at_least"],
            "note": doc["note"],
        },
        "measured": measured,
        "seconds": round(time.perf_counter() - start, 2),
    }


def check_compile_cache(layers: int, width: int, threshold: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tpuwizard-jax-cache-") as folder:
        env = {"JAX_COMPILATION_CACHE_DIR": folder}
        command = [sys.executable, "-c", CACHE_PROGRAM, str(layers), str(width), str(threshold)]
        cold = run(command, env=env, timeout=240)
        files_cold = sum(1 for p in Path(folder).rglob("*") if p.is_file())
        warm = run(command, env=env, timeout=240)
        files_warm = sum(1 for p in Path(folder).rglob("*") if p.is_file())
    first, second = marked(cold["stdout"], "COMPILED"), marked(warm["stdout"], "COMPILED")
    said: dict[str, Any] = {
        "program": f"grad of a {layers}-layer MLP, width {width}, bf16, unrolled",
        "min_compile_time_secs": threshold,
        "cold_seconds": first and first["seconds"],
        "warm_seconds": second and second["seconds"],
        "files_after_cold": files_cold,
        "files_after_warm": files_warm,
    }
    if first is None or second is None:
        said.update(hit=False, error=(cold["stderr_tail"] or []) + (warm["stderr_tail"] or []))
        return said
    # A hit: the first process wrote the entry, the second wrote nothing new and compiled faster.
    said["hit"] = bool(
        files_cold > 0 and files_warm == files_cold and second["seconds"] < first["seconds"]
    )
    return said


# A script that takes the chip, says so, then hangs as a stalled worker would.
HANGING_SCRIPT = """
import time, jax, jax.numpy as jnp
print("HOLDING", float(jnp.ones((512, 512)).sum()), jax.devices()[0].platform, flush=True)
def waiting_forever():
    while True:
        time.sleep(1)
waiting_forever()
"""


def check_launcher(platform_name: str, out: Path) -> dict[str, Any]:
    """The verifier started through the launcher, then a hanging script's stack on SIGUSR1."""
    job = Path(tempfile.mkdtemp(prefix="launcher-job-"))
    env = {"TPUWIZARD_JOB_DIR": str(job)}  # absolute: the launcher joins it to the home
    receipt = out / "launcher-receipt.json"
    verified = run(
        [
            sys.executable,
            "-u",
            "verify/tpu_launch.py",
            "verify/tpu_verify.py",
            "--expect",
            platform_name,
            "--receipt",
            str(receipt),
        ],
        env=env,
        timeout=300,
    )
    said: dict[str, Any] = {
        "verifier_code": verified["code"],
        "verifier_seconds": verified["seconds"],
    }
    if receipt.exists():
        said["verifier_ok"] = json.loads(receipt.read_text()).get("ok")
    script = job / "hanging.py"
    script.write_text(HANGING_SCRIPT)
    proc = subprocess.Popen(
        [sys.executable, "-u", "verify/tpu_launch.py", str(script)],
        cwd=REPO,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    holding = ""  # read until the chip is held, or the script died (libtpu's warnings first)
    while not holding.startswith("HOLDING"):
        holding = proc.stdout.readline()
        if not holding:
            break
    said["holding"] = holding.strip()
    stack_file, stack = job / "stack", ""
    if holding.startswith("HOLDING"):
        # Asked again each second: the line is out as print returns, so a first signal can
        # find the script still on its print line, before it waits (seen once beside load).
        deadline, asked = time.monotonic() + 30, 0.0
        while time.monotonic() < deadline and "waiting_forever" not in stack:
            if time.monotonic() - asked >= 1.0:
                proc.send_signal(signal.SIGUSR1)
                asked = time.monotonic()
            time.sleep(0.2)
            stack = stack_file.read_text() if stack_file.exists() else ""
    said["stack_alive_after"] = proc.poll() is None  # faulthandler dumps; it does not kill
    proc.kill()
    proc.wait(timeout=60)
    said["stack_lines"] = stack.strip().splitlines()[-8:]
    said["ok"] = (
        verified["code"] == 0
        and said.get("verifier_ok") is True
        and "waiting_forever" in stack
        and said["stack_alive_after"]
    )
    return said


def check_tpu_tests() -> dict[str, Any]:
    results: dict[str, Any] = {}
    for test in sorted((REPO / "tests" / "tpu").glob("test_*.py")):
        done = run([sys.executable, "-u", str(test)], env={"TPUWIZARD_TPU_TESTS": "1"}, timeout=300)
        said = marked(done["stdout"], "TPU-TESTS") or {}
        results[test.name] = {
            "code": done["code"],
            "seconds": done["seconds"],
            "tests": said,
            "stderr_tail": done["stderr_tail"] if done["code"] else [],
        }
    return results


def table(examples: list[dict[str, Any]]) -> str:
    """The docs' table (docs/guides/fit.md, docs/performance.md) filled from the examples."""
    from tpuwizard.core.plan.program_advice import size_text

    def gib(count: Any) -> str:
        return "-" if not count else size_text(count)

    def ms(seconds: Any) -> str:
        return "-" if not seconds else f"{seconds * 1000:.3g} ms"

    def ratio(a: Any, b: Any) -> str:
        return "-" if not (a and b) else f"{a / b:.2f}x"

    lines = [
        "| example | slice | predicted peak | measured peak (in use + reserved) | predicted / "
        "measured | step, at least (XLA) | step, measured (median) | measured / predicted |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in examples:
        p, m = e.get("predicted") or {}, e.get("measured") or {}
        lines.append(
            f"| {e['example']} | {e.get('slice', '-')} | {gib(p.get('peak_bytes'))} | "
            f"{gib(m.get('peak_bytes'))} | {ratio(p.get('peak_bytes'), m.get('peak_bytes'))} | "
            f"{ms(p.get('step_seconds_at_least'))} | {ms(m.get('step_seconds'))} | "
            + (
                f"{ratio(m.get('step_seconds'), p.get('step_seconds_at_least'))} |"
                if m.get("on") == "tpu"
                else "- (CPU practice: no TPU's time) |"
            )
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT") or "device-check-out")
    parser.add_argument(
        "--allow-cpu",
        action="store_true",
        help="without a TPU, run every step on CPU devices as practice, labelled so",
    )
    parser.add_argument("--cache-layers", type=int, default=24)
    parser.add_argument("--cache-width", type=int, default=2048)
    parser.add_argument("--cache-threshold", type=float, default=0.0)
    parser.add_argument(
        "--skip", action="append", default=[], help="a step to leave out (verifier, course, ...)"
    )
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    report: dict[str, Any] = {
        "check": "tpuwizard device check (scripts/device-check.sh, issue 45)",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "host_cpus": os.cpu_count(),
    }
    seen = report["at_hand"] = devices_at_hand()
    platform_name = seen.get("platform")
    on_tpu = platform_name == "tpu"
    report["tpu"] = on_tpu
    if not on_tpu and not args.allow_cpu:
        report["ok"] = False
        report["why"] = (
            f"no TPU here: JAX sees {seen.get('devices')} {platform_name} device(s) "
            f"({seen.get('device_kind')}); run this on the TPU machine, or pass --allow-cpu "
            "for a practice run of every step on CPU devices."
            if platform_name
            else f"JAX did not start here: {seen.get('error')}"
        )
        return finish(report, out, started, 1)
    from device_check_tpu_words import check_hbm, check_held, check_held_listing

    from tpuwizard.core.plan.program_at_hand import slice_at_hand

    found = slice_at_hand(seen) if on_tpu else None
    slice_name = found.name if found else ("v5litepod-1" if not on_tpu else None)
    report["slice"] = slice_name
    report["practice"] = not on_tpu
    steps: dict[str, bool] = {}
    if "verifier" not in args.skip:
        report["verifier"] = check_verifier(str(platform_name), out)
        steps["verifier"] = bool(report["verifier"].get("ok"))
        write(report, out)
    if "course" not in args.skip and platform_name in ("tpu", "cpu"):
        report["course"] = check_course(str(platform_name))
        steps["course"] = all(v["ok"] for v in report["course"].values())
        write(report, out)
    if "examples" not in args.skip and slice_name:
        report["examples"] = []
        for example in examples_with_plan():
            report["examples"].append(check_example(example, slice_name, not on_tpu))
            write(report, out)
        steps["examples"] = bool(report["examples"]) and all(e["ok"] for e in report["examples"])
        report["table_markdown"] = table(report["examples"])
    if "cache" not in args.skip:
        report["compile_cache"] = check_compile_cache(
            args.cache_layers, args.cache_width, args.cache_threshold
        )
        steps["compile_cache"] = bool(report["compile_cache"].get("hit"))
        write(report, out)
    if "launcher" not in args.skip:
        report["launcher"] = check_launcher(str(platform_name), out)
        steps["launcher"] = bool(report["launcher"]["ok"])
        write(report, out)
    if "hbm" not in args.skip:
        report["hbm_out_of_memory"] = check_hbm(on_tpu, seen.get("bytes_limit"), slice_name)
        if report["hbm_out_of_memory"]["ok"] is not None:
            steps["hbm_out_of_memory"] = bool(report["hbm_out_of_memory"]["ok"])
        write(report, out)
    if "held" not in args.skip:
        report["held_tpu"] = check_held(str(platform_name), slice_name)
        if report["held_tpu"]["ok"] is not None:
            steps["held_tpu"] = bool(report["held_tpu"]["ok"])
        report["held_listing"] = check_held_listing(str(platform_name))
        if report["held_listing"]["ok"] is not None:
            steps["held_listing"] = bool(report["held_listing"]["ok"])
        write(report, out)
    if "tpu-tests" not in args.skip and on_tpu:
        report["tpu_tests"] = check_tpu_tests()
        steps["tpu_tests"] = all(
            t["code"] == 0 and t["tests"].get("failed") == 0 for t in report["tpu_tests"].values()
        )
    report["steps_ok"] = steps
    report["ok"] = on_tpu and all(steps.values())
    return finish(report, out, started, 0 if report["ok"] else 1)


def write(report: dict[str, Any], out: Path) -> None:
    """The JSON as it stands: a run cut short by its time limit still leaves what it did."""
    path = out / "device-check.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=1, default=str))
    tmp.replace(path)


def finish(report: dict[str, Any], out: Path, started: float, code: int) -> int:
    report["seconds"] = round(time.perf_counter() - started, 1)
    write(report, out)
    print(json.dumps({k: report.get(k) for k in ("ok", "tpu", "slice", "steps_ok", "why")}))
    if report.get("table_markdown"):
        print(report["table_markdown"])
    print(f"wrote {out / 'device-check.json'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
