"""A stand-in for Google's ``colab`` program (google-colab-cli 0.7.5), run as a program:
``python -m tpuwizard.sandbox.colab.cli COMMAND ...``.

It follows the CLI's own code (docs/reference/colab-cli.md says what was read): the commands
tpuwizard uses (``new``, ``sessions``, ``status``, ``stop``, ``upload``, ``download``,
``exec``) with the same words, the same streams (``[colab]`` lines on stdout, its refusals and
tracebacks on stderr) and the same exit codes. A runtime is a folder on this computer; an
``exec`` runs its cell in a Python process there, on JAX's CPU devices (one, as a v5e1 has one
chip), where the real one runs it in the runtime's IPython kernel (tpuwizard's cells rely on
neither). Its state and faults: colab/state.py. Every call is logged (``calls.log``).

Where the CLI's code leaves an answer to Colab's backend, the stand-in chooses one and says so:
``stop`` on a runtime the backend no longer holds (its unassign) is refused, as an uncaught
request error (traceback, exit 1, local state kept).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import sys
from pathlib import Path

from tpuwizard.sandbox.colab.execution import exec_command
from tpuwizard.sandbox.colab.state import (
    FAULTS_ENV,
    StateUnreadable,
    colab_home,
    locked_state,
    log_call,
    parse_colab_faults,
    resolve_session,
    runtime_root,
    wait_out_hang,
)

# Which google-colab-cli the stand-in plays: 0.7.5 (PyPI's, the default) or 0.8.0, which adds
# ``usage`` (commands/usage.py, consumption.py). Tests run both.
VERSION_ENV = "TPUWIZARD_COLAB_VERSION"
VERSIONS = ("0.7.5", "0.8.0")
AUTH_URL = "https://accounts.google.com/o/oauth2/auth?client_id=stand-in&token_usage=remote"


def say(text: str) -> None:
    print(text, flush=True)


def say_err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _not_signed_in() -> int:
    """auth.py's remote flow: the URL on stderr, then ``input()``, which a closed stdin ends."""
    say_err("\nTo authorize colab-cli, visit this URL in any browser:\n")
    say_err("  " + AUTH_URL + "\n")
    say_err("After approving, Google will display an authorization code.")
    try:
        input("Enter the authorization code: ")
    except EOFError:
        say_err("Traceback (most recent call last):\nEOFError: EOF when reading a line")
        return 1
    say_err("Traceback (most recent call last):\noauthlib...InvalidGrantError: (invalid_grant)")
    return 1


def _session_line(name: str, endpoint: str, accel: str, variant: str, status: str = "") -> str:
    hardware = "CPU" if accel == "NONE" else accel
    line = f"[{name}] {endpoint} | Hardware: {hardware} | Shape: Standard | Variant: {variant}"
    return line + (f" | Status: {status}" if status else "")


def new(home: Path, faults: dict[str, str], args: argparse.Namespace) -> int:
    name = args.session or secrets.token_hex(3)
    accel = ("V5E1" if args.tpu.lower() == "v5e1" else "V6E1") if args.tpu else "NONE"
    variant = "TPU" if args.tpu else "DEFAULT"
    say(f"[colab] Creating session '{name}'...")
    if args.tpu and "no_tpu" in faults:
        if faults["no_tpu"] == "400":
            say_err(
                f"[colab] Backend rejected accelerator '{accel}'. You may not have quota or "
                "entitlement for this accelerator on your account. Try a different one (e.g. "
                "--gpu T4) or omit --gpu/--tpu for a CPU runtime."
            )
        else:
            say_err(
                "[colab] Allocation refused (precondition failed). This can mean too many "
                "active sessions, or a temporary usage or capacity limit for the requested "
                "runtime. Run `colab stop` to free up a session, wait and retry, or try a "
                "different accelerator."
            )
        return 1
    endpoint = f"{'tpu' if args.tpu else 'cpu'}-s-{secrets.token_hex(6)}"
    (runtime_root(home, endpoint) / "content").mkdir(parents=True, exist_ok=True)
    with locked_state(home) as state:
        state["server"][endpoint] = {"accelerator": accel, "variant": variant}
        state["local"][name] = {"endpoint": endpoint, "accelerator": accel, "variant": variant}
        state["local"][name].update(running=None, pids=[])
    say("[colab] Session READY.")
    return 0


