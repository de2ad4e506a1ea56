"""An interactive shell on a worker, through the same transport the runs use. It starts in the
folder the script ran in when there is one (a launch's run folder, or ``WORK_DIR`` where
``tpuwizard run`` syncs the experiment), else in the worker's home."""

from __future__ import annotations

from pathlib import Path

from tpuwizard.core.remote.sync import WORK_DIR
from tpuwizard.core.remote.transports import (
    GcloudTransport,
    LocalTransport,
    SshTransport,
    Transport,
    shell,
)


def interactive_command(
    transport: Transport, worker: int, folder: str = WORK_DIR
) -> tuple[list[str], str | None, dict[str, str] | None]:
    """(argv, cwd, env) that open a login shell on ``worker`` with a terminal, in ``folder``
    (relative to the worker's home) when it exists there, else in the home."""
    if isinstance(transport, LocalTransport):  # the sandbox: a folder of this machine, own HOME
        home = Path(transport.cwd(worker))
        work = home / folder
        return ["bash", "-i"], str(work if work.is_dir() else home), transport.env(worker)
    if isinstance(transport, SshTransport):
        # The command starts in the home; without the folder it stays there.
        argv = transport.argv(worker, f"{shell('cd', folder)} 2>/dev/null; exec bash -l")
        # -t: a terminal for the shell; BatchMode stays (keys only, no password prompts).
        return [argv[0], "-t", *argv[1:]], None, None
    if isinstance(transport, GcloudTransport):
        argv = [a for a in transport.argv(worker, "") if not a.startswith("--command=")]
        return argv, None, None
    raise TypeError(f"no interactive shell through {type(transport).__name__}")
