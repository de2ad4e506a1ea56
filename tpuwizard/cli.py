"""The ``tpuwizard`` command line. Every command imports what it needs when it runs, so start-up
stays fast: ``tpuwizard fit`` never loads jax, grpc, google.cloud or textual."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def cloud_errors(context: object = None) -> Iterator[None]:
    """Any failure inside becomes a diagnosis on stderr and exit code 3, never a traceback."""
    try:
        yield
    except (BadInput, click.exceptions.Exit, SystemExit):
        raise
    except Exception as err:
        from tpuwizard.core.diagnose import diagnose

        say(diagnose(err, context).render())  # type: ignore[arg-type]
        raise click.exceptions.Exit(EXIT_CLOUD) from None


def connect(project: str | None, sandbox: bool) -> tuple[object, bool]:
    """A TpuCloud for ``project``: the sandbox when asked, or when no credentials exist."""
    from tpuwizard.core import gcloud_config, practice
    from tpuwizard.core.cloud import TpuCloud

    use_sandbox = sandbox or (not practice.is_practice() and not gcloud_config.has_credentials())
    if use_sandbox and not practice.is_practice():
        practice.start_sandbox()
    if practice.is_practice():
        say("[practice] Using the local sandbox: nothing here is a real Cloud TPU.")
        return TpuCloud(project or practice.PRACTICE_PROJECT), True
    ctx = gcloud_config.discover(project=project)
    if ctx.project is None:
        raise BadInput(
            "No project is set: give --project PROJECT_ID or run "
            "`gcloud config set project PROJECT_ID`."
        )
    gcloud_config.validate_project(ctx.project)
    return TpuCloud(ctx.project), False


@main.command()
@click.option("--accelerator", help="Only zones offering this type, e.g. v5litepod-4.")
@click.option(
    "--live/--offline",
    default=None,
    help="Ask the TPU API (default with credentials) or use the documented catalog.",
)
@click.option("--project", help="Project to survey (default from gcloud).")
@click.option("--sandbox", is_flag=True, help="Survey the local practice sandbox.")
@click.option("--refresh", is_flag=True, help="Ignore the cached live answer.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def zones(
    accelerator: str | None,
    live: bool | None,
    project: str | None,
    sandbox: bool,
    refresh: bool,
    as_json: bool,
) -> None:
    """Which zones offer which TPU types."""
    from tpuwizard.core import catalog, gcloud_config
    from tpuwizard.core import zones as zone_survey
    from tpuwizard.core.diagnose import Context

    runtime = None
    if accelerator:
        try:
            runtime = catalog.parse_accelerator(accelerator).generation.runtime_version
        except catalog.UnknownAcceleratorError as err:
            raise BadInput(str(err)) from None
    if project:
        gcloud_config.validate_project(project)
    if live is None:
        live = sandbox or gcloud_config.has_credentials()
    practice_mode = False
    if live:
        cloud, practice_mode = connect(project, sandbox)
        with cloud_errors(Context(project=cloud.project, accelerator=accelerator)):
            survey = zone_survey.live(cloud, refresh=refresh)
    else:
        survey = zone_survey.documented()
    table = survey.narrowed(accelerator)
    if as_json:
        doc: dict[str, object] = {"source": survey.source, "zones": table}
        if accelerator:
            doc.update(accelerator=accelerator, runtime_version=runtime)
        print_json(doc)
    else:
        from tpuwizard.render import render_zones

        label = (
            "live from the TPU API"
            + (" (practice sandbox)" if practice_mode else "")
            + (", cached" if survey.cached else "")
            if survey.source == "live"
            else "documented, not live"
        )
        unconfirmed: frozenset[str] = frozenset()
        if survey.source == "documented":
            gens = (
                [catalog.parse_accelerator(accelerator).generation]
                if accelerator
                else list(catalog.generations().values())
            )
            # A zone is unconfirmed when no generation shown there is confirmed in it.
            confirmed = {z for g in gens for z in g.zones if z not in g.zones_unconfirmed}
            unconfirmed = frozenset(z for z in table if z not in confirmed)
        render_zones(
            table,
            label,
            accelerator,
            runtime,
            zone_survey.OFFERED_NOTE,
            survey.failures,
            unconfirmed,
        )
    if accelerator and not table:
        raise click.exceptions.Exit(EXIT_FAILED)


@main.group(cls=Group)
def sandbox() -> None:
    """The local practice stand-in for the Cloud TPU API."""


@sandbox.command("serve")
@click.option("--port", type=int, default=0, help="Port on 127.0.0.1 (default: a free one).")
@click.option("--faults", help="Fault spec, e.g. 'stockout=us-central1-a;unavailable=2'.")
@click.option(
    "--delay",
    type=float,
    default=2.0,
    show_default=True,
    help="Seconds a node takes to become READY.",
)
def sandbox_serve(port: int, faults: str | None, delay: float) -> None:
    """Run the sandbox in the foreground until Ctrl+C."""
    import os

    from tpuwizard.core import paths
    from tpuwizard.core.practice import FAULTS_ENV
    from tpuwizard.sandbox.server import make_server

    if not 0 <= port <= 65535:
        raise BadInput(f"--port must be 0-65535, not {port}.")
    try:
        server = make_server(
            paths.state_dir() / "sandbox",
            port,
            faults if faults is not None else os.environ.get(FAULTS_ENV),
            delay,
        )
    except OSError as err:
        raise BadInput(
            f"Cannot listen on 127.0.0.1:{port} ({err.strerror}): choose another "
            "--port, or 0 for a free one."
        ) from None
    say("[practice] tpuwizard sandbox: a local stand-in for the Cloud TPU API.")
    click.echo(server.endpoint, nl=True)
    say(f"Point tpuwizard at it with: export TPUWIZARD_TPU_ENDPOINT={server.endpoint}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        say("Sandbox stopped.")
    finally:
        server.server_close()


def _split(text: str | None) -> list[str] | None:
    if not text:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]