def sessions(home: Path, _faults: dict[str, str], _args: argparse.Namespace) -> int:
    with locked_state(home) as state:
        pruned = _prune(state)
        server = dict(state["server"])
        names = {s["endpoint"]: n for n, s in state["local"].items()}
    if pruned:
        say(f"[colab] Pruned {pruned} stale local session(s).")
    if not server:
        say("[colab] No active sessions found on server.")
        return 0
    for endpoint, info in server.items():
        name = names.get(endpoint, "?")
        say(_session_line(name, endpoint, info["accelerator"], info["variant"]))
    return 0


def _prune(state: dict) -> int:
    gone = [n for n, s in state["local"].items() if s["endpoint"] not in state["server"]]
    for name in gone:
        del state["local"][name]
    return len(gone)


def status(home: Path, _faults: dict[str, str], args: argparse.Namespace) -> int:
    with locked_state(home) as state:
        _prune(state)
        local = dict(state["local"])
    if args.session:
        found = local.get(args.session)
        if found is None:
            say(f"[colab] Session '{args.session}' not found.")
            return 0
        local = {args.session: found}
    if not local:
        say("[colab] No active sessions.")
    for name, s in local.items():
        busy = f"BUSY ({s['running']})" if s.get("running") else "IDLE"
        say(_session_line(name, s["endpoint"], s["accelerator"], s["variant"], busy))
    return 0


def stop(home: Path, _faults: dict[str, str], args: argparse.Namespace) -> int:
    with locked_state(home) as state:
        name = args.session or next(iter(state["local"]), None)
        s = state["local"].get(name) if name else None
    if name is None or s is None:
        say(f"[colab] Session '{name}' not found.")
        return 0
    say(f"[colab] Stopping session '{name}'...")
    with locked_state(home) as state:
        pids = state["local"].get(name, {}).get("pids", [])
        if s["endpoint"] not in state["server"]:
            # unassign of an endpoint the backend no longer knows: an uncaught request error
            say_err("Traceback (most recent call last):\ncolab_cli.client.ColabRequestError: 404")
            return 1
        for pid in pids:  # the runtime's kernel, and whatever it still ran, ends with it
            if isinstance(pid, int) and not isinstance(pid, bool) and pid > 1:  # never 0: ours
                with _quiet():
                    os.killpg(pid, signal.SIGKILL)
        del state["server"][s["endpoint"]]
        del state["local"][name]
    shutil.rmtree(runtime_root(home, s["endpoint"]), ignore_errors=True)
    say("[colab] Session terminated.")
    return 0


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, value: object, tb: object) -> bool:
        return isinstance(value, ProcessLookupError | PermissionError)


def _remote(home: Path, s: dict, remote: str) -> Path:
    """A contents path (from ``/``) on the runtime's disk."""
    parts = [p for p in remote.strip("/").split("/") if p not in ("", ".", "..")]
    return runtime_root(home, s["endpoint"]).joinpath(*parts)


def _runtime_alive(home: Path, s: dict) -> bool:
    with locked_state(home) as state:
        return s["endpoint"] in state["server"]


def upload(home: Path, _faults: dict[str, str], args: argparse.Namespace) -> int:
    found = resolve_session(home, args.session)
    if found is None:
        return 1
    _, s = found
    if not os.path.isfile(args.local_path):
        say(f"[colab] Local file '{args.local_path}' not found.")
        return 1
    target = _remote(home, s, args.remote_path)
    if not _runtime_alive(home, s) or not target.parent.is_dir():
        say(f"[colab] Upload failed: File or directory not found: {args.remote_path}")
        return 1
    shutil.copyfile(args.local_path, target)
    say(f"[colab] Uploaded '{args.local_path}' to '{args.remote_path}'")
    return 0


