"""One run on Colab through Google's ``colab`` CLI: a named session recorded before ``new``, the
script's folder uploaded, the verifier's cell then the script's executed with the route's
environment, the receipt and the files downloaded into the run folder, the receipt checked, and
the session stopped (``stop``, then ``sessions`` no longer listing it) in every case.

Events come from :func:`run_session`; after a stop signal the session layer calls
:func:`stop_session` itself.
"""

from __future__ import annotations

import os
import queue
import subprocess
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core import untrusted
from tpuwizard.core.colab import diagnosis
from tpuwizard.core.colab.account import assignments_after, read_account
from tpuwizard.core.colab.cells import bundle_name, pack_folder, script_cell, verify_cell
from tpuwizard.core.colab.program import ColabCallFailed, ColabProgram, classify
from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import check_receipt, load_receipt, parse_marker_line
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED, EXIT_OK, EXIT_TEARDOWN
from tpuwizard.core.kaggle.kernel import PackedFolder
from tpuwizard.core.kaggle.ledger import KernelLedger, said_held
from tpuwizard.core.kaggle.run import receipt_checks, script_ran
from tpuwizard.core.launch.events.colab import (
    CLOUD_TYPES,
    COLAB_FREE_TPU,
    ColabPlanned,
    ColabSessionReady,
    ColabSessionStopped,
)
from tpuwizard.core.launch.events.launch_events import (
    Event,
    Failed,
    Finished,
    ReceiptSaved,
    ScriptLine,
)

TPU = COLAB_FREE_TPU  # colab new --tpu: one TPU v5e chip, what Colab offers for free
CLOUD_TYPE = CLOUD_TYPES[TPU]  # the Cloud TPU type with the same chip: the receipt's devices
DEFAULT_MAX_RUN_MINUTES = 60.0
MAX_RUN_BOUNDS = (1.0, 720.0)  # a Colab runtime lasts 12 hours at most
VERIFY_LIMIT_S = 900.0  # the verifier's exec: a first compile on a fresh runtime fits
GRACE_S = 120.0  # past an exec's --timeout, the CLI is given this long to say so itself
REMOTE_FOLDER = "content"  # /content: where exec runs, as a contents path


@dataclass(frozen=True)
class ColabRun:
    """Everything a run needs, checked before any call (``prepare_run``)."""

    session: str  # tpuwizard-<run id>: what status and teardown recognise as tpuwizard's
    packed: PackedFolder  # the script's folder, and what of it goes (said before the upload)
    script: str  # its path inside its folder
    script_args: tuple[str, ...]
    fetch: tuple[str, ...]
    run_id: str
    run_dir: Path
    practice: bool
    max_run_minutes: float
    expect: str  # cpu in practice (the stand-in runs on JAX's CPU devices), tpu for real
    practice_why: str = ""  # why it is practice, said as it starts


def session_name(run_id: str) -> str:
    return f"tpuwizard-{run_id}".lower()


def prepare_run(
    script: Path,
    script_args: tuple[str, ...],
    fetch: tuple[str, ...],
    max_run_minutes: float | None,
    run_id: str,
    run_dir: Path,
    practice: bool,
    practice_why: str = "",
) -> ColabRun:
    """The run, or :class:`BadInput` (exit 2, nothing called): no script, a limit out of
    bounds, a folder too large."""
    if not script.is_file():
        raise BadInput(f"--script {script}: no such file. Give the path of your Python script.")
    minutes = DEFAULT_MAX_RUN_MINUTES if max_run_minutes is None else max_run_minutes
    low, high = MAX_RUN_BOUNDS
    if not low <= minutes <= high:
        raise BadInput(f"--max-run must be {low:g} to {high:g} minutes on Colab, not {minutes:g}.")
    # The script's own folder (the link's, where it is a link), walked as a TPU route walks it.
    packed = pack_folder(script.parent.resolve(), script.name)
    relative = script.name
    expect = "cpu" if practice else "tpu"
    name = session_name(run_id)
    return ColabRun(
        name,
        packed,
        relative,
        script_args,
        fetch,
        run_id,
        run_dir,
        practice,
        minutes,
        expect,
        practice_why,
    )


def route_env(expect: str) -> dict[str, str]:
    """The environment every route gives the verifier and the script."""
    return {"COURSE_EXPECT_PLATFORM": expect, "JAX_PLATFORMS": expect}


