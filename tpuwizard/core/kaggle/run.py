"""One run on Kaggle: checked before the push, pushed, followed, downloaded, its receipt checked.

Events come from :func:`run_kernel`; a stop while the kernel runs goes to :func:`stop_kernel`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import check_receipt, load_receipt, parse_marker_line
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED, EXIT_OK
from tpuwizard.core.kaggle import diagnosis
from tpuwizard.core.kaggle.kernel import (
    CLOUD_TYPE,
    OUTPUT_FOLDER,
    KernelSpec,
    PackedFolder,
    pack_folder,
    write_kernel_folder,
)
from tpuwizard.core.kaggle.ledger import KernelLedger, said_held
from tpuwizard.core.kaggle.protocol import KaggleCallFailed, Kernels, Pushed, PushNotListed
from tpuwizard.core.launch.events.kaggle import (
    KernelDeleted,
    KernelLeftRunning,
    KernelPlanned,
    KernelPushed,
    KernelState,
)
from tpuwizard.core.launch.events.launch_events import (
    Check,
    Event,
    Failed,
    FileFetched,
    FileNotFetched,
    Finished,
    ReceiptSaved,
    ScriptFinished,
    ScriptLine,
)
from tpuwizard.core.launch.plan.packages import HELD, PackageSpec, requirement_name

ENDED = ("COMPLETE", "ERROR", "CANCEL_ACKNOWLEDGED")
DEFAULT_MAX_RUN_MINUTES = 60.0  # tpuwizard's default; --max-run changes it
STATUS_TRIES = 3  # reads of the session's state with no answer before the run stops following


@dataclass(frozen=True)
class KaggleRun:
    """Everything a run needs, checked before any call to Kaggle (``prepare_run``)."""

    spec: KernelSpec  # username "" until signed in
    packed: PackedFolder  # the script's folder, and what of it goes (said before the push)
    run_id: str
    run_dir: Path
    practice: bool
    max_run_minutes: float
    delete_kernel: bool = False  # default: the kernel stays in the account as the run's record
    practice_why: str = ""  # why it is practice, said as it starts


def prepare_run(
    script: Path,
    script_args: tuple[str, ...],
    fetch: tuple[str, ...],
    max_run_minutes: float | None,
    shape: str,
    run_id: str,
    run_dir: Path,
    practice: bool,
    delete_kernel: bool = False,
    packages: tuple[PackageSpec, ...] = (),
    practice_why: str = "",
) -> KaggleRun:
    """The run, or :class:`BadInput` (exit 2, nothing pushed): no script, a bad package, a
    folder too large."""
    from tpuwizard.core.kaggle.kernel import kernel_name

    if not script.is_file():
        raise BadInput(f"--script {script}: no such file. Give the path of your Python script.")
    minutes = DEFAULT_MAX_RUN_MINUTES if max_run_minutes is None else max_run_minutes
    if not 1 <= minutes <= 12 * 60:
        raise BadInput(f"--max-run must be 1 to 720 minutes on Kaggle, not {minutes:g}.")
    check_packages(packages)
    # The script's own folder (the link's, where it is a link), walked as a TPU route walks it.
    folder = script.parent.resolve()
    spec = KernelSpec(
        username="",
        name=kernel_name(run_id),
        shape=shape,
        timeout_s=round(minutes * 60),
        script=script.name,
        script_args=script_args,
        fetch=fetch,
        expect="cpu" if practice else "tpu",
        packages=tuple(p.text for p in packages),
    )
    packed = pack_folder(folder, script.name)
    return KaggleRun(spec, packed, run_id, run_dir, practice, minutes, delete_kernel, practice_why)


def check_packages(packages: tuple[PackageSpec, ...]) -> None:
    """Each a requirement pip takes, none that changes the kernel's JAX: :class:`BadInput`."""
    for spec in packages:
        name = requirement_name(spec.text)
        if name is None:
            raise BadInput(
                f"{spec.text!r} ({spec.origin}) is not a package requirement: give one such as "
                "optax or flax>=0.8 (options such as -r or --index-url are not taken)."
            )
        if name in HELD:
            raise BadInput(
                f"{spec.text!r} ({spec.origin}) names {name}: on Kaggle your script runs with "
                "the kernel's own JAX, the one the verifier checks, and no package may change "
                "it. Leave that one out; the others are installed at the kernel's start."
            )


