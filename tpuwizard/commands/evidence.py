"""Evidence: running the verifier, checking receipts, notebooks."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from tpuwizard.commands.common import Group, Whole, print_json, say, show
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice


@click.command()
@click.option(
    "--expect",
    type=click.Choice(["cpu", "tpu", "gpu"]),
    default="cpu",
    show_default=True,
    help="The platform that must run the computation.",
)
@click.option(
    "--devices",
    type=Whole(),
    default=1,
    show_default=True,
    help="CPU devices to simulate (XLA host platform device count).",
)
@click.option("--perf", is_flag=True, help="Also time bf16/fp32 matmuls.")
@click.option(
    "--precision",
    is_flag=True,
    help="Also measure fp32, bf16 and int8 error on a matmul and a small MLP.",
)
@click.option(
    "--trace",
    is_flag=True,
    help="Also capture a jax.profiler trace into trace/ beside the receipt.",
)
@click.option(
    "--receipt",
    "receipt_path",
    type=click.Path(path_type=Path),
    help="Where to write the receipt (default runs/<run id>/receipt.json).",
)
@click.option("--run-dir", type=click.Path(path_type=Path), help="Base folder for run folders.")
def verify(
    expect: str,
    devices: int,
    perf: bool,
    precision: bool,
    trace: bool,
    receipt_path: Path | None,
    run_dir: Path | None,
) -> None:
    """Run the verifier here, stream it, and save its receipt."""
    from tpuwizard.core import paths
    from tpuwizard.core.evidence.verifier import check_device_count, run_local
    from tpuwizard.session.session import new_run

    check_device_count(devices)
    if receipt_path is None:
        folder = paths.make_folder(new_run(run_dir)[1], "The run folder (--run-dir)")
        receipt_path = folder / "receipt.json"
    elif receipt_path.is_dir():
        raise BadInput(f"--receipt {receipt_path} is a folder: give a file such as receipt.json.")
    else:
        paths.make_folder(receipt_path.parent, "The receipt's folder (--receipt)")
    lines = run_local(expect, devices, receipt_path, perf, precision=precision, trace=trace)
    while True:
        try:
            line = next(lines)
        except StopIteration as done:
            code = done.value
            break
        if line.payload is None:
            show(line.text)
    if receipt_path.exists():
        say(f"Receipt: {receipt_path}")
    if trace and (receipt_path.parent / "trace").is_dir():
        say(f"Trace: {receipt_path.parent / 'trace'} (tensorboard/xprof --logdir, or Perfetto)")
    sys.exit(EXIT_OK if code == 0 else EXIT_FAILED)


@click.group(cls=Group)
def receipt() -> None:
    """Check receipts written by the verifier."""


@receipt.command("check")
@click.argument("file", metavar="FILE_OR_RUN_FOLDER", type=click.Path(path_type=Path))
@click.option(
    "--expect",
    type=click.Choice(["cpu", "tpu", "gpu"]),
    help="The platform the receipt must prove.",
)
@click.option("--accelerator", help="The accelerator type it must match, e.g. v5litepod-4.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def receipt_check(file: Path, expect: str | None, accelerator: str | None, as_json: bool) -> None:
    """Recompute a receipt's hash and check it proves the run you asked for. Give a receipt
    (receipt.json, slice-receipt.json, chain.json), a saved log or the course's report, or a
    run folder (runs/<run id>): the receipt the run left in it is checked."""
    from tpuwizard.core.evidence.receipt import HASH_MEANING, check_receipt, read_receipt

    folder = file if file.is_dir() else None
    if folder is not None:
        file = receipt_in_run_folder(folder)
    if file.name == "chain.json":
        chain_check(file, expect, accelerator, as_json, of_folder=folder is not None)
    course_report_check(file, expect, accelerator, as_json)  # lesson one's: exits when it is
    data, notes = read_receipt(file)
    if data.get("kind") == "slice":
        from tpuwizard.core.evidence.slice_receipt import check_slice_receipt

        result = check_slice_receipt(data, file.parent, accelerator, expect)
    else:
        result = check_receipt(data, expect, accelerator, folder=file.parent)
    result.facts[:0] = notes  # a saved log: which of its lines was judged, and why that one
    say_verdict(file, result, HASH_MEANING, as_json)


def receipt_in_run_folder(folder: Path) -> Path:
    """The file a run folder's verdict rests on, as the run folder lays it out: a resumed
    run's chain.json (it checks every attempt's receipt), a slice's slice-receipt.json, else
    receipt.json; a folder without one (``run`` on a kept node keeps the script's output.txt)
    checks output.txt as the course's report. Said on stderr, so the verdict names its file."""
    from tpuwizard.core.evidence.chain import ATTEMPTS_FOLDER, CHAIN_FILE
    from tpuwizard.core.launch.workers.jobs import OUTPUT_FILE
    from tpuwizard.core.launch.workers.multihost import SLICE_RECEIPT

    chain = folder / CHAIN_FILE
    if os.path.lexists(chain) or (folder / ATTEMPTS_FOLDER).is_dir():
        # A resumed run: its verdict is the chain's, never the last attempt's receipt alone.
        say(f"Checking {chain}: the run folder's chain of attempts.")
        return chain
    for name, what in (
        (CHAIN_FILE, "chain of attempts"),
        (SLICE_RECEIPT, "slice's receipt"),
        ("receipt.json", "receipt"),
        (OUTPUT_FILE, "script output, checked as the course's report"),
    ):
        if (folder / name).is_file():
            say(f"Checking {folder / name}: the run folder's {what}.")
            if name == OUTPUT_FILE:  # `run` on a kept node: its node was verified by `up`
                say(
                    f"{folder} holds no receipt.json: a run on a kept node has none of its "
                    "own; the node's receipt is in the run folder of the `up` that made it."
                )
            return folder / name
    raise BadInput(
        f"{folder} is a folder with no receipt.json, slice-receipt.json, chain.json or "
        f"{OUTPUT_FILE} in it: give a run folder (runs/<run id>) or the receipt file itself "
        "(tpuwizard receipt check runs/<run id>/receipt.json)."
    )


def say_verdict(
    file: Path, result: Any, meaning: str, as_json: bool, kind: str | None = None
) -> NoReturn:
    """A check's verdict (a receipt's, or the course's report's: ``kind``) as the command's
    result, on stdout for `> verdict.txt` and pipes; exit 0 when it holds, 1 when not."""
    if as_json:
        extra = {"kind": kind} if kind else {}
        print_json(
            {
                "ok": result.ok,
                **extra,
                "problems": result.problems,
                "facts": result.facts,
                "measurements": result.measurements,
                "hash_meaning": meaning,
            }
        )
    else:
        for fact in result.facts:
            show(f"  ok   {fact}")
        for line in result.measurements:
            show(f"  -    {line}")
        for problem in result.problems:
            show(f"  FAIL {problem}")
        which = " (the course's report)" if kind else ""
        show(f"{file}: {'valid' if result.ok else 'REJECTED'}{which}")
        say(meaning)
    sys.exit(EXIT_OK if result.ok else EXIT_FAILED)


def course_report_check(
    file: Path, expect: str | None, accelerator: str | None, as_json: bool
) -> None:
    """The course's lesson-one report (tpu-report.txt), checked by the course's own checks;
    returns when ``file`` is not one."""
    from tpuwizard.core.evidence.course_report import (
        REPORT_MEANING,
        check_course_report,
        read_course_report,
    )

    reports = read_course_report(file)
    if reports is None:
        return
    result = check_course_report(reports, expect)
    if accelerator:  # not a failure, and not a pass either: the report cannot say
        result.measurements.append(
            f"--accelerator {accelerator} is not checked: the course's report does not name "
            "the TPU type (a tpuwizard run's receipt.json does)"
        )
    say_verdict(file, result, REPORT_MEANING, as_json, "course-report")


@click.command()
@click.option(
    "--platform",
    "platform_key",
    type=click.Choice(["colab", "kaggle"]),
    default="colab",
    show_default=True,
    help="Where you will run the notebook.",
)
@click.option("--accelerator", help="The TPU the runtime offers (default: the free one).")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Where to write it (default tpuwizard-<platform>.ipynb).",
)
@click.option("--force", is_flag=True, help="Overwrite --out if it already exists.")
def notebook(platform_key: str, accelerator: str | None, out: Path | None, force: bool) -> None:
    """Write a Colab or Kaggle notebook that runs the verifier on a free TPU."""
    from tpuwizard.core import paths
    from tpuwizard.core.evidence import notebook as nb

    out = out or Path(f"tpuwizard-{platform_key}.ipynb")
    if out.exists() and out.is_dir():
        raise BadInput(f"{out} is a folder: give a file name such as {out}/tpuwizard.ipynb.")
    if out.exists() and not force:
        raise BadInput(f"{out} already exists: add --force to overwrite it, or choose --out.")
    paths.make_folder(out.parent, "The notebook's folder (--out)")
    path = nb.write_notebook(platform_key, out, _asked_slice(accelerator))
    plat = nb.get_platform(platform_key)
    click.echo(str(path))
    say(f"Wrote {path} for {plat.title}.")
    steps = nb.walk_steps(plat)
    for i, step in enumerate(steps, 1):
        say(f"{i}. {nb.plain(step)}")
    check = nb.check_command(platform_key, accelerator=accelerator)
    say(f"{len(steps) + 1}. Check the receipt here:  {check}")


