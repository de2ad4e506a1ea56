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

    COURSE_EXPECT_PLATFORM=tpu python tpu_verify.py --receipt receipt.json
    python tpu_verify.py --expect cpu --min-devices 4 --perf
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
    def __init__(self, expect, min_devices, perf, out=None, slice_spec=None):
        self.expect = expect
        self.min_devices = min_devices
        self.perf = perf
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
            "memory": None,
            "perf": None,
        }
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
            "tpu_verify: expecting platform '%s' on %s (Python %s)"
            % (self.expect, self.receipt["hostname"], self.receipt["python"])
        )
        modules = self.stage_import()
        joined = modules is None or self.slice.processes == 1 or self.stage_join(modules)
        if not joined:
            return self.finish()
        if modules is not None:
            devices = self.stage_backend(modules)
            if devices is not None:
                self.stage_prediction(modules, devices)
                self.stage_contract(modules)
                if self.slice.processes > 1:
                    self.stage_slice(modules)
                self.stage_memory(modules)
                if self.perf:
                    self.stage_perf(modules, devices)
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

    def stage_perf(self, modules, devices):
        _np, jax, jnp = modules
        n = 1024 if self.expect == "cpu" else 8192
        results = {"matmul_size": n}
        try:
            for label, dtype in (("bf16", jnp.bfloat16), ("fp32", jnp.float32)):
                a = jax.device_put(jnp.ones((n, n), dtype=dtype), devices[0])
                mm = jax.jit(lambda p, q: p @ q)
                mm(a, a).block_until_ready()  # warm-up: compile outside the timing
                reps = 3 if self.expect == "cpu" else 20
                start = time.perf_counter()
                for _ in range(reps):
                    out = mm(a, a)
                out.block_until_ready()
                seconds = time.perf_counter() - start
                results["%s_tflops" % label] = round(2 * n**3 * reps / seconds / 1e12, 4)
        except Exception as err:
            self.check("perf", "contract", False, "matmul timing failed: %s" % _first_line(err))
            return
        self.receipt["perf"] = results
        self.check(
            "perf",
            "contract",
            True,
            "matmul %dx%d: bf16 %.3f TFLOP/s, fp32 %.3f TFLOP/s (one device)"
            % (n, n, results["bf16_tflops"], results["fp32_tflops"]),
        )

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
    parser.add_argument("--receipt", help="write the receipt JSON to this path")
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
    # request cannot quietly fall back to CPU. An explicit JAX_PLATFORMS wins.
    os.environ.setdefault("JAX_PLATFORMS", args.expect)
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
    receipt = Verifier(args.expect, args.min_devices, args.perf, slice_spec=spec).run()
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