def run_kernel(
    kernels: Kernels,
    run: KaggleRun,
    ledger: KernelLedger,
    poll_s: float = 5.0,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Event]:
    """The run's events, ending with ``Finished``; a Kaggle failure ends it with a diagnosis."""
    spec = replace(run.spec, username=kernels.username)
    folder = str(run.run_dir)
    pushing: str | None = None  # the kernel, once its push started: it may exist from then on
    try:
        quota = kernels.tpu_quota()
        yield KernelPlanned(
            run.run_id,
            spec.ref,
            spec.shape,
            run.max_run_minutes,
            spec.expect,
            run.practice,
            folder,
            quota.left_s if quota else None,
            run.packed.sent,
            run.practice_why,
        )
        if quota is not None and quota.left_s <= 0:
            yield Failed("quota", diagnosis.quota_exhausted(quota.left_s, quota.allowed_s))
            yield Finished(False, EXIT_CLOUD, folder, None)
            return
        with tempfile.TemporaryDirectory(prefix="tpuwizard-kernel-") as staging:
            write_kernel_folder(spec, run.packed.data, Path(staging))
            ledger.record(
                "intent",
                spec.ref,
                run.run_id,
                timeout_s=spec.timeout_s,
                practice=run.practice,
                pid=os.getpid(),  # `status` asks whether the command that pushed it still runs
            )
            pushing = spec.ref
            try:
                pushed = kernels.push(Path(staging), spec.timeout_s, spec.shape)
            except KaggleCallFailed as err:
                if err.status is not None:
                    raise  # Kaggle answered: refused, nothing was made
                pushed = _found_after_lost_answer(kernels, spec, run, ledger, err)
        started = clock()
        if pushed.error:
            ledger.record("deleted", spec.ref, run.run_id, refused=pushed.error)
            yield Failed("push", diagnosis.push_refused(pushed.error))
            yield Finished(False, EXIT_CLOUD, folder, None)
            return
        held = ledger.record(
            "pushed", spec.ref, run.run_id, url=pushed.url, ends_by=time.time() + spec.timeout_s
        )
        yield KernelPushed(spec.ref, pushed.url, pushed.version, pushed.found, run.practice)
        yield from said_held(held, spec.ref, "pushed")
        try:
            state, failure = yield from _follow(kernels, spec, poll_s, clock, started)
        except KaggleCallFailed as err:
            if err.status is not None:
                raise
            url = pushed.url or f"https://www.kaggle.com/code/{spec.ref}"
            ends_by = time.time() - (clock() - started) + spec.timeout_s
            lost = diagnosis.connection_lost(err.what, err.detail, spec.ref, ends_by, url)
            yield Failed(err.what, lost)
            yield Finished(False, EXIT_CLOUD, folder, None)
            return
        yield from said_held(
            ledger.record("ended", spec.ref, run.run_id, state=state), spec.ref, "ended"
        )
        collected = list(_collect(kernels, spec, run.run_dir, state, failure))
        yield from collected[:-1]
        if run.delete_kernel:
            deleted = delete_verified(kernels, spec.ref)
            held = None
            if deleted.verified:
                held = ledger.record("deleted", spec.ref, run.run_id, why="--delete-kernel")
            yield deleted
            yield from said_held(held, spec.ref, "deleted")
        yield collected[-1]  # Finished, last
    except PushNotListed as err:
        yield Failed(err.what, diagnosis.push_not_listed(err.detail, spec.ref))
        yield Finished(False, EXIT_CLOUD, folder, None)
    except KaggleCallFailed as err:
        said = diagnosis.call_failed(err.what, err.detail, err.status, pushing)
        yield Failed(err.what, said)
        yield Finished(False, EXIT_CLOUD, folder, None)


