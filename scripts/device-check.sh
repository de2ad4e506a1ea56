#!/usr/bin/env bash
# tpuwizard held against the accelerator at hand (issue 45; it replaces the GPU-only
# gpu-check.sh). Run it from the repository root on the accelerator machine:
#
#     bash scripts/device-check.sh            # writes ${OUT:-device-check-out}/device-check.json
#
# It needs only Python 3.11+, NumPy and JAX (jax[tpu] with libtpu on a TPU): tpuwizard's own
# dependencies are not installed there, so its core modules are read from this checkout, and
# libtpu's TPU_* settings are left as the machine has them. Steps and the JSON's fields: see
# scripts/device_check.py. Files written under OUT: device-check.json (the one report),
# receipt.json (the verifier's receipt) and device-check.log (what this script printed).
# Exit 0 only when every step held on a TPU; without one it says so in the JSON and exits 1
# (--allow-cpu: a practice run of every step on CPU devices, labelled so, still exit 1).
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
OUT=${OUT:-device-check-out}
mkdir -p "$OUT"
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
"$PYTHON" -c 'import jax, numpy; print("jax", jax.__version__, "numpy", numpy.__version__)' \
    || { echo "device-check: JAX and NumPy are needed" >&2; exit 2; }
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" TPUWIZARD_HOME="$home" PYTHONUNBUFFERED=1 \
    "$PYTHON" -u scripts/device_check.py --out "$OUT" "$@" 2>&1 | tee "$OUT/device-check.log"
exit "${PIPESTATUS[0]}"
