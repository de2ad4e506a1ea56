"""The commands that prepare a worker: uv, a venv on a uv-managed Python, and the pinned JAX.

TPU runtime images ship Python 3.10 and often no ``venv`` module (google-behaviour.md, "On the
VM"); current JAX needs Python >= 3.11, and ``pip install jax[tpu]`` on 3.10 quietly resolves
jax 0.6.2 / libtpu 0.0.17. So the worker never builds on the system Python: it installs uv
(``pip --user``, else uv's standalone installer), lets uv provide Python 3.12, and installs the
``jax[tpu]`` version the plan names from tpuwizard's table (core/plan/jax_versions.py). Nothing
falls back to an older JAX: when a step fails, the script prints a ``TPUWIZARD {"kind":
"bootstrap_failed"}`` line naming the missing piece and the apt command that supplies it, and
exits non-zero.

The same script runs on a real TPU VM and in the sandbox; only the requirement differs (the
sandbox's image hands uv tpuwizard's own interpreter and environment, see
``tpuwizard/sandbox/workers/image.py``). Its last line reports the resolved versions as
``TPUWIZARD {json}`` for the receipt, next to the version that was asked for.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tpuwizard.core.plan import jax_versions
from tpuwizard.core.remote.transports import REMOTE_DIR

VENV = f"{REMOTE_DIR}/venv"
# The JAX version tpuwizard installs on a TPU VM unless --jax names another from the table
# (core/plan/jax_versions.py): the newest one its verifier and tests run with every time.
TESTED_JAX = jax_versions.DEFAULT.version
TPU_REQUIREMENT = f"jax[tpu]=={TESTED_JAX}"
# uv downloads this Python on the VM (python-build-standalone); JAX needs >= 3.11.
MANAGED_PYTHON = "3.12"
UV_INSTALLER = "https://astral.sh/uv/install.sh"


@dataclass(frozen=True)
class BootstrapPlan:
    """How to build the worker venv; the defaults are a real TPU VM's."""

    requirement: str = TPU_REQUIREMENT
    python_request: str = MANAGED_PYTHON
    system_python: str = "python3"  # only to install uv with pip --user

    def with_jax(self, version: str | None) -> BootstrapPlan:
        """The same plan pinned to ``version`` (from the table; None: unchanged), keeping the
        requirement's name and extras (``jax[tpu]`` on a VM, ``jax`` in practice)."""
        if version is None:
            return self
        name = self.requirement.partition("==")[0].strip()
        return replace(self, requirement=f"{name}=={version}")

    @property
    def pinned_jax(self) -> str | None:
        """The exact jax version the requirement pins, if it pins one."""
        _, sep, version = self.requirement.partition("==")
        return version.strip() if sep else None


VERSIONS_SNIPPET = (
    "import json, sys\n"
    "from importlib import metadata\n"
    "def v(n):\n"
    "    try:\n"
    "        return metadata.version(n)\n"
    "    except metadata.PackageNotFoundError:\n"
    "        return None\n"
    "print('TPUWIZARD ' + json.dumps({'kind': 'versions', 'python': sys.version.split()[0],"
    " 'jax': v('jax'), 'jaxlib': v('jaxlib'), 'libtpu': v('libtpu') or v('libtpu-nightly'),"
    " 'numpy': v('numpy'), 'requested': sys.argv[1],"
    " 'packages': {n: v(n) for n in sys.argv[2:]}}))\n"
)


def _failure(missing: str, fix: str) -> str:
    """A shell command printing the failure marker (its text fixed here, so quoting is safe)."""
    line = "TPUWIZARD " + json.dumps({"kind": "bootstrap_failed", "missing": missing, "fix": fix})
    return f"echo {shlex.quote(line)}; exit 1"


