"""An interactive shell on a worker, through the same transport the runs use."""

from __future__ import annotations

from tpuwizard.core.remote.transports import (
    GcloudTransport,
    LocalTransport,
    SshTransport,
    Transport,
)


def interactive_command(
    transport: Transport, worker: int
) -> tuple[list[str], str | None, dict[str, str] | None]:
    """(argv, cwd, env) that open a login shell on ``worker`` with a terminal."""
    if isinstance(transport, LocalTransport):  # the sandbox: the worker's home, its own HOME
        return ["bash", "-i"], transport.cwd(worker), transport.env(worker)
    if isinstance(transport, SshTransport):
        argv = transport.argv(worker, "exec bash -l")
        # -t: a terminal for the shell; BatchMode stays (keys only, no password prompts).
        return [argv[0], "-t", *argv[1:]], None, None
    if isinstance(transport, GcloudTransport):
        argv = [a for a in transport.argv(worker, "") if not a.startswith("--command=")]
        return argv, None, None
    raise TypeError(f"no interactive shell through {type(transport).__name__}")
