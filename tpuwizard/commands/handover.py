"""``tpuwizard export``: the same plan, written for GKE (xpk, a JobSet, Cluster Toolkit) or
SkyPilot. It only writes files: no cloud call, in practice as in real mode."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import print_json, say
from tpuwizard.commands.options.export import (
    admission_options,
    job_options,
    target_options,
    where_options,
    workload_options,
)
from tpuwizard.core.errors import BadInput

if TYPE_CHECKING:
    from tpuwizard.commands.options.export import Admission, ExportJob, ExportTarget, ExportWhere
    from tpuwizard.core.launch.plan.parts import Workload


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
@workload_options
@target_options
@where_options
@job_options
@admission_options
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document: the plan, the files written, what bills while idle and the "
    "teardown lines (the target's text too, without --out).",
)
def export(
    workload: Workload,
    target: ExportTarget,
    where: ExportWhere,
    job: ExportJob,
    admission: Admission,
    as_json: bool,
) -> None:
    """Hand the plan to GKE (xpk, a JobSet or Cluster Toolkit) or SkyPilot: write the commands,
    with what bills while idle and how to tear down. Nothing is created."""
    from tpuwizard.core.handover.export import export_document, placed, render, write_export
    from tpuwizard.core.handover.place import export_place
    from tpuwizard.core.handover.plan import make_plan

    script = workload.script
    plan = make_plan(
        where.accelerator,
        slices=where.slices,
        route=where.route,
        packages=[s.text for s in workload.packages],
        script=script.name if script is not None else None,
        script_args=workload.script_args,
        max_run_minutes=job.max_run,
        max_restarts=job.max_restarts,
        cluster=admission.cluster,
        workload=job.name,
        zone=where.zone,
        project=where.project,
        jax=workload.jax,
        queue=admission.queue,
        priority=admission.priority,
        reservation=admission.reservation,
    )
    place = export_place(target.to, target.out, script)
    plan = placed(plan, place)
    # Rendered before any file is written: it may refuse the pair.
    text = render(target.to, plan, target.image)
    written = write_export(
        target.to,
        plan,
        text,
        place,
        force=target.force,
        force_hint=", or add --force to overwrite it",
    )
    if as_json:
        print_json(
            export_document(target.to, plan, written, None if target.out is not None else text)
        )
        return
    *shipped, main = written
    say(
        f"Wrote {place.folder}/: {main.path.name} ({main.what}), "
        + ", ".join(f"{w.path.name} ({w.what})" for w in shipped)
        + ". Nothing was created; read the header of "
        + f"{main.path.name} for the idle cost and teardown."
    )
    if target.out is None:
        click.echo(text, nl=False)