def run_session(
    program: ColabProgram, run: ColabRun, ledger: KernelLedger, poll_s: float = 30.0
) -> Generator[Event, None, None]:
    """The run's events: the session stopped and verified before the last, ``Finished``."""
    folder = str(run.run_dir)
    yield ColabPlanned(
        run.run_id,
        run.session,
        TPU,
        run.max_run_minutes,
        run.expect,
        run.practice,
        folder,
        run.packed.sent,
        run.practice_why,
    )
    account = read_account(program, run.practice)  # read only: before anything is asked of Colab
    yield account
    ok, code = False, EXIT_CLOUD
    ledger.record("intent", run.session, run.run_id, practice=run.practice, pid=os.getpid())
    try:
        ok, code = yield from _run_body(program, run, ledger, poll_s)
    except ColabCallFailed as err:
        yield Failed(err.what, diagnosis.call_failed(err, run.session, run.practice))
        if err.kind == "sign-in" and err.what == "creating the session":
            # The CLI signs in before it asks Colab for anything (its common.py): nothing made.
            ledger.record("deleted", run.session, run.run_id, why="colab was not signed in")
    stopped = yield from stop_session(program, run.session, run.run_id, ledger)
    if account.assignments is not None:
        yield assignments_after(program, account.assignments)
    yield Finished(ok, code if stopped else EXIT_TEARDOWN, folder, None)


def _run_body(
    program: ColabProgram, run: ColabRun, ledger: KernelLedger, poll_s: float
) -> Generator[Event, None, tuple[bool, int]]:
    program.new(run.session, TPU)
    listed = [s for s in program.sessions() if s.name == run.session]
    endpoint = listed[0].endpoint if listed else ""
    held = ledger.record("pushed", run.session, run.run_id, endpoint=endpoint)
    yield ColabSessionReady(run.session, endpoint, listed[0].hardware if listed else "")
    yield from said_held(held, run.session, "pushed")
    run.run_dir.mkdir(parents=True, exist_ok=True)
    remote = f"{REMOTE_FOLDER}/{run.session}/out"
    with tempfile.TemporaryDirectory(prefix="tpuwizard-colab-") as staging_name:
        staging = Path(staging_name)
        bundle = staging / bundle_name(run.session)
        bundle.write_bytes(run.packed.data)
        program.upload(run.session, bundle, f"{REMOTE_FOLDER}/{bundle.name}")
        cell = staging / "verify.py"
        cell.write_text(verify_cell(run.session))
        limit = min(VERIFY_LIMIT_S, run.max_run_minutes * 60)
        yield from follow_exec(program, run, cell, limit, "verifying JAX", poll_s)
        program.download(run.session, f"{remote}/receipt.json", run.run_dir / "receipt.json")
        verifier_code = _exit_code(program, run.session, f"{remote}/verifier_exit", staging)
        passed = yield from _check(run, verifier_code)
        if not passed:
            return False, EXIT_FAILED
        cell = staging / "script.py"
        cell.write_text(script_cell(run.session, run.script, run.script_args, run.fetch))
        limit = run.max_run_minutes * 60
        yield from follow_exec(program, run, cell, limit, "running your script", poll_s)
        output = run.run_dir / "output.txt"
        program.download(run.session, f"{remote}/output.txt", output)
        script_code = _exit_code(program, run.session, f"{remote}/script_exit", staging)
        packed_files = staging / "files.tar.gz"
        program.download(run.session, f"{remote}/files.tar.gz", packed_files)
        fetched = _unpack(packed_files, run.run_dir / "files")
        yield from script_ran(script_code, output, fetched)
    if script_code != 0:
        yield Failed("script", diagnosis.script_failed(script_code))
        return False, EXIT_FAILED
    return True, EXIT_OK


def _exit_code(program: ColabProgram, session: str, remote: str, staging: Path) -> int | None:
    """A cell's exit code from the file it wrote; None where it wrote none."""
    local = staging / Path(remote).name
    try:
        program.download(session, remote, local)
        return int(untrusted.read_text(local, 4096).strip())  # the runtime's: a number
    except (ColabCallFailed, OSError, ValueError):
        return None


def _check(run: ColabRun, verifier_code: int | None) -> Generator[Event, None, bool]:
    receipt_path = run.run_dir / "receipt.json"
    try:
        receipt = load_receipt(receipt_path)
    except BadInput as err:
        yield Failed("verification", diagnosis.verifier_failed(run.expect, [str(err)], None))
        return False
    # On Colab's TPU its shape is checked too (one device, its kind); practice checks cpu only.
    accelerator = CLOUD_TYPE if run.expect == "tpu" else None
    check = check_receipt(receipt, expect=run.expect, accelerator=accelerator, folder=run.run_dir)
    yield from receipt_checks(receipt)
    yield ReceiptSaved(str(receipt_path), check.ok, str(receipt.get("receipt_sha256", "")))
    if check.ok and verifier_code == 0:
        return True
    problems = list(check.problems) or ["the receipt shows no problem"]
    yield Failed("verification", diagnosis.verifier_failed(run.expect, problems, verifier_code))
    return False