def _found_after_lost_answer(
    kernels: Kernels, spec: KernelSpec, run: KaggleRun, ledger: KernelLedger, lost: Exception
) -> Pushed:
    """The push's answer was lost: the kernel is looked for by its slug, never pushed twice.
    Not found (Kaggle says so): the push did not land. Not answered: it may exist, and its
    ledger record stays open."""
    try:
        kernels.status(spec.ref)
    except KaggleCallFailed as err:
        if err.status == 404:
            ledger.record("deleted", spec.ref, run.run_id, refused="the push did not land")
            detail = lost.detail if isinstance(lost, KaggleCallFailed) else str(lost)
            raise PushNotListed("pushing the kernel", detail, None) from None
        raise KaggleCallFailed("pushing the kernel", str(lost), err.status) from None
    return Pushed(ref=spec.ref, url="", version=None, error=None, found=True)


def delete_verified(kernels: Kernels, ref: str) -> KernelDeleted:
    """Delete the ended kernel, then ask for it: gone only when Kaggle says it is not found."""
    try:
        kernels.delete(ref)
    except KaggleCallFailed as err:
        return KernelDeleted(ref, False, f"the delete failed: {err.detail}")
    try:
        kernels.status(ref)
    except KaggleCallFailed as err:
        if err.status == 404:
            return KernelDeleted(ref, True)
        return KernelDeleted(ref, False, f"it could not be checked: {err.detail}")
    return KernelDeleted(ref, False, "Kaggle still lists it")


def _follow(
    kernels: Kernels, spec: KernelSpec, poll_s: float, clock: Callable[[], float], started: float
) -> Generator[Event, None, tuple[str, str | None]]:
    """States until the session runs, its log while it runs, then states until it ended."""
    said = ""
    streamed = False
    while True:
        state, failure = _status_read(kernels, spec.ref, poll_s)
        if state != said:
            yield KernelState(spec.ref, state, clock() - started, spec.timeout_s)
            said = state
        if state in ENDED:
            return state, failure
        if state == "RUNNING" and not streamed:
            streamed = True
            for line in kernels.log_lines(spec.ref):
                if parse_marker_line(line) is None:  # the verifier's JSON twins: in kernel.log
                    yield ScriptLine(worker=0, text=line)
            continue
        time.sleep(poll_s)


def _status_read(
    kernels: Kernels, ref: str, poll_s: float, tries: int = STATUS_TRIES
) -> tuple[str, str | None]:
    """The session's state; a read that got no answer at all (the network) is tried again
    before the run gives up following it."""
    for _ in range(tries - 1):
        try:
            return kernels.status(ref)
        except KaggleCallFailed as err:
            if err.status is not None:
                raise
            time.sleep(poll_s)
    return kernels.status(ref)


