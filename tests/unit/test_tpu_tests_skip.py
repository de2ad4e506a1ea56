"""tests/tpu/ skips where there is no TPU, and finds that out without importing JAX (CI has no
TPU, and JAX's import is slow); on the chip its files run as plain scripts."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO, clean_env


def test_collecting_tests_tpu_imports_no_jax_and_skips_here():
    code = (
        "import sys; import tests.tpu.conftest, tests.tpu.test_fit_on_chip; "
        "from tests.tpu import tpu_present; "
        "print(tpu_present(), 'jax' in sys.modules, 'libtpu' in sys.modules)"
    )
    env = clean_env()
    env.pop("TPUWIZARD_TPU_TESTS", None)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False", "False"]