def _unpack(packed: Path, target: Path) -> list[Path]:
    """The ``--fetch`` files, into ``files/`` (members that would land outside it skipped)."""
    target.mkdir(parents=True, exist_ok=True)
    found = []
    with tarfile.open(packed, "r:gz") as tar:
        for member in tar.getmembers():
            path = (target / member.name).resolve()
            if member.isfile() and path.is_relative_to(target.resolve()):
                tar.extract(member, target, filter="data")
                found.append(path)
    return found


def follow_exec(
    program: ColabProgram,
    run: ColabRun,
    cell: Path,
    limit_s: float,
    what: str,
    poll_s: float,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Event]:
    """``colab exec`` as a process, its lines as ``ScriptLine`` events while it runs. Every
    ``poll_s`` the CLI is asked for the session's status: a CLI that no longer answers (or an
    exec far past its ``--timeout``) ends the call (kind ``silent``)."""
    argv = program.exec_argv(run.session, cell, limit_s, route_env(run.expect))
    # Its own process group: a Ctrl+C in the terminal reaches tpuwizard, which stops the session.
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        encoding="utf-8",
        errors="replace",  # a byte that is not UTF-8 is shown as U+FFFD, never the run's end
        env=program.env,
        start_new_session=True,
    )
    lines: queue.Queue[tuple[str, str | None]] = queue.Queue()
    said: dict[str, list[str]] = {"out": [], "err": []}
    readers = [
        threading.Thread(target=_read, args=(stream, name, lines), daemon=True)
        for stream, name in ((process.stdout, "out"), (process.stderr, "err"))
    ]
    for reader in readers:
        reader.start()
    deadline = clock() + limit_s + GRACE_S
    next_probe = clock() + poll_s
    open_streams = 2
    try:
        while open_streams:
            try:
                stream, line = lines.get(timeout=min(0.2, poll_s))
            except queue.Empty:
                stream, line = "", ""
            if line is None:
                open_streams -= 1
            elif stream:
                said[stream].append(line)
                shown = stream == "out" and not line.startswith("[colab]")
                if shown and parse_marker_line(line) is None:  # not the verifier's JSON twins
                    yield ScriptLine(worker=0, text=line)
            if open_streams and clock() > deadline:
                raise ColabCallFailed(what, "silent", f"`colab exec` ran {limit_s + GRACE_S:.0f} s")
            if open_streams and clock() >= next_probe:
                _probe(program, run.session, what, poll_s)
                next_probe = clock() + poll_s
        code = process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if code != 0:
        raise classify(what, code, "\n".join(said["out"]), "\n".join(said["err"]))


def _probe(program: ColabProgram, session: str, what: str, poll_s: float) -> None:
    """Is the CLI still answering? Only silence counts: a refusal is the exec's to say."""
    try:
        program.status_line(session, timeout_s=max(5.0, 2 * poll_s))
    except ColabCallFailed as err:
        if err.kind == "silent":
            raise ColabCallFailed(what, "silent", err.detail) from None


def _read(stream: object, name: str, lines: queue.Queue[tuple[str, str | None]]) -> None:
    for raw in stream:  # type: ignore[attr-defined]
        lines.put((name, raw.rstrip("\n")))
    lines.put((name, None))


def stop_session(
    program: ColabProgram, session: str, run_id: str, ledger: KernelLedger
) -> Generator[Event, None, bool]:
    """``colab stop``, then ``colab sessions``: stopped only once it no longer lists the
    session (by name, or by the endpoint recorded). True when nothing of the run remains."""
    record = ledger.last_words().get((session, run_id))
    if record is None or record["op"] == "deleted":
        return True  # nothing was asked of Colab, or its end is recorded already
    stop_problem = ""
    try:
        program.stop(session)
    except ColabCallFailed as err:
        stop_problem = f"colab stop failed: {err.detail}"
    try:
        listed = program.sessions()
    except ColabCallFailed as err:
        detail = f"{stop_problem}; " if stop_problem else ""
        yield ColabSessionStopped(session, False, f"{detail}it could not be checked: {err.detail}")
        return False
    endpoint = record.get("endpoint") or None
    if endpoint is None and any(s.name == "?" for s in listed):
        # Made, perhaps, with no name kept for it (a `colab new` ended before it finished).
        yield ColabSessionStopped(session, False, "colab sessions lists a runtime with no name")
        return False
    if any(s.name == session or s.endpoint == endpoint for s in listed):
        yield ColabSessionStopped(session, False, stop_problem or "colab sessions still lists it")
        return False
    held = ledger.record("deleted", session, run_id, why="stopped; colab sessions does not list it")
    yield ColabSessionStopped(session, True)
    yield from said_held(held, session, "deleted")
    return True
