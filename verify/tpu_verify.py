#!/usr/bin/env python3
"""tpu_verify: prove that a JAX computation ran on the platform you asked for.

Standalone on purpose: it needs only the standard library, NumPy and JAX, and runs on Python 3.10+
(TPU VM images ship 3.10), so it can be uploaded to a TPU host, pasted into a notebook, or run
locally. tpuwizard ships it unchanged.

It asks for the platform explicitly, so a missing TPU is an error and never a CPU success, and
checks two separate things: that the arithmetic is right (against NumPy and the course's recorded
numbers) and where the completed result lives. When a check fails it names the boundary that
failed: import, backend, placement, numeric or contract.

Output: readable lines, plus one machine-readable line per check and one for the final receipt,
each ``TPUWIZARD {json}``. ``--receipt PATH`` writes the receipt. Exit status 0 only when every
check holds, 1 when one fails, 2 for bad arguments.

Optional checks: ``--perf`` times bf16/fp32 matmuls on random data (best of several trials) and
compares bf16 with the device's peak; ``--precision`` measures fp32, bf16 and int8 error on a
matmul and a small MLP; ``--trace`` captures a jax.profiler trace of the compute steps beside
the receipt.

    COURSE_EXPECT_PLATFORM=tpu python tpu_verify.py --receipt receipt.json
    python tpu_verify.py --expect cpu --min-devices 4 --perf --precision --trace
"""

import argparse
import glob
import hashlib
import json
import os
import platform
import socket
import sys
import threading
import time
from datetime import datetime, timezone

MARKER = "TPUWIZARD "
PLATFORMS = ("cpu", "tpu", "gpu")
BOUNDARIES = ("import", "backend", "placement", "numeric", "contract")

# The course's prediction: 8 observations x 3 features, fixed weights, bias 1/8.
WEIGHTS = (0.5, -0.25, 1.0)
BIAS = 0.125
CHANGED_BIAS = -0.25
COURSE_PREDICTION = (0.34375, 0.8125, 1.28125, 1.75, 2.21875, 2.6875, 3.15625, 3.625)
TOLERANCE = 1e-6
ROWS_PER_DEVICE = 8  # the pmap contract sums squares of 0 .. 8*devices-1

# The checks a passing run writes, by name: always; on a multi-host slice; and one per optional
# measurement, named after the receipt field it fills. tpuwizard's receipt check requires exactly
# these, and a real run in its tests keeps the lists honest.
CHECKS = ("import", "backend", "placement", "numeric", "changed_bias", "row_reversal", "contract")
SLICE_CHECKS = ("join", "slice")
OPTIONAL_CHECKS = ("perf", "precision", "trace")

# Peak dense bf16 TFLOP/s of one JAX device, by device_kind. tpuwizard's catalog
# (tpuwizard/core/plan/catalog.toml) is the source, with a citation for every figure; a unit test
# keeps this copy equal to it. TPU figures are per chip divided by the JAX devices per chip.
PEAK_BF16_TFLOPS_PER_DEVICE = {
    "TPU v2": 22.5,
    "TPU v3": 61.5,
    "TPU v4": 275.0,
    "TPU v5 lite": 197.0,
    "TPU v5": 459.0,
    "TPU v6 lite": 918.0,
    "TPU7x": 1153.5,
    "NVIDIA H200": 989.0,
}

# What memory_stats()["bytes_limit"] means on each platform.
MEMORY_LIMIT_MEANING = {
    "tpu": "usable_hbm",  # what the TPU runtime lets JAX allocate: the usable HBM
    "gpu": "jax_gpu_pool",  # JAX's preallocated pool (default 75% of the GPU), not the GPU's total
}

# Precision profile: upper bounds on max |error| / max |reference|. bf16 keeps 8 significant
# bits (relative step 2^-8); int8 per-tensor quantisation keeps 1/127 of the largest value.
PRECISION_BOUNDS = {"fp32": 1e-4, "bf16": 2e-2, "int8": 5e-2}
PRECISION_MEANING = {
    "fp32": "the reference (matmul at highest precision)",
    "bf16": "fine for training with fp32 master weights, optimizer state and loss sums",
    "int8": "for inference with calibrated weights; too coarse for gradients and optimizer state",
}

TRACE_HELP = (
    "open it with TensorBoard's profile plugin (pip install tensorboard tensorboard-plugin-profile;"
    " tensorboard --logdir DIR), with xprof (pip install xprof; xprof --logdir DIR), or load the"
    " perfetto_trace.json.gz file at https://ui.perfetto.dev"
)


