"""The ``tpuwizard`` command line. Every command imports what it needs when it runs, so start-up
stays fast: ``tpuwizard fit`` never loads jax, grpc, google.cloud or textual."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from tpuwizard import __version__
from tpuwizard.core.errors import BadInput

# Exit codes, as DESIGN.md fixes them.
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_CLOUD, EXIT_TEARDOWN = 0, 1, 2, 3, 4


def say(text: str = "") -> None:
    """Human text goes to stderr so that ``--json`` keeps stdout to one JSON document."""
    click.echo(text, err=True)


def print_json(data: object) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False))


class Group(click.Group):
    """Turns :class:`BadInput` from any command into its message and exit code 2."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BadInput as err:
            say(f"Error: {err}")
            raise click.exceptions.Exit(EXIT_BAD_INPUT) from None


@click.group(
    cls=Group, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, prog_name="tpuwizard")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Run a JAX experiment on a Cloud TPU, prove it ran there, and leave nothing billing."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@main.command()
@click.argument("size", required=False)
@click.option("--params", help="Parameter count instead of a size: 7B, 350M, 1.5e9.")
@click.option(
    "--recipe",
    default="bf16-adam",
    show_default=True,
    help="Bytes per parameter: adam-fp32 16, bf16-adam 12, mixed-adam 18, "
    "inference-bf16 2, inference-int8 1.",
)
@click.option("--slices", help="Comma-separated slices to compare, e.g. v5litepod-4,v6e-4.")
@click.option("--generation", help="Only these generations, e.g. v5e,v6e.")
@click.option("--single-host", is_flag=True, help="Only slices that are one VM.")
@click.option("--max-chips", type=int, help="Only slices with at most this many chips.")
@click.option(
    "--usable",
    type=float,
    default=None,
    help="Fraction of nominal HBM usable by your program (default 0.94).",
)
@click.option(
    "--route",
    type=click.Choice(["on-demand", "spot", "flex"]),
    default="on-demand",
    show_default=True,
    help="Which price to show.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def fit(
    size: str | None,
    params: str | None,
    recipe: str,
    slices: str | None,
    generation: str | None,
    single_host: bool,
    max_chips: int | None,
    usable: float | None,
    route: str,
    as_json: bool,
) -> None:
    """Which TPU slices hold a training state of SIZE (48, 48GiB, 51.5GB)?"""
    from tpuwizard.core import fit as fitting

    if (size is None) == (params is None):
        raise BadInput(
            "Give either a state size (tpuwizard fit 48GiB) or --params 7B "
            "[--recipe bf16-adam], not both and not neither."
        )
    per_param = None
    if params is not None:
        per_param = fitting.bytes_per_param(recipe)
        state = fitting.state_from_params(fitting.parse_params(params), recipe)
    else:
        state = fitting.parse_size_gib(size or "")
    reserve = fitting.DEFAULT_RESERVE
    if usable is not None:
        if not (0 < usable <= 1):
            raise BadInput(
                f"--usable must be a fraction above 0 and at most 1, such as 0.94; got {usable}."
            )
        reserve = 1 - usable
    chosen = fitting.select_slices(_split(slices), _split(generation), single_host, max_chips)
    if not chosen:
        raise BadInput(
            "No slice matches those filters: loosen --generation, --max-chips or --single-host."
        )
    fits = fitting.plan(state, chosen, reserve, route)
    if as_json:
        print_json(
            {
                "state_gib": round(state, 6),
                "bytes_per_param": per_param,
                "slices": [f.to_dict() for f in fits],
            }
        )
        return
    from tpuwizard.render import render_fit

    render_fit(
        state,
        per_param,
        recipe if params else None,
        fits,
        route,
        fitting.verdict(state, fits),
        fitting.ACTIVATION_NOTE,
    )


@main.command()
@click.option(
    "--expect",
    type=click.Choice(["cpu", "tpu", "gpu"]),
    default="cpu",
    show_default=True,
    help="The platform that must run the computation.",
)
@click.option(
    "--devices",
    type=int,
    default=1,
    show_default=True,
    help="CPU devices to simulate (XLA host platform device count).",
)
@click.option("--perf", is_flag=True, help="Also time bf16/fp32 matmuls.")
@click.option(
    "--receipt",
    "receipt_path",
    type=click.Path(path_type=Path),
    help="Where to write the receipt (default runs/<run id>/receipt.json).",
)
@click.option("--run-dir", type=click.Path(path_type=Path), help="Base folder for run folders.")
def verify(
    expect: str, devices: int, perf: bool, receipt_path: Path | None, run_dir: Path | None
) -> None:
    """Run the verifier here, stream it, and save its receipt."""
    from tpuwizard.core import paths
    from tpuwizard.core.verifier import run_local

    if devices < 1:
        raise BadInput(f"--devices must be 1 or more, not {devices}.")
    if receipt_path is None:
        receipt_path = paths.run_dir(paths.new_run_id(), run_dir) / "receipt.json"
    lines = run_local(expect, devices, receipt_path, perf)
    while True:
        try:
            line = next(lines)
        except StopIteration as done:
            code = done.value
            break
        if line.payload is None:
            click.echo(line.text)
    if receipt_path.exists():
        say(f"Receipt: {receipt_path}")
    sys.exit(EXIT_OK if code == 0 else EXIT_FAILED)


@main.group(cls=Group)
def receipt() -> None:
    """Check receipts written by the verifier."""


@receipt.command("check")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--expect",
    type=click.Choice(["cpu", "tpu", "gpu"]),
    help="The platform the receipt must prove.",
)
@click.option("--accelerator", help="The accelerator type it must match, e.g. v5litepod-4.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def receipt_check(file: Path, expect: str | None, accelerator: str | None, as_json: bool) -> None:
    """Recompute a receipt's hash and check it proves the run you asked for."""
    from tpuwizard.core.receipt import check_receipt, load_receipt

    result = check_receipt(load_receipt(file), expect, accelerator)
    if as_json:
        print_json({"ok": result.ok, "problems": result.problems, "facts": result.facts})
    else:
        for fact in result.facts:
            say(f"  ok   {fact}")
        for problem in result.problems:
            say(f"  FAIL {problem}")
        say(f"{file}: {'valid' if result.ok else 'REJECTED'}")
    sys.exit(EXIT_OK if result.ok else EXIT_FAILED)


@main.command()
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
def notebook(platform_key: str, accelerator: str | None, out: Path | None) -> None:
    """Write a Colab or Kaggle notebook that runs the verifier on a free TPU."""
    from tpuwizard.core import notebook as nb

    out = out or Path(f"tpuwizard-{platform_key}.ipynb")
    if out.exists() and out.is_dir():
        raise BadInput(f"{out} is a folder: give a file name such as {out}/tpuwizard.ipynb.")
    path = nb.write_notebook(platform_key, out, accelerator)
    plat = nb.get_platform(platform_key)
    click.echo(str(path))
    say(f"Wrote {path} for {plat.title}.")
    say(f"1. Upload it to {plat.title} and switch the runtime to TPU:")
    for step in plat.switch_steps:
        say(f"   - {step.replace('**', '')}")
    say(f"2. Run all cells. {plat.download.replace('**', '')}")
    say(f"3. Check the receipt here:  {nb.check_command(platform_key, accelerator=accelerator)}")


def _split(text: str | None) -> list[str] | None:
    if not text:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]