def _asked_slice(accelerator: str | None) -> Slice | None:
    """``--accelerator``, parsed where it is read (None: the platform's own TPU)."""
    from tpuwizard.core.plan import catalog

    if not accelerator:
        return None
    try:
        return catalog.parse_accelerator(accelerator)
    except catalog.UnknownAcceleratorError as err:
        raise BadInput(str(err)) from None


def chain_check(
    file: Path, expect: str | None, accelerator: str | None, as_json: bool, of_folder: bool = False
) -> None:
    """A resumed run's chain.json: every link, the order, each attempt's receipt, by the rules
    a receipt is checked by (``--expect`` and ``--accelerator`` included). ``of_folder``: it
    was found in a run folder given: one that cannot be read is that run's verdict (REJECTED),
    where a chain.json named itself that cannot be read is bad input."""
    from tpuwizard.core.evidence.chain import check_chain, read_chain

    try:
        facts, problems = check_chain(read_chain(file), file.parent, expect, accelerator)
    except BadInput as err:
        if not of_folder:
            raise
        facts, problems = [], [chain_unread(file, str(err))]
    if as_json:
        print_json({"ok": not problems, "problems": problems, "facts": facts})
    else:
        for fact in facts:
            show(f"  ok   {fact}")
        for problem in problems:
            show(f"  FAIL {problem}")
        show(f"{file}: {'valid' if not problems else 'REJECTED'}")
    sys.exit(EXIT_FAILED if problems else EXIT_OK)


def chain_unread(file: Path, why: str) -> str:
    """Why a resumed run's folder is not valid when its chain cannot be read (issue 56: it was
    called valid from the last attempt's receipt alone)."""
    from tpuwizard.core.evidence.chain import ATTEMPTS_FOLDER

    missing = "is missing" if not os.path.lexists(file) else "cannot be read"
    return (
        f"This run resumed, and its chain of attempts {missing} ({why.rstrip('.')}): without "
        "it the attempts are not checked as one run, so the run is not valid. One attempt's "
        "receipt can still be checked by itself (it proves that attempt only): tpuwizard "
        f"receipt check {file.parent / ATTEMPTS_FOLDER}/<n>/receipt.json"
    )