NO_PIP = _failure(
    "uv (pip is missing from the system Python, and uv's installer could not be fetched)",
    "sudo apt-get update && sudo apt-get install -y python3-pip",
)
# Why a worker cannot download (google-behaviour.md, Creating), and the fix: said the same way
# when uv cannot be fetched and when a package cannot (core/remote/packages.py).
NO_ROUTE_WHY = (
    "the worker cannot reach PyPI or astral.sh: a worker without an external address has no "
    "route out unless the network has Cloud NAT"
)
NO_ROUTE_FIX = "create the node with external IPs (leave out --internal-ips) or add Cloud NAT"
NO_ROUTE = _failure(
    f"uv ({NO_ROUTE_WHY})",
    f"{NO_ROUTE_FIX}; then sudo apt-get install -y python3-pip if pip is missing",
)
NO_MANAGED_PYTHON = _failure(
    f"a Python >= 3.11 (uv could not provide Python {MANAGED_PYTHON})",
    "sudo apt-get update && sudo apt-get install -y python3.11 python3.11-venv",
)


def bootstrap_script(
    plan: BootstrapPlan, then: Sequence[str] = (), report: Sequence[str] = ()
) -> str:
    """A bash script (run with ``bash -c``) that makes the venv once and reports versions.

    ``then``: bash lines run once the venv holds the pinned JAX (the added packages' install);
    ``report``: the names of packages whose installed versions the versions line also gives."""
    q = shlex.quote
    py = q(plan.system_python)
    no_install = _failure(
        f"{plan.requirement} (uv could not install it on Python {plan.python_request})",
        "check that the worker reaches https://pypi.org; the version is pinned in "
        "tpuwizard/core/remote/bootstrap.py",
    )
    return "\n".join(
        [
            "set -u",
            f"mkdir -p {q(REMOTE_DIR)}",
            f"venv={q(VENV)}",
            'export PATH="$HOME/.local/bin:$PATH"',
            'if [ -x "$venv/bin/python" ]; then echo "venv already present: $venv"; else',
            "  if ! command -v uv >/dev/null 2>&1; then",
            '    echo "installing uv with pip --user"',
            f"    if ! {py} -m pip install --quiet --user uv; then",
            '      echo "pip could not install uv; trying uv\'s standalone installer"',
            '      installer="$(mktemp)"',
            # Downloaded to a file first: a failed curl piped into sh would look like success.
            f'      curl -LsSf {q(UV_INSTALLER)} -o "$installer" && sh "$installer" ||'
            ' echo "uv\'s standalone installer failed too"',
            "    fi",
            "  fi",
            "  if ! command -v uv >/dev/null 2>&1; then",
            f"    if {py} -m pip --version >/dev/null 2>&1; then {NO_ROUTE}; else {NO_PIP}; fi",
            "  fi",
            f'  echo "creating the venv on a uv-managed Python {plan.python_request}"',
            f'  uv venv --quiet --python {q(plan.python_request)} "$venv" || '
            f"{{ {NO_MANAGED_PYTHON}; }}",
            f'  echo "installing {plan.requirement} with uv"',
            f'  uv pip install --python "$venv/bin/python" {q(plan.requirement)} numpy || '
            f'{{ rm -rf "$venv"; {no_install}; }}',
            "fi",
            *then,
            f'"$venv/bin/python" -c {q(VERSIONS_SNIPPET)} '
            + " ".join(q(a) for a in (plan.requirement, *report)),
        ]
    )


def unpinned_jax(plan: BootstrapPlan, versions: dict[int, dict[str, Any]]) -> str | None:
    """Why the workers' JAX is not the pinned one (an old venv, a resolver surprise), or None.

    ``versions`` is each worker's versions line. tpuwizard never runs on a JAX it did not test.
    """
    pinned = plan.pinned_jax
    wrong = {w: v.get("jax") for w, v in versions.items() if v.get("jax") != pinned}
    if not pinned or not wrong:
        return None
    found = ", ".join(f"worker {w} has jax {v}" for w, v in sorted(wrong.items()))
    return (
        f"{found}, but tpuwizard installs jax {pinned} ({plan.requirement}): remove "
        f"~/{VENV} on the worker so the next launch rebuilds it, or launch a fresh node"
    )


def sandbox_plan() -> BootstrapPlan:
    """The sandbox's plan: the same script, pinned to the CPU jax of the table's default.

    The sandbox's worker image hands uv tpuwizard's interpreter and environment where that JAX
    is tpuwizard's own, else a Python 3.12 and this computer's shared worker environment for it
    (sandbox/workers/envs.py) in place of the downloads.
    """
    return BootstrapPlan(requirement=f"jax=={TESTED_JAX}")
