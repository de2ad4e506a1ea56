"""The commands that prepare a worker: a venv with JAX (uv when it can be had, else pip).

The same script runs on a real TPU VM and in the sandbox; only its parameters differ. On a TPU VM
it installs ``jax[tpu]``; in the sandbox it builds the venv with ``--system-site-packages`` over
the interpreter tpuwizard runs in, so ``jax`` is already satisfied and nothing is downloaded.
Its last line reports the resolved versions as ``TPUWIZARD {json}`` for the receipt.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from tpuwizard.core.remote.transports import REMOTE_DIR

VENV = f"{REMOTE_DIR}/venv"


@dataclass(frozen=True)
class BootstrapPlan:
    """How to build the worker venv; the defaults are a real TPU VM's."""

    python: str = "python3"
    requirement: str = "jax[tpu]"
    system_site_packages: bool = False
    try_uv: bool = True
    # Sandbox only: site-packages folders of tpuwizard's own environment, added to the worker venv
    # with a .pth file, so the jax that tpuwizard runs with satisfies the requirement offline.
    parent_site: tuple[str, ...] = ()

    @property
    def install_line(self) -> str:
        return f"pip install {self.requirement} numpy"


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
    " 'numpy': v('numpy')}))\n"
)


def bootstrap_script(plan: BootstrapPlan) -> str:
    """A bash script (run with ``bash -c``) that makes the venv once and reports versions."""
    q = shlex.quote
    site = " --system-site-packages" if plan.system_site_packages else ""
    packages = f"{q(plan.requirement)} numpy"
    link_parent = ""
    if plan.parent_site:
        lines = "\n".join(plan.parent_site)
        link_parent = (
            'sp=$("$venv/bin/python" -c '
            "'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')"
            f" && printf '%s\\n' {q(lines)} > \"$sp/tpuwizard-parent.pth\" &&"
        )
    return "\n".join(
        [
            "set -u",
            f"mkdir -p {q(REMOTE_DIR)}",
            f"venv={q(VENV)}",
            'if [ -x "$venv/bin/python" ]; then echo "venv already present: $venv"; else',
            "  installer=pip",
            f"  if [ {int(plan.try_uv)} = 1 ]; then",
            '    export PATH="$HOME/.local/bin:$PATH"',
            "    command -v uv >/dev/null 2>&1 || "
            f"{q(plan.python)} -m pip install --quiet --user uv >/dev/null 2>&1 || true",
            "    command -v uv >/dev/null 2>&1 && installer=uv",
            "  fi",
            '  echo "installing with $installer"',
            '  if [ "$installer" = uv ]; then',
            f'    uv venv{site} --python {q(plan.python)} "$venv" && {link_parent}'
            f' uv pip install --python "$venv/bin/python" {packages} || exit 1',
            "  else",
            f'    {q(plan.python)} -m venv{site} "$venv" && {link_parent}'
            f' "$venv/bin/python" -m pip install --quiet --disable-pip-version-check {packages}'
            " || exit 1",
            "  fi",
            "fi",
            f'"$venv/bin/python" -c {q(VERSIONS_SNIPPET)}',
        ]
    )


def sandbox_plan() -> BootstrapPlan:
    """The sandbox's plan: this interpreter, plain jax, and this environment's packages."""
    import sys
    import sysconfig

    paths = sysconfig.get_paths()
    site = tuple(dict.fromkeys([paths["purelib"], paths["platlib"]]))
    return BootstrapPlan(
        python=sys.executable,
        requirement="jax",
        system_site_packages=True,
        try_uv=False,
        parent_site=site,
    )