def gpu_runtimes(distributions=None, exists=os.path.exists):
    """Which GPU runtimes this machine has: {"cuda", "rocm"}, from JAX's GPU plugins or the
    devices' files (/dev/nvidiactl for NVIDIA, /dev/kfd for AMD)."""
    if distributions is None:
        distributions = _distribution_names()
    names = {d.lower().replace("_", "-") for d in distributions}
    found = set()
    if any(n.startswith("jax-cuda") for n in names) or exists("/dev/nvidiactl"):
        found.add("cuda")
    if any(n.startswith("jax-rocm") for n in names) or exists("/dev/kfd"):
        found.add("rocm")
    return found


def jax_platform_for(expect, runtimes):
    """The JAX_PLATFORMS value for ``expect``. Current JAX expands "gpu" to CUDA and ROCm and
    fails on whichever is absent, so "gpu" becomes the runtime present: cuda, else rocm."""
    if expect != "gpu":
        return expect
    if "cuda" in runtimes:
        return "cuda"
    if "rocm" in runtimes:
        return "rocm"
    return "gpu"  # neither: JAX then fails at the backend boundary, which says so


def _distribution_names():
    try:
        from importlib import metadata

        return [d.metadata["Name"] or "" for d in metadata.distributions()]
    except Exception:
        return []


