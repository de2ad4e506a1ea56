#!/usr/bin/env bash
# The verifier on a real GPU, as issue 15 asks: --expect gpu with every optional check.
# Run it on the accelerator machine from the repository root; PYTHON must have jax with its CUDA
# (or ROCm) plugin. Writes the receipt and the trace under ${OUT:-gpu-check}/ and prints the
# figures the README's GPU section quotes.
set -euo pipefail
PYTHON=${PYTHON:-python3}
OUT=${OUT:-gpu-check}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$PYTHON" -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__)'
set +e
"$PYTHON" -u verify/tpu_verify.py --expect gpu --perf --precision --trace \
    --receipt "$OUT/receipt.json" | grep -v '^TPUWIZARD '
code=${PIPESTATUS[0]}
set -e
"$PYTHON" - "$OUT/receipt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
perf = r.get("perf") or {}
print("ok", r["ok"], "jax_platforms", r.get("jax_platforms"), "kinds", sorted(set(r["device_kinds"])))
print("bf16 TFLOP/s", perf.get("bf16_tflops"), "trials", perf.get("bf16_tflops_trials"))
print("fp32 TFLOP/s", perf.get("fp32_tflops"), "peak_fraction", perf.get("peak_fraction"))
print("memory", r.get("memory"), r.get("memory_limit_is"), r.get("memory_env"))
for v in ("fp32", "bf16", "int8"):
    e = (r.get("precision") or {}).get(v) or {}
    print(v, e.get("max_abs_error"), e.get("max_rel_error"), e.get("dtype"), e.get("result_dtype"))
print("trace", [(f["path"], f["bytes"]) for f in (r.get("trace") or {}).get("files", [])])
print("receipt_sha256", r["receipt_sha256"])
PY
exit "$code"