def _collect(
    kernels: Kernels, spec: KernelSpec, run_dir: Path, state: str, failure: str | None
) -> Iterator[Event]:
    """Download the output into the run folder's usual layout and check the receipt; the
    receipt's checks, the script's exit code and its files said as the other routes say them."""
    folder = str(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    downloaded = run_dir / "kaggle-output"
    missed = [
        FileNotFetched(_in_run_folder(name, run_dir), why, incomplete=True)
        for name, why in kernels.download(spec.ref, downloaded).missed
    ]
    ours = downloaded / OUTPUT_FOLDER
    for name in ("receipt.json", "output.txt"):
        if (ours / name).is_file():
            shutil.move(ours / name, run_dir / name)
    fetched: list[Path] = []
    if (ours / "files").is_dir():
        shutil.copytree(ours / "files", run_dir / "files", dirs_exist_ok=True)
        fetched = [p for p in sorted((run_dir / "files").rglob("*")) if p.is_file()]
    script_code = read_exit_code(ours / "script_exit")  # None: the script did not run
    for log in downloaded.glob("*.log"):
        shutil.move(log, run_dir / "kernel.log")
    shutil.rmtree(downloaded, ignore_errors=True)
    output = run_dir / "output.txt"
    # What did not come is said with what did: the run fails for it, as a TPU route's does.
    ran = script_ran(script_code, output if output.is_file() else None, fetched) + missed
    receipt_path = run_dir / "receipt.json"
    if not receipt_path.is_file():
        yield from ran
        yield Failed("verification", diagnosis.no_receipt(state, failure))
        yield Finished(False, EXIT_FAILED, folder, None)
        return
    try:
        receipt = load_receipt(receipt_path)
    except BadInput as err:
        yield from ran
        yield Failed("verification", diagnosis.no_receipt(state, str(err)))
        yield Finished(False, EXIT_FAILED, folder, None)
        return
    # On Kaggle the TPU's own shape is checked too (its devices, their kind, one host).
    slice_name = CLOUD_TYPE.get(spec.shape) if spec.expect == "tpu" else None
    check = check_receipt(receipt, expect=spec.expect, accelerator=slice_name, folder=run_dir)
    yield from receipt_checks(receipt)
    yield ReceiptSaved(str(receipt_path), check.ok, str(receipt.get("receipt_sha256", "")))
    yield from ran
    if not check.ok:
        image = kernels.docker_image(spec.ref)
        yield Failed(
            "verification", diagnosis.not_on_expected_platform(spec.expect, check.problems, image)
        )
        yield Finished(False, EXIT_FAILED, folder, None)
        return
    if state != "COMPLETE":
        yield Failed("script", diagnosis.script_failed(state, failure))
        yield Finished(False, EXIT_FAILED, folder, None)
        return
    yield Finished(not missed, EXIT_FAILED if missed else EXIT_OK, folder, None)


def _in_run_folder(name: str, run_dir: Path) -> str:
    """Where a listed output file would have landed in the run folder (the script's files
    under files/, the run's own receipt and output at its top), as the files that came are
    named; another of the kernel's files by its listed name."""
    ours = OUTPUT_FOLDER + "/"
    if name.startswith(ours + "files/"):
        return str(run_dir / "files" / name.removeprefix(ours + "files/"))
    return str(run_dir / name.removeprefix(ours)) if name.startswith(ours) else name


def read_exit_code(path: Path) -> int | None:
    """The exit code a free route's runner wrote for the script; None where it wrote none."""
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def script_ran(code: int | None, output: Path | None, fetched: list[Path]) -> list[Event]:
    """How the script ended (where it ran), then the files it left that came back: in the
    order the other routes say them, so a summary counts the files as the script's."""
    kept = None if output is None else str(output)
    ended: list[Event] = [] if code is None else [ScriptFinished(code, kept)]
    return ended + [FileFetched(str(path)) for path in fetched]


def receipt_checks(receipt: dict[str, object]) -> Iterator[Check]:
    """The verifier's checks as the receipt holds them, one event each (as the TPU routes
    report them while the verifier runs); entries that are not checks are passed over."""
    checks = receipt.get("checks")
    for item in checks if isinstance(checks, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            detail, boundary = item.get("detail"), item.get("boundary")
            yield Check(0, item["name"], item.get("ok") is True, str(detail), str(boundary))


def stop_kernel(kernels: Kernels, run: KaggleRun, ledger: KernelLedger) -> Iterator[Event]:
    """After a stop signal: a kernel that already ended is recorded so; one still running is
    said to be left running until its session limit (no public call cancels it), and stays
    open in the ledger."""
    spec = replace(run.spec, username=kernels.username)
    record = ledger.last_words().get((spec.ref, run.run_id))
    if record is None or record["op"] in ("ended", "deleted"):
        return  # nothing was pushed, or its end is already recorded
    try:
        state, _ = kernels.status(spec.ref)
    except KaggleCallFailed:
        state = "UNKNOWN"
    if state in ENDED:
        ledger.record("ended", spec.ref, run.run_id, state=state)
        yield KernelState(spec.ref, state, 0.0, spec.timeout_s)
        return
    ends_by = float(record.get("ends_by") or record["at"] + spec.timeout_s)
    url = str(record.get("url") or "")
    yield KernelLeftRunning(spec.ref, state, ends_by, url, run.practice)
