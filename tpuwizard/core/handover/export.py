"""One entry for the hand-over: a target's text for a checked plan, and the files the folder
shipped to the engine needs beside the script (the verifier and the job script)."""

from __future__ import annotations

from tpuwizard.core.evidence.verifier import VERIFIER_FILENAME, verifier_source
from tpuwizard.core.handover import jobset, skypilot, xpk
from tpuwizard.core.handover.job import JOB_FILENAME, job_script
from tpuwizard.core.handover.plan import HandoverPlan


def render(target: str, plan: HandoverPlan, image: str | None = None) -> str:
    """The text for ``target`` (xpk, jobset or skypilot); an impossible pair raises BadInput."""
    if target == "xpk":
        return xpk.render(plan)
    if target == "jobset":
        return jobset.render(plan, image or jobset.DEFAULT_IMAGE)
    return skypilot.render(plan)


def folder_files(plan: HandoverPlan) -> dict[str, str]:
    """File name -> text, for the folder the engine ships: every target runs these."""
    return {VERIFIER_FILENAME: verifier_source(), JOB_FILENAME: job_script(plan)}
