"""An interactive shell on a worker, through the same transport the runs use, with what the
script had: it starts in the folder the script ran in (``WORK_DIR``, where a launch and
``tpuwizard run`` put the script's folder) when it exists, else in the worker's home; the venv
tpuwizard made is active and the script's variables (``COURSE_EXPECT_PLATFORM``,
``JAX_PLATFORMS``) are set; ``.venv`` in that folder points at the venv, so the course's
``.venv/bin/python main.py`` works as printed; a banner names all three.

The shell reads a small rc file written to the worker first (after the user's own ~/.bashrc),
so the same words serve the sandbox's local shell, OpenSSH and gcloud's ssh."""

from __future__ import annotations

import posixpath
import shlex
from pathlib import Path

from tpuwizard.core.remote.bootstrap import VENV
from tpuwizard.core.remote.sync import WORK_DIR
from tpuwizard.core.remote.transports import (
    REMOTE_DIR,
    GcloudTransport,
    LocalTransport,
    SshTransport,
    Transport,
)

SHELL_RC = f"{REMOTE_DIR}/shell.rc"  # under the worker's home
# The script's variables the banner names (the rest of its environment is set too).
NAMED_VARIABLES = ("COURSE_EXPECT_PLATFORM", "JAX_PLATFORMS")


def shell_rc(folder: str, env: dict[str, str]) -> str:
    """The rc file: the user's own bashrc, then the folder, its ``.venv`` link, the script's
    variables, the venv, and the banner. Paths are relative to the worker's home."""
    venv_from_folder = posixpath.relpath(VENV, folder)
    exports = [f"export {k}={shlex.quote(v)}" for k, v in sorted(env.items())]
    named = " ".join(f"{k}={env[k]}" for k in NAMED_VARIABLES if k in env) or "none"
    lines = [
        "# Written by tpuwizard for its Shell: your script's folder, venv and variables.",
        '[ -f "$HOME/.bashrc" ] && . "$HOME/.bashrc"',
        f'if cd "$HOME"/{shlex.quote(folder)} 2>/dev/null; then',
        f"  [ -e .venv ] || [ -L .venv ] || ln -s {shlex.quote(venv_from_folder)} .venv",
        "fi",
        *exports,
        f'. "$HOME"/{shlex.quote(VENV)}/bin/activate',
        "echo \"tpuwizard shell: in $PWD (your script's folder), venv $VIRTUAL_ENV active "
        "(python, pip; .venv here points at it), " + named + " set as for your script. "
        'Type exit to come back."',
    ]
    return "\n".join(lines) + "\n"


def interactive_command(
    transport: Transport,
    worker: int,
    folder: str = WORK_DIR,
    env: dict[str, str] | None = None,
) -> tuple[list[str], str | None, dict[str, str] | None]:
    """(argv, cwd, env) that open an interactive shell on ``worker`` with a terminal, set up as
    the module says, ``env`` being the script's extra environment (script_env). Writes the rc
    file to the worker first."""
    transport.upload(worker, shell_rc(folder, env or {}).encode(), SHELL_RC, mode="600")
    if isinstance(transport, LocalTransport):  # the sandbox: a folder of this machine, own HOME
        home = Path(transport.cwd(worker))
        work = home / folder
        argv = ["bash", "--rcfile", str(home / SHELL_RC), "-i"]
        return argv, str(work if work.is_dir() else home), transport.env(worker)
    login = f"exec bash --rcfile {shlex.quote(SHELL_RC)} -i"
    if isinstance(transport, SshTransport):
        # The command starts in the home; the rc file changes to the folder.
        argv = transport.argv(worker, login)
        # -t: a terminal for the shell; BatchMode stays (keys only, no password prompts).
        return [argv[0], "-t", *argv[1:]], None, None
    if isinstance(transport, GcloudTransport):
        # gcloud passes what follows "--" to ssh: -t gives the command a terminal.
        return [*transport.argv(worker, login), "--", "-t"], None, None
    raise TypeError(f"no interactive shell through {type(transport).__name__}")