def receipt_hash(receipt):
    """First 16 hex digits of SHA-256 over the canonical JSON of every field but the hash."""
    body = {k: v for k, v in receipt.items() if k != "receipt_sha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def expected_sum_of_squares(local_devices):
    """Closed form of sum(i^2 for i < n) with n = 8 x local devices (140 on 1, 10416 on 4)."""
    n = ROWS_PER_DEVICE * local_devices
    return float((n - 1) * n * (2 * n - 1) // 6)


def device_holders(prefixes=("/dev/accel", "/dev/vfio/"), proc_root="/proc"):
    """Processes holding a file whose path starts with one of ``prefixes`` (a busy TPU)."""
    holders = []
    for fd_dir in glob.glob(os.path.join(proc_root, "[0-9]*", "fd")):
        pid = fd_dir.split(os.sep)[-2]
        if pid == str(os.getpid()):
            continue
        try:
            targets = {os.readlink(os.path.join(fd_dir, fd)) for fd in os.listdir(fd_dir)}
        except OSError:
            continue  # gone, or not ours to read
        held = sorted(t for t in targets if t.startswith(tuple(prefixes)))
        if held:
            try:
                with open(os.path.join(proc_root, pid, "cmdline"), "rb") as f:
                    command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                command = "?"
            holders.append({"pid": int(pid), "command": command, "devices": held})
    return holders


def _package_version(*names):
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


class SliceSpec:
    """How this process joins a multi-host slice (one process per VM)."""

    def __init__(
        self, processes=1, process_id=None, coordinator=None, global_devices=None, timeout=300
    ):
        self.processes, self.process_id, self.coordinator = processes, process_id, coordinator
        self.global_devices, self.timeout = global_devices, timeout


class Verifier:
    def __init__(
        self,
        expect,
        min_devices,
        perf,
        out=None,
        slice_spec=None,
        precision=False,
        trace_dir=None,
        receipt_dir=None,
        packages=(),
        laptop_jax=None,
    ):
        self.expect = expect
        self.min_devices = min_devices
        self.perf = perf
        self.precision = precision
        self.trace_dir = trace_dir
        self.receipt_dir = receipt_dir
        self._files_before = set()
        self.slice = slice_spec or SliceSpec()
        self.out = out or sys.stdout
        self.checks = []
        self.receipt = {
            "tool": "tpu_verify",
            "expected": expect,
            "expected_backend": expect,
            "observed_backend": None,
            "python": platform.python_version(),
            "jax": None,
            "jaxlib": None,
            "libtpu": None,
            "hostname": socket.gethostname(),
            "started_at": datetime.now(timezone.utc).isoformat(),
            "min_devices": min_devices,
            "device_count": 0,
            "local_device_count": 0,
            "device_kinds": [],
            "output_devices": [],
            "platform": None,
            "shape": None,
            "dtype": None,
            "prediction": None,
            "max_absolute_error": None,
            "process_index": 0,
            "process_count": 1,
            "pmap_sum_of_squares": None,
            "expected_sum_of_squares": None,
            "contract_ok": False,
            "jax_platforms": os.environ.get("JAX_PLATFORMS"),
            "memory": None,
            "memory_limit_is": None,
            "perf": None,
            "precision": None,
            "trace": None,
        }
        if laptop_jax:  # the JAX on the computer that launched this run, beside the worker's
            self.receipt["laptop_jax"] = laptop_jax
        if packages:  # added to the venv beside jax: the versions this run imported
            self.receipt["packages"] = {name: _package_version(name) for name in packages}
        self._t0 = time.perf_counter()

    # -- output -------------------------------------------------------------------------------
    def say(self, text):
        print(text, file=self.out, flush=True)

    def emit(self, kind, payload):
        self.say(MARKER + json.dumps(dict(kind=kind, **payload), sort_keys=True))

    def check(self, name, boundary, ok, detail):
        entry = {"name": name, "boundary": boundary, "ok": bool(ok), "detail": detail}
        self.checks.append(entry)
        self.say("  %s %-13s %s" % ("PASS" if ok else "FAIL", name, detail))
        self.emit("check", entry)
        return bool(ok)

    # -- stages -------------------------------------------------------------------------------
    def run(self):
        self.say(
            "tpu_verify: expecting platform '%s' on host %s (Python %s)"
            % (self.expect, self.receipt["hostname"], self.receipt["python"])
        )
        modules = self.stage_import()
        joined = modules is None or self.slice.processes == 1 or self.stage_join(modules)
        if not joined:
            return self.finish()
        if modules is not None:
            devices = self.stage_backend(modules)
            if devices is not None:
                tracing = self.trace_dir is not None and self.start_trace(modules)
                self.stage_prediction(modules, devices)
                self.stage_contract(modules)
                if self.slice.processes > 1:
                    self.stage_slice(modules)
                self.stage_memory(modules)
                if self.perf:
                    self.stage_perf(modules, devices)
                if self.precision:
                    self.stage_precision(modules, devices)
                if tracing:
                    self.stop_trace(modules)
        return self.finish()

    def stage_import(self):
        try:
            import jax
            import jax.numpy as jnp
            import numpy as np
        except Exception as err:  # ImportError, or a broken install raising anything else
            self.check(
                "import",
                "import",
                False,
                "cannot import jax/numpy (%s: %s): check the interpreter and that "
                "jax is installed in it" % (type(err).__name__, err),
            )
            return None
        self.receipt["jax"] = jax.__version__
        self.receipt["jaxlib"] = _package_version("jaxlib")
        self.receipt["libtpu"] = _package_version("libtpu", "libtpu-nightly")
        self.check(
            "import",
            "import",
            True,
            "jax %s, jaxlib %s, numpy %s"
            % (jax.__version__, self.receipt["jaxlib"], np.__version__),
        )
        return np, jax, jnp

    def stage_join(self, modules):
        """Every VM of a multi-host slice runs this; jax.distributed joins them into one."""
        _np, jax, _jnp = modules
        spec = self.slice
        self.say(
            "  joining the slice as process %s of %d (coordinator %s)..."
            % (
                spec.process_id if spec.process_id is not None else "auto",
                spec.processes,
                spec.coordinator or "auto-detected",
            )
        )
        kwargs = {}
        if spec.coordinator:
            kwargs.update(
                coordinator_address=spec.coordinator,
                num_processes=spec.processes,
                process_id=spec.process_id,
            )
            if self.expect == "cpu":  # CPU devices in several processes talk through gloo
                jax.config.update("jax_cpu_collectives_implementation", "gloo")

        # jax aborts the whole process when initialisation times out, so say so first: the
        # wizard then knows this VM waited, and names the ones that never came.
        def still_waiting():
            self.check(
                "join",
                "contract",
                False,
                "still waiting after %ds: another VM of the slice has not started this "
                "program" % max(1, spec.timeout - 1),
            )

        timer = threading.Timer(max(1, spec.timeout - 1), still_waiting)
        timer.daemon = True
        timer.start()
        try:
            try:
                jax.distributed.initialize(initialization_timeout=spec.timeout, **kwargs)
            except TypeError:  # older jax without initialization_timeout
                jax.distributed.initialize(**kwargs)
        except Exception as err:
            timer.cancel()
            return self.check(
                "join",
                "contract",
                False,
                "could not join the slice within %ds (%s): every VM must run this "
                "program at the same time" % (spec.timeout, _first_line(err)),
            )
        timer.cancel()
        return self.check(
            "join",
            "contract",
            True,
            "process %d of %d joined" % (jax.process_index(), jax.process_count()),
        )

    def stage_slice(self, modules):
        """The whole slice: process count, global device count, and a psum over every device."""
        np, jax, jnp = modules
        spec = self.slice
        local = jax.local_devices(backend=self.expect)
        total = len(jax.devices(self.expect))
        start = jax.process_index() * len(local)
        rows = np.arange(total * ROWS_PER_DEVICE, dtype=np.float32).reshape(total, -1)
        try:
            # No devices=: pmap spans every device of every process, so the psum is global.
            out = jax.pmap(lambda r: jax.lax.psum(jnp.sum(r * r), "i"), axis_name="i")(
                rows[start : start + len(local)]
            )
            value = float(jax.block_until_ready(out)[0])
        except Exception as err:
            self.check("slice", "contract", False, "global psum failed: %s" % _first_line(err))
            return
        expected = expected_sum_of_squares(total)
        self.receipt.update(
            global_psum=value, expected_global_psum=expected, expected_processes=spec.processes
        )
        problems = []
        if jax.process_count() != spec.processes:
            problems.append("%d processes, not %d" % (jax.process_count(), spec.processes))
        if spec.global_devices is not None and total != spec.global_devices:
            problems.append("%d devices in the slice, not %d" % (total, spec.global_devices))
        if value != expected:
            problems.append("psum %s != %s" % (value, expected))
        self.receipt["contract_ok"] = bool(self.receipt["contract_ok"] and not problems)
        self.check(
            "slice",
            "contract",
            not problems,
            "%d processes, %d global devices, psum over all of them %.1f (expected %.1f)%s"
            % (
                jax.process_count(),
                total,
                value,
                expected,
                "; " + "; ".join(problems) if problems else "",
            ),
        )

    def stage_backend(self, modules):
        _np, jax, _jnp = modules
        try:
            devices = jax.devices(self.expect)
        except Exception as err:  # RuntimeError: unknown or failed backend
            detail = "JAX has no '%s' backend here (%s)" % (self.expect, _first_line(err))
            if self.expect == "tpu":
                holders = device_holders()
                if holders:
                    detail += "; the TPU is held by " + ", ".join(
                        "pid %d (%s)" % (h["pid"], h["command"][:80]) for h in holders
                    )
                    detail += ": stop that process or restart the runtime"
                    self.receipt["tpu_holders"] = holders
                else:
                    detail += (
                        "; on a TPU VM check that jax[tpu] (libtpu) is installed in this "
                        "environment; in a notebook switch the runtime to TPU and restart"
                    )
            elif self.expect == "gpu":
                detail += (
                    "; JAX_PLATFORMS=%s: an NVIDIA GPU needs jax[cuda12] (or jax[cuda13]) "
                    "installed, an AMD GPU the jax ROCm plugin" % os.environ.get("JAX_PLATFORMS")
                )
            self.check("backend", "backend", False, detail)
            return None
        platforms = sorted({d.platform for d in devices})
        local = [d for d in devices if d.process_index == jax.process_index()]
        self.receipt.update(
            observed_backend=jax.default_backend(),
            device_count=len(devices),
            local_device_count=len(local),
            device_kinds=[str(d.device_kind) for d in devices],
            process_index=jax.process_index(),
            process_count=jax.process_count(),
        )
        ok = bool(devices) and platforms == [self.expect]
        self.check(
            "backend",
            "backend",
            ok,
            "%d %s device(s), kind %s"
            % (len(devices), "/".join(platforms), devices[0].device_kind if devices else "-"),
        )
        return local if ok else None

    def stage_prediction(self, modules, devices):
        np, jax, jnp = modules
        x_host = np.arange(24, dtype=np.float32).reshape(8, 3) / 8
        w_host = np.array(WEIGHTS, dtype=np.float32)
        try:
            x = jax.device_put(x_host, devices[0])
            w = jax.device_put(w_host, devices[0])
            predict = jax.jit(lambda a, b: a @ b + jnp.float32(BIAS))
            y = predict(x, w)
            y.block_until_ready()  # the completed result, not a handle to pending work
            out_devices = list(y.devices())
        except Exception as err:
            self.check(
                "placement",
                "placement",
                False,
                "the prediction did not run on %s: %s" % (devices[0], _first_line(err)),
            )
            return
        reference = x_host @ w_host + np.float32(BIAS)
        values = np.asarray(y)
        max_err = float(np.max(np.abs(values - reference)))
        out_platforms = {d.platform for d in out_devices}
        self.receipt.update(
            output_devices=[str(d) for d in out_devices],
            platform=out_devices[0].platform,
            shape=list(y.shape),
            dtype=str(y.dtype),
            prediction=[float(v) for v in values],
            max_absolute_error=max_err,
        )
        self.check(
            "placement",
            "placement",
            out_platforms == {self.expect},
            "output on %s" % ", ".join(self.receipt["output_devices"]),
        )
        course_err = float(np.max(np.abs(values - np.array(COURSE_PREDICTION))))
        self.check(
            "numeric",
            "numeric",
            max_err < TOLERANCE
            and course_err < TOLERANCE
            and list(y.shape) == [8]
            and str(y.dtype) == "float32",
            "first %.5f last %.5f, max |error| vs NumPy %.2g, vs course %.2g"
            % (values[0], values[-1], max_err, course_err),
        )

        changed = jax.jit(lambda a, b: a @ b + jnp.float32(CHANGED_BIAS))(x, w)
        changed.block_until_ready()
        shift = np.asarray(changed) - (reference - (BIAS - CHANGED_BIAS))
        self.check(
            "changed_bias",
            "numeric",
            float(np.max(np.abs(shift))) < TOLERANCE
            and {d.platform for d in changed.devices()} == {self.expect},
            "bias -1/4 moves every prediction down by 0.375 (first %.5f)"
            % float(np.asarray(changed)[0]),
        )

        reversed_y = predict(jax.device_put(x_host[::-1].copy(), devices[0]), w)
        reversed_y.block_until_ready()
        rev = np.asarray(reversed_y)
        self.check(
            "row_reversal",
            "numeric",
            float(np.max(np.abs(rev - reference[::-1]))) < TOLERANCE
            and {d.platform for d in reversed_y.devices()} == {self.expect},
            "reversed rows give reversed predictions (%.5f ... %.5f)" % (rev[0], rev[-1]),
        )

    def stage_contract(self, modules):
        np, jax, jnp = modules
        n_local = self.receipt["local_device_count"]
        expected_total = expected_sum_of_squares(n_local)
        self.receipt["expected_sum_of_squares"] = expected_total
        try:
            local = jax.local_devices(backend=self.expect)
            x = jnp.arange(n_local * ROWS_PER_DEVICE, dtype=jnp.float32).reshape(n_local, -1)
            per_device = jax.pmap(lambda row: jnp.sum(row * row), devices=local)(x)
            total = float(jax.block_until_ready(jnp.sum(per_device)))
        except Exception as err:
            self.check(
                "contract",
                "contract",
                False,
                "pmap over %d local devices failed: %s" % (n_local, _first_line(err)),
            )
            return
        self.receipt["pmap_sum_of_squares"] = total
        backend_ok = self.receipt["observed_backend"] == self.expect
        count_ok = self.receipt["device_count"] >= self.min_devices
        sum_ok = bool(np.isclose(total, expected_total))
        self.receipt["contract_ok"] = backend_ok and count_ok and sum_ok
        problems = []
        if not backend_ok:
            problems.append("default backend is %s" % self.receipt["observed_backend"])
        if not count_ok:
            problems.append(
                "%d devices, fewer than the %d required"
                % (self.receipt["device_count"], self.min_devices)
            )
        if not sum_ok:
            problems.append("sum %s != %s" % (total, expected_total))
        self.check(
            "contract",
            "contract",
            self.receipt["contract_ok"],
            "pmap sum of squares %.1f over %d device(s) (expected %.1f)%s"
            % (total, n_local, expected_total, "; " + "; ".join(problems) if problems else ""),
        )

    def stage_memory(self, modules):
        _np, jax, _jnp = modules
        memory = []
        for d in jax.local_devices(backend=self.expect):
            try:
                stats = d.memory_stats() or {}
            except Exception:
                stats = {}
            memory.append(
                {
                    "device": str(d),
                    "bytes_limit": stats.get("bytes_limit"),
                    "bytes_in_use": stats.get("bytes_in_use"),
                }
            )
        self.receipt["memory"] = memory
        if any(m["bytes_limit"] for m in memory):
            self.receipt["memory_limit_is"] = MEMORY_LIMIT_MEANING.get(self.expect)
        if self.expect == "gpu":  # the settings that size JAX's GPU pool
            self.receipt["memory_env"] = {
                k: v for k, v in os.environ.items() if k.startswith("XLA_PYTHON_CLIENT_")
            }

    def stage_perf(self, modules, devices):
        """Matmul throughput on random normal data (constant data flatters some hardware), the
        best of several trials after a warm-up, and bf16 as a fraction of the device's peak."""
        _np, jax, jnp = modules
        on_cpu = self.expect == "cpu"
        n = 1024 if on_cpu else 8192
        trials, reps = (3, 1) if on_cpu else (5, 10)
        results = {"matmul_size": n, "data": "random normal", "trials": trials, "reps": reps}
        try:
            for label, dtype in (("bf16", jnp.bfloat16), ("fp32", jnp.float32)):
                keys = jax.random.split(jax.random.PRNGKey(0), 2)
                a, b = (
                    jax.device_put(jax.random.normal(k, (n, n), dtype=dtype), devices[0])
                    for k in keys
                )
                mm = jax.jit(lambda p, q: p @ q)
                mm(a, b).block_until_ready()  # warm-up: compile outside the timing
                rates = []
                for _ in range(trials):
                    start = time.perf_counter()
                    for _ in range(reps):
                        out = mm(a, b)
                    out.block_until_ready()
                    rates.append(2 * n**3 * reps / (time.perf_counter() - start) / 1e12)
                results["%s_tflops" % label] = round(max(rates), 4)
                results["%s_tflops_trials" % label] = [round(r, 4) for r in rates]
        except Exception as err:
            self.check("perf", "contract", False, "matmul timing failed: %s" % _first_line(err))
            return
        kind = str(devices[0].device_kind)
        peak = PEAK_BF16_TFLOPS_PER_DEVICE.get(kind)
        results["device_kind"] = kind
        results["peak_bf16_tflops"] = peak
        results["peak_fraction"] = round(results["bf16_tflops"] / peak, 4) if peak else None
        self.receipt["perf"] = results
        self.check(
            "perf",
            "contract",
            True,
            "matmul %dx%d on random data, best of %d: bf16 %.3f TFLOP/s%s, fp32 %.3f TFLOP/s "
            "(one device)"
            % (
                n,
                n,
                trials,
                results["bf16_tflops"],
                " = %.1f%% of %s's %g peak" % (100 * results["peak_fraction"], kind, peak)
                if peak
                else " (no peak figure for %s)" % kind,
                results["fp32_tflops"],
            ),
        )

    def stage_precision(self, modules, devices):
        """The same matmul and MLP in fp32, bf16 and int8, against a float64 NumPy reference."""
        np, jax, jnp = modules
        try:
            profile = precision_profile(np, jax, jnp, devices[0])
        except Exception as err:
            self.check(
                "precision", "numeric", False, "precision profile failed: %s" % (_first_line(err))
            )
            return
        self.receipt["precision"] = profile
        problems = []
        for variant, bound in PRECISION_BOUNDS.items():
            entry = profile[variant]
            self.say(
                "       %-5s max |error| %.3g (relative %.2g), %s in, %s out: %s"
                % (
                    variant,
                    entry["max_abs_error"],
                    entry["max_rel_error"],
                    entry["dtype"],
                    entry["result_dtype"],
                    PRECISION_MEANING[variant],
                )
            )
            if not entry["max_rel_error"] <= bound:  # also catches NaN
                problems.append(
                    "%s error %.3g above %.3g" % (variant, entry["max_rel_error"], bound)
                )
        reference = profile["fp32"]["max_rel_error"]
        for variant in ("bf16", "int8"):
            if not profile[variant]["max_rel_error"] > reference:
                problems.append(
                    "%s is no less exact than fp32: it did not run in %s" % (variant, variant)
                )
        self.check(
            "precision",
            "numeric",
            not problems,
            "fp32 / bf16 / int8 relative error %.2g / %.2g / %.2g%s"
            % (
                profile["fp32"]["max_rel_error"],
                profile["bf16"]["max_rel_error"],
                profile["int8"]["max_rel_error"],
                "; " + "; ".join(problems) if problems else "",
            ),
        )

    def start_trace(self, modules):
        _np, jax, _jnp = modules
        try:
            os.makedirs(self.trace_dir, exist_ok=True)
            # A re-run into the same folder adds a new session; the receipt lists only this one.
            self._files_before = {f["path"] for f in trace_files(self.trace_dir)}
            jax.profiler.start_trace(self.trace_dir, create_perfetto_trace=True)
        except Exception as err:
            self.check(
                "trace", "contract", False, "could not start the profiler: %s" % (_first_line(err))
            )
            return False
        return True

    def stop_trace(self, modules):
        _np, jax, _jnp = modules
        try:
            jax.profiler.stop_trace()
        except Exception as err:
            self.check("trace", "contract", False, "the profiler failed: %s" % _first_line(err))
            return
        files = [f for f in trace_files(self.trace_dir) if f["path"] not in self._files_before]
        base = self.receipt_dir or os.getcwd()
        where = os.path.relpath(os.path.abspath(self.trace_dir), os.path.abspath(base))
        if where.startswith(".."):
            where = os.path.abspath(self.trace_dir)
        self.receipt["trace"] = {"dir": where, "files": files}
        total = sum(f["bytes"] for f in files)
        self.check(
            "trace",
            "contract",
            bool(files) and all(f["bytes"] > 0 for f in files),
            "%d file(s), %d bytes in %s" % (len(files), total, self.trace_dir),
        )
        self.say("       " + TRACE_HELP.replace("DIR", self.trace_dir))

    def finish(self):
        failed = [c for c in self.checks if not c["ok"]]
        self.receipt["checks"] = self.checks
        self.receipt["ok"] = not failed and len(self.checks) > 0
        self.receipt["failed_boundary"] = failed[0]["boundary"] if failed else None
        self.receipt["elapsed_s"] = round(time.perf_counter() - self._t0, 3)
        self.receipt["receipt_sha256"] = receipt_hash(self.receipt)
        if failed:
            self.say(
                "FAIL: the %s boundary failed (%s); this is not a %s run"
                % (failed[0]["boundary"], failed[0]["name"], self.expect)
            )
        else:
            self.say(
                "PASS: all %d checks hold on %s (receipt %s)"
                % (len(self.checks), self.expect, self.receipt["receipt_sha256"])
            )
        self.emit("receipt", {"receipt": self.receipt})
        return self.receipt


def trace_files(trace_dir):
    """Every file under ``trace_dir``: path relative to it, and size in bytes."""
    found = []
    for root, _dirs, names in os.walk(trace_dir):
        for name in sorted(names):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, trace_dir).replace(os.sep, "/")
            found.append({"path": rel, "bytes": os.path.getsize(path)})
    return sorted(found, key=lambda f: f["path"])


def _quantise(jnp, x):
    """Symmetric per-tensor int8: x ~ q * scale with q in [-127, 127]."""
    scale = jnp.max(jnp.abs(x)) / 127.0
    q = jnp.clip(jnp.round(x / scale), -127, 127).astype(jnp.int8)
    return q, scale


def precision_profile(np, jax, jnp, device):
    """max |error| and max |error| / max |reference| of fp32, bf16 and int8 on a 256-cube matmul
    and a 128-256-10 MLP forward pass. The inputs are random normal, so most are not exact in
    bf16; the reference is float64 NumPy on the host."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((256, 256)).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((64, 128)).astype(np.float32)
    w1 = (rng.standard_normal((128, 256)) / np.sqrt(128)).astype(np.float32)
    b1 = (0.1 * rng.standard_normal(256)).astype(np.float32)
    w2 = (rng.standard_normal((256, 10)) / np.sqrt(256)).astype(np.float32)
    b2 = (0.1 * rng.standard_normal(10)).astype(np.float32)
    f64 = [v.astype(np.float64) for v in (a, b, x, w1, b1, w2, b2)]
    ref_matmul = f64[0] @ f64[1]
    ref_mlp = np.maximum(f64[2] @ f64[3] + f64[4], 0) @ f64[5] + f64[6]
    highest = jax.lax.Precision.HIGHEST

    def fp32_mm(p, q):
        return jnp.matmul(p, q, precision=highest)

    def bf16_mm(p, q):
        return p.astype(jnp.bfloat16) @ q.astype(jnp.bfloat16)

    def int8_mm(p, q):
        qp, sp = _quantise(jnp, p)
        qq, sq = _quantise(jnp, q)
        acc = jax.lax.dot(qp, qq, preferred_element_type=jnp.float32)
        return acc * (sp * sq)

    def mlp(mm, cast):
        def forward(x, w1, b1, w2, b2):
            h = jnp.maximum(mm(x, w1) + cast(b1), 0)
            return mm(h, w2) + cast(b2)

        return forward

    variants = {
        "fp32": (fp32_mm, lambda v: v),
        "bf16": (bf16_mm, lambda v: v.astype(jnp.bfloat16)),
        "int8": (int8_mm, lambda v: v),
    }
    on_device = [jax.device_put(v, device) for v in (a, b, x, w1, b1, w2, b2)]
    profile = {
        "reference": "float64 NumPy on the host",
        "matmul_shape": [256, 256, 256],
        "mlp_shape": [64, 128, 256, 10],
    }
    for name, (mm, cast) in variants.items():
        y_mm = jax.jit(mm)(*on_device[:2])
        y_mlp = jax.jit(mlp(mm, cast))(*on_device[2:])
        parts = {}
        for part, y, ref in (("matmul", y_mm, ref_matmul), ("mlp", y_mlp, ref_mlp)):
            err = float(np.max(np.abs(np.asarray(y, dtype=np.float64) - ref)))
            parts[part] = {
                "max_abs_error": err,
                "max_rel_error": err / float(np.max(np.abs(ref))),
                "output_dtype": str(y.dtype),
            }
        operand = {"fp32": "float32", "bf16": "bfloat16", "int8": "int8"}[name]
        lowered = jax.jit(mm).lower(*on_device[:2]).as_text()
        profile[name] = {
            # The dtype the compiled matmul really takes, read from its lowered program.
            "dtype": operand if _mlir_type(operand) in lowered else "unknown",
            "result_dtype": str(y_mm.dtype),
            "max_abs_error": max(p["max_abs_error"] for p in parts.values()),
            "max_rel_error": max(p["max_rel_error"] for p in parts.values()),
            "matmul": parts["matmul"],
            "mlp": parts["mlp"],
        }
    return profile


def _mlir_type(dtype):
    return {"float32": "f32", "bfloat16": "bf16", "int8": "i8"}[dtype]


def _first_line(err):
    text = str(err).strip().splitlines()
    return "%s: %s" % (type(err).__name__, text[0] if text else "")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tpu_verify", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--expect",
        default=os.environ.get("COURSE_EXPECT_PLATFORM", "cpu"),
        help="platform that must run the computation: cpu, tpu or gpu "
        "(default: $COURSE_EXPECT_PLATFORM, else cpu)",
    )
    parser.add_argument(
        "--min-devices", type=int, default=1, help="fail the contract with fewer devices than this"
    )
    parser.add_argument("--perf", action="store_true", help="also time bf16/fp32 matmuls")
    parser.add_argument(
        "--precision",
        action="store_true",
        help="also measure fp32, bf16 and int8 error on a matmul and a small MLP",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="capture a jax.profiler trace of the compute steps (see --trace-dir)",
    )
    parser.add_argument(
        "--trace-dir",
        help="where --trace writes (default: trace/ beside the receipt, else ./trace)",
    )
    parser.add_argument("--receipt", help="write the receipt JSON to this path")
    parser.add_argument(
        "--package",
        action="append",
        default=[],
        help="record this installed package's version in the receipt (repeatable)",
    )
    parser.add_argument(
        "--laptop-jax",
        metavar="VERSION",
        help="record the JAX version of the computer that launched this run in the receipt",
    )
    parser.add_argument(
        "--num-processes",
        type=int,
        default=1,
        help="VMs in a multi-host slice: every one runs this program",
    )
    parser.add_argument(
        "--process-id", type=int, help="this VM's index (omit on Cloud TPU: it is detected)"
    )
    parser.add_argument("--coordinator", help="HOST:PORT of process 0 (omit on Cloud TPU)")
    parser.add_argument("--global-devices", type=int, help="devices the whole slice must have")
    parser.add_argument(
        "--join-timeout", type=int, default=300, help="seconds to wait for every VM to join"
    )
    args = parser.parse_args(argv)
    if args.expect not in PLATFORMS:
        parser.error("--expect must be one of %s, not %r" % (", ".join(PLATFORMS), args.expect))
    if args.min_devices < 1:
        parser.error("--min-devices must be 1 or more")
    # Only the requested platform is initialised, so a CPU run never grabs a TPU, and a TPU
    # request cannot quietly fall back to CPU. An explicit JAX_PLATFORMS wins, except a bare
    # "gpu", which current JAX cannot initialise on a machine with only one GPU runtime.
    if os.environ.get("JAX_PLATFORMS", args.expect) == args.expect:
        os.environ["JAX_PLATFORMS"] = jax_platform_for(
            args.expect, gpu_runtimes() if args.expect == "gpu" else set()
        )
    if args.num_processes < 1:
        parser.error("--num-processes must be 1 or more")
    if args.coordinator and args.process_id is None:
        parser.error("--coordinator needs --process-id")
    spec = SliceSpec(
        args.num_processes,
        args.process_id,
        args.coordinator,
        args.global_devices,
        args.join_timeout,
    )
    receipt_dir = os.path.dirname(os.path.abspath(args.receipt)) if args.receipt else None
    trace_dir = None
    if args.trace or args.trace_dir:
        trace_dir = args.trace_dir or os.path.join(receipt_dir or os.getcwd(), "trace")
    receipt = Verifier(
        args.expect,
        args.min_devices,
        args.perf,
        slice_spec=spec,
        precision=args.precision,
        trace_dir=trace_dir,
        receipt_dir=receipt_dir,
        packages=args.package,
        laptop_jax=args.laptop_jax,
    ).run()
    if args.receipt:
        path = os.path.abspath(args.receipt)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(receipt, f, indent=2, sort_keys=True)
            f.write("\n")
        print("receipt written to %s" % path, flush=True)
    return 0 if receipt["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