def download(home: Path, _faults: dict[str, str], args: argparse.Namespace) -> int:
    found = resolve_session(home, args.session)
    if found is None:
        return 1
    _, s = found
    source = _remote(home, s, args.remote_path)
    if not _runtime_alive(home, s) or not source.exists():
        say(f"[colab] Download failed: File or directory not found: {args.remote_path}")
        return 1
    if source.is_dir():
        say(f"[colab] Download failed: Cannot download a directory: {args.remote_path}")
        return 1
    shutil.copyfile(source, args.local_path)
    say(f"[colab] Downloaded '{args.remote_path}' to '{args.local_path}'")
    return 0


def played_version() -> str:
    version = os.environ.get(VERSION_ENV) or VERSIONS[0]
    if version not in VERSIONS:
        raise SystemExit(f"{VERSION_ENV} is one of {', '.join(VERSIONS)}, not {version!r}")
    return version


def usage(home: Path, faults: dict[str, str], _args: argparse.Namespace) -> int:
    """consumption.py's three lines. The count is the backend's assignmentsCount: every runtime
    the account holds (here the server's, plus ``other_assignments=N``: the browser's notebooks).
    Balance and rate are the backend's too; the stand-in answers ``cu_balance`` and ``cu_rate``
    (0 by default: a free account), its own choice, as no code shows how Colab reckons them."""
    if "usage_fails" in faults:  # usage.py: any error fetching, a warning and exit 1
        say_err("[colab] Warning: failed to fetch compute-unit info: 503 Service Unavailable")
        return 1
    with locked_state(home) as state:
        count = len(state["server"]) + int(faults.get("other_assignments") or 0)
    balance = float(faults.get("cu_balance") or 0.0)
    rate = float(faults.get("cu_rate") or 0.0)
    say(f"Current balance: {balance:.2f} compute units\nUsage rate: {rate:.2f}/hr")
    say(f"Active assignments: {count:.0f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    home = colab_home()
    log_call(home, argv)
    wait_out_hang(home)
    version = played_version()
    if argv[:1] == ["usage"] and version == "0.7.5":
        # Typer (Click) on a command it does not have: usage and the error on stderr, exit 2.
        say_err("Usage: colab [OPTIONS] COMMAND [ARGS]...\nTry 'colab --help' for help.")
        say_err("Error: No such command 'usage'.")
        return 2
    parser = _parser()
    args = parser.parse_args(argv)  # a bad option: usage on stderr, exit 2 (as Click's)
    if args.command == "version":  # utility.py's version_command: no sign-in needed
        say(f"Version: {version}")
        return 0
    faults = parse_colab_faults(os.environ.get(FAULTS_ENV))
    if "signed_out" in faults:
        return _not_signed_in()
    commands = {
        "new": new,
        "sessions": sessions,
        "status": status,
        "stop": stop,
        "upload": upload,
        "download": download,
        "exec": exec_command,
        "usage": usage,
    }
    try:
        return int(commands[args.command](home, faults, args))
    except StateUnreadable as err:  # as a service that cannot answer: said, exit 1
        say_err(str(err))
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="colab", description="Colab CLI (tpuwizard's stand-in)")
    parser.add_argument("--config")  # the real CLI's session state file; here, the home's
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("new")
    one.add_argument("-s", "--session")
    one.add_argument("--tpu")
    one.add_argument("--gpu")
    for command in ("sessions", "version", "usage"):
        sub.add_parser(command)
    for command in ("status", "stop"):
        sub.add_parser(command).add_argument("-s", "--session")
    for command, first, second in (
        ("upload", "local_path", "remote_path"),
        ("download", "remote_path", "local_path"),
    ):
        files = sub.add_parser(command)
        files.add_argument("-s", "--session")
        files.add_argument(first)
        files.add_argument(second)
    run = sub.add_parser("exec")
    run.add_argument("-s", "--session")
    run.add_argument("-f", "--file")
    run.add_argument("--timeout", type=float, default=30.0)
    run.add_argument("--env", action="append", default=[])
    return parser


if __name__ == "__main__":
    sys.exit(main())
