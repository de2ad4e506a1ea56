#!/usr/bin/env bash
# Written by tpuwizard export for v6e-16 x 1: the bootstrap, the
# verifier and the script, as tpuwizard launch runs them on a TPU VM.
set -u
mkdir -p .tpuwizard
venv=.tpuwizard/venv
export PATH="$HOME/.local/bin:$PATH"
if [ -x "$venv/bin/python" ]; then echo "venv already present: $venv"; else
  if ! command -v uv >/dev/null 2>&1; then
    echo "installing uv with pip --user"
    if ! python3 -m pip install --quiet --user uv; then
      echo "pip could not install uv; trying uv's standalone installer"
      installer="$(mktemp)"
      curl -LsSf https://astral.sh/uv/install.sh -o "$installer" && sh "$installer" || echo "uv's standalone installer failed too"
    fi
  fi
  if ! command -v uv >/dev/null 2>&1; then
    if python3 -m pip --version >/dev/null 2>&1; then echo 'TPUWIZARD {"kind": "bootstrap_failed", "missing": "uv (the worker cannot reach PyPI or astral.sh: a worker without an external address has no route out unless the network has Cloud NAT)", "fix": "create the node with external IPs (leave out --internal-ips) or add Cloud NAT; then sudo apt-get install -y python3-pip if pip is missing"}'; exit 1; else echo 'TPUWIZARD {"kind": "bootstrap_failed", "missing": "uv (pip is missing from the system Python, and uv'"'"'s installer could not be fetched)", "fix": "sudo apt-get update && sudo apt-get install -y python3-pip"}'; exit 1; fi
  fi
  echo "creating the venv on a uv-managed Python 3.12"
  uv venv --quiet --python 3.12 "$venv" || { echo 'TPUWIZARD {"kind": "bootstrap_failed", "missing": "a Python >= 3.11 (uv could not provide Python 3.12)", "fix": "sudo apt-get update && sudo apt-get install -y python3.11 python3.11-venv"}'; exit 1; }
  echo "installing jax[tpu]==0.12.0.1 with uv"
  uv pip install --python "$venv/bin/python" 'jax[tpu]==0.12.0.1' numpy || { rm -rf "$venv"; echo 'TPUWIZARD {"kind": "bootstrap_failed", "missing": "jax[tpu]==0.12.0.1 (uv could not install it on Python 3.12)", "fix": "check that the worker reaches https://pypi.org; the version is pinned in tpuwizard/core/remote/bootstrap.py"}'; exit 1; }
fi
export PATH="$HOME/.local/bin:$PATH"
printf '%s\n' optax > .tpuwizard/added-packages.txt
.tpuwizard/venv/bin/python -c 'from importlib import metadata
for n in ('"'"'jax'"'"', '"'"'jaxlib'"'"', '"'"'libtpu'"'"', '"'"'libtpu-nightly'"'"'):
    try:
        print(n + '"'"'=='"'"' + metadata.version(n))
    except metadata.PackageNotFoundError:
        pass
' > .tpuwizard/held-by-tpuwizard.txt
echo 'installing optax with uv (jax, jaxlib and libtpu held as they are)'
uv pip install --python .tpuwizard/venv/bin/python -r .tpuwizard/added-packages.txt -c .tpuwizard/held-by-tpuwizard.txt 2>&1 || { echo 'TPUWIZARD {"kind": "packages_failed"}'; exit 1; }
"$venv/bin/python" -c 'import json, sys
from importlib import metadata
def v(n):
    try:
        return metadata.version(n)
    except metadata.PackageNotFoundError:
        return None
print('"'"'TPUWIZARD '"'"' + json.dumps({'"'"'kind'"'"': '"'"'versions'"'"', '"'"'python'"'"': sys.version.split()[0], '"'"'jax'"'"': v('"'"'jax'"'"'), '"'"'jaxlib'"'"': v('"'"'jaxlib'"'"'), '"'"'libtpu'"'"': v('"'"'libtpu'"'"') or v('"'"'libtpu-nightly'"'"'), '"'"'numpy'"'"': v('"'"'numpy'"'"'), '"'"'requested'"'"': sys.argv[1], '"'"'packages'"'"': {n: v(n) for n in sys.argv[2:]}}))
' 'jax[tpu]==0.12.0.1' optax
# The environment every tpuwizard route gives the verifier and the script.
export COURSE_EXPECT_PLATFORM=tpu
export JAX_PLATFORMS=tpu
export TPUWIZARD_RUN_ID=tpuwizard-run
.tpuwizard/venv/bin/python -u export-xpk/tpu_verify.py --expect tpu --min-devices 4 --receipt .tpuwizard/runs/tpuwizard-run/receipt.json --package optax --num-processes 4 --global-devices 16 --join-timeout 300 || exit $?
.tpuwizard/venv/bin/python -u train.py --steps 100 || exit $?
