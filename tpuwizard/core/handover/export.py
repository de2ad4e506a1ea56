"""One entry for the hand-over: a target's text for a checked plan, the files the engine needs
with it (the verifier and the job script), writing all three into the export's own folder
(core/handover/place.py), and the whole hand-over as one JSON document (``export --json``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core.evidence.verifier import VERIFIER_FILENAME, verifier_source
from tpuwizard.core.export_marks import JOB_FILENAME
from tpuwizard.core.handover import gcluster, jobset, skypilot, xpk
from tpuwizard.core.handover.files import Output, write_files
from tpuwizard.core.handover.idle import UNGUARDED, Bill, cluster_bills
from tpuwizard.core.handover.job import job_script
from tpuwizard.core.handover.place import ExportPlace
from tpuwizard.core.handover.plan import HandoverPlan
from tpuwizard.core.plan.jax_versions import DEFAULT

# What each target's text is; its file's name in the export's folder is default_file's.
TARGET_WORDS = {
    "xpk": "the xpk commands",
    "jobset": "the JobSet YAML",
    "skypilot": "the SkyPilot task",
    "gcluster": "the Cluster Toolkit commands",
}


def default_file(target: str, plan: HandoverPlan) -> str:
    """The name of the target's text in the export's folder."""
    if target == "xpk":
        return xpk.commands_file(plan)
    if target == "jobset":
        return jobset.manifest_file(plan)
    if target == "gcluster":
        return gcluster.commands_file(plan)
    return skypilot.task_file(plan)


def placed(plan: HandoverPlan, place: ExportPlace) -> HandoverPlan:
    """The plan with the export's folder, as the job and the header name it."""
    return dataclasses.replace(plan, folder=place.relative)


def render(target: str, plan: HandoverPlan, image: str | None = None) -> str:
    """The text for ``target`` (xpk, jobset, skypilot or gcluster); an impossible pair raises
    BadInput."""
    if target == "xpk":
        return xpk.render(plan)
    if target == "gcluster":
        return gcluster.render(plan)
    if target == "jobset":
        return jobset.render(plan, jobset.DEFAULT_IMAGE if image is None else image)
    return skypilot.render(plan)


def bills(target: str, plan: HandoverPlan) -> list[Bill]:
    """What bills per hour while no job runs, as the target's header says it."""
    return skypilot.bills(plan) if target == "skypilot" else cluster_bills(plan)


def teardown(target: str, plan: HandoverPlan) -> list[str]:
    """The teardown lines the target's header gives."""
    if target == "xpk":
        return xpk.teardown(plan)
    if target == "jobset":
        return jobset.teardown(plan)
    if target == "gcluster":
        return gcluster.teardown(plan)
    return skypilot.teardown(plan)


def folder_files(plan: HandoverPlan) -> dict[str, str]:
    """File name -> text, for the folder the engine ships: every target runs these."""
    return {VERIFIER_FILENAME: verifier_source(), JOB_FILENAME: job_script(plan)}


def beside_files(target: str, plan: HandoverPlan) -> list[tuple[str, str, str]]:
    """(file name, text, what it is) the target writes beside its text: gcluster's JobSet."""
    if target == "gcluster":
        return [
            (
                gcluster.manifest_file(plan),
                gcluster.render_manifest(plan),
                "the JobSet it stands for",
            )
        ]
    return []


@dataclass(frozen=True)
class Written:
    """One file the hand-over wrote, and what it is."""

    path: Path
    what: str


def write_export(
    target: str,
    plan: HandoverPlan,
    text: str,
    place: ExportPlace,
    *,
    force: bool = False,
    force_hint: str = "",
    fix: str = "choose another --out",
) -> list[Written]:
    """Write the verifier, the job, what the target writes beside its text, and its text (last)
    into the export's folder, made where missing: all of them or none (core/handover/files.py:
    never over the script, a link or a file tpuwizard did not write unless ``force``). A refusal
    raises :class:`BadInput` naming the file and ``fix``, what to do instead."""
    outputs = [
        Output(
            place.folder / filename,
            content,
            "the verifier" if filename == VERIFIER_FILENAME else "the job every VM runs",
            fix,
        )
        for filename, content in folder_files(plan).items()
    ]
    outputs += [
        Output(place.folder / filename, content, what, fix)
        for filename, content, what in beside_files(target, plan)
    ]
    outputs.append(
        Output(place.folder / default_file(target, plan), text, TARGET_WORDS[target], fix)
    )
    script = place.shipped / plan.script if plan.script is not None else None
    write_files(outputs, script=script, force=force, force_hint=force_hint)
    return [Written(o.path, o.what) for o in outputs]


def plan_document(plan: HandoverPlan) -> dict[str, object]:
    """The plan as JSON: the slice as GKE sees it, how many, and what runs."""
    gke = plan.gke
    return {
        "accelerator": plan.slice.name,
        "generation": plan.slice.generation.key,
        "gke_accelerator": gke.accelerator_label,
        "topology": gke.topology,
        "chips_per_slice": plan.slice.chips,
        "vms_per_slice": gke.vms,
        "chips_per_vm": gke.chips_per_vm,
        "slices": plan.slices,
        "processes": plan.processes,
        "route": plan.route,
        "zone": plan.zone,
        "project": plan.project,
        "cluster": plan.cluster,
        "workload": plan.workload,
        "packages": list(plan.packages),
        "script": plan.script,
        "script_args": list(plan.script_args),
        "max_run_minutes": plan.max_run_minutes,
        "deadline_seconds": plan.deadline_seconds,
        "max_restarts": plan.max_restarts,
        "jax": plan.jax or DEFAULT.version,
        "queue": plan.queue,
        "priority": plan.priority,
        "reservation": plan.reservation,
    }


def export_document(
    target: str, plan: HandoverPlan, written: list[Written], text: str | None
) -> dict[str, object]:
    """``export --json``: the plan, the files written, what bills while idle and the teardown
    lines; ``text`` is the target's text where no file holds it (no ``--out``)."""
    idle = bills(target, plan)
    known = [b.usd_per_hour for b in idle if b.usd_per_hour is not None]
    document: dict[str, object] = {
        "target": target,
        "plan": plan_document(plan),
        "files": [{"path": str(w.path), "what": w.what} for w in written],
        "idle_bills": [
            {"what": b.what, "usd_per_hour": b.usd_per_hour, "source": b.source} for b in idle
        ],
        # A floor where a figure is unknown: idle_price_complete says which.
        "idle_usd_per_hour": round(sum(known), 4),
        "idle_price_complete": len(known) == len(idle),
        "teardown": teardown(target, plan),
        "unguarded": UNGUARDED,
        "applied": False,  # export makes no cloud call: it only wrote the files above
    }
    if text is not None:
        document["text"] = text
    return document
