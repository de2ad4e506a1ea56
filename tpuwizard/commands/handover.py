"""``tpuwizard export``: the same plan, written for GKE (xpk, a JobSet, Cluster Toolkit) or
SkyPilot. It only writes files: no cloud call, in practice as in real mode."""

from __future__ import annotations

from pathlib import Path

import click

from tpuwizard.commands.common import Number, Whole, print_json, say
from tpuwizard.commands.options.jax import jax_option
from tpuwizard.commands.options.packages import asked_packages, check_packages, packages_options
from tpuwizard.core.deadlines import deadline_bounds_text
from tpuwizard.core.errors import BadInput, shown


class JsonErrors(click.Command):
    """With ``--json``, a refusal is also one JSON document on stdout (``{"error": ...}``), so a
    script reading stdout learns why; the words stay on stderr and the exit code stays 2."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        asked = "--json" in args[: args.index("--")] if "--" in args else "--json" in args
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as err:
            if asked:
                print_json({"error": {"kind": "bad_input", "message": err.format_message()}})
            raise

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BadInput as err:
            if ctx.params.get("as_json"):
                from tpuwizard.words.event_text import refusal_text

                print_json({"error": {"kind": "bad_input", "message": refusal_text(err)}})
            raise


@click.command(cls=JsonErrors)
@click.option(
    "--to",
    "target",
    type=click.Choice(["xpk", "jobset", "skypilot", "gcluster"]),
    default="xpk",
    show_default=True,
    help="xpk commands (and the JobSet they apply), a JobSet YAML for GKE, a SkyPilot task, or "
    "a Cluster Toolkit gcluster job submit (and the JobSet it stands for).",
)
@click.option("--accelerator", required=True, help="TPU type of one slice, e.g. v5litepod-16.")
@click.option(
    "--slices",
    type=Whole(),
    default=1,
    show_default=True,
    help="Slices joined by Multislice: data-parallel copies, not room for a larger state.",
)
@click.option(
    "--route",
    type=click.Choice(["vm", "spot", "flex"]),
    default="vm",
    show_default=True,
    help="On-demand, spot, or Flex-start capacity.",
)
@click.option("--zone", help="Zone (default: the first documented zone offering the slice).")
@click.option("--project", help="Project (default: xpk's and gcloud's own).")
@click.option("--cluster", default="tpuwizard", show_default=True, help="GKE cluster name.")
@click.option("--name", default="tpuwizard-run", show_default=True, help="Workload name.")
@click.option(
    "--script", type=click.Path(path_type=Path), help="Your script to run after the verifier."
)
@packages_options
@jax_option
@click.option(
    "--max-run",
    type=Number(unit="minutes"),
    help=f"Deadline of one attempt in minutes, {deadline_bounds_text()} (the JobSet's "
    "activeDeadlineSeconds; xpk and SkyPilot have none, and the header says so).",
)
@click.option(
    "--max-restarts",
    type=Whole(),
    default=0,
    show_default=True,
    help="How many times the engine restarts a failed run (xpk's --max-restarts, gcluster's "
    "--restarts, the JobSet's failurePolicy.maxRestarts).",
)
@click.option("--image", help="--to jobset: a container image holding your folder.")
@click.option(
    "--queue",
    metavar="NAME",
    help="Kueue LocalQueue to submit to: the JobSet's kueue.x-k8s.io/queue-name label. Without "
    "it, a cluster whose Kueue manages every job never starts the JobSet. --to jobset only "
    "(xpk always names its own queue; SkyPilot's TPU VMs have none).",
)
@click.option(
    "--priority",
    metavar="CLASS",
    help="Kubernetes PriorityClass of the Pods (priorityClassName), which Kueue takes as the "
    "workload's priority; --to xpk takes very-low, low, medium, high or very-high (its "
    "--priority). Not for SkyPilot.",
)
@click.option(
    "--reservation",
    metavar="NAME",
    help="Compute Engine reservation of the project to take the TPUs from (with --route vm): "
    "the JobSet's reservation node selectors, xpk's --reservation. Not for SkyPilot (its TPU "
    "VMs take none).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    metavar="FOLDER",
    help="The folder the export writes its three files into (the target's text, tpu_verify.py, "
    "tpuwizard_job.sh), inside the script's folder, which the engine ships. Default: "
    "export-TARGET there; without --out the text is also printed.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite a file of yours in the export's folder that tpuwizard did not write. Never "
    "your script, never through a link.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document: the plan, the files written, what bills while idle and the "
    "teardown lines (the target's text too, without --out).",
)
# `export --script train.py -- --lr 3e-4`: after `--`, the script's own arguments, unchanged.
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- SCRIPT_ARGS...]")
def export(
    target: str,
    accelerator: str,
    slices: int,
    route: str,
    zone: str | None,
    project: str | None,
    cluster: str,
    name: str,
    script: Path | None,
    with_specs: tuple[str, ...],
    requirements: tuple[Path, ...],
    jax: str | None,
    max_run: float | None,
    max_restarts: int,
    image: str | None,
    queue: str | None,
    priority: str | None,
    reservation: str | None,
    out: Path | None,
    force: bool,
    as_json: bool,
    script_args: tuple[str, ...],
) -> None:
    """Hand the plan to GKE (xpk, a JobSet or Cluster Toolkit) or SkyPilot: write the commands,
    with what bills while idle and how to tear down. Nothing is created."""
    from tpuwizard.core.handover.export import export_document, placed, render, write_export
    from tpuwizard.core.handover.place import export_place
    from tpuwizard.core.handover.plan import make_plan

    if script_args and script is None:
        raise BadInput("Arguments after -- are the script's: give --script FILE too.")
    if script is not None and not _is_file(script):
        raise BadInput(f"No file {shown(str(script), 80)}: give --script the path of your script.")
    if image is not None and target != "jobset":
        raise BadInput(
            "--image is for --to jobset (xpk and gcluster build their image from the folder)."
        )
    specs = asked_packages(with_specs, requirements, script)
    check_packages(specs)
    plan = make_plan(
        accelerator,
        slices=slices,
        route=route,
        packages=[s.text for s in specs],
        script=script.name if script is not None else None,
        script_args=script_args,
        max_run_minutes=max_run,
        max_restarts=max_restarts,
        cluster=cluster,
        workload=name,
        zone=zone,
        project=project,
        jax=jax,
        queue=queue,
        priority=priority,
        reservation=reservation,
    )
    place = export_place(target, out, script)
    plan = placed(plan, place)
    text = render(target, plan, image)  # before any file is written: it may refuse the pair
    written = write_export(
        target, plan, text, place, force=force, force_hint=", or add --force to overwrite it"
    )
    if as_json:
        print_json(export_document(target, plan, written, None if out is not None else text))
        return
    *shipped, main = written
    say(
        f"Wrote {place.folder}/: {main.path.name} ({main.what}), "
        + ", ".join(f"{w.path.name} ({w.what})" for w in shipped)
        + ". Nothing was created; read the header of "
        + f"{main.path.name} for the idle cost and teardown."
    )
    if out is None:
        click.echo(text, nl=False)


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; a name too long or otherwise unreadable is not one."""
    try:
        return path.is_file()
    except OSError:
        return False
