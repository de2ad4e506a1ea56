#!/usr/bin/env bash
# Installs tpuwizard with its test and docs extras into .venv and runs every check: ruff, the
# import-linter contracts, mypy (strict flags for the core), the documentation site's strict
# build and the whole pytest suite.
# Needs only Python 3.11+ to start with.
# The tpu-plan extra brings libtpu, so `fit --program`'s tests run the real TPU compile.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test,tpu-plan,docs]'
bash scripts/install-sshd.sh

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/lint-imports
.venv/bin/mypy
# The documentation site: a broken link, a missing page or a stale generated table fails here.
site="$(mktemp -d)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site"
rm -rf "$site"
# Three workers (PYTEST_WORKERS to change; 0 runs in this process): most tests wait on sandboxes,
# SSH and JAX processes rather than the CPU, so three share a 2-core machine well. worksteal: a
# worker that runs out takes half of another's queue; xdist's default hands out fixed chunks, and
# the worker left with the slow end-to-end drills ran alone for minutes (1018 s of pytest on two
# quiet cores, for 627 s of tests per worker).
.venv/bin/python -m pytest -n "${PYTEST_WORKERS:-3}" --dist worksteal "$@"
