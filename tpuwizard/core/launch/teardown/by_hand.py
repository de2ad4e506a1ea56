"""When tpuwizard cannot check or delete something: the gcloud commands that do it by hand, and
the diagnosis that names them."""

from __future__ import annotations

from dataclasses import replace

from tpuwizard.core.cloud.backends import COMPUTE, VIA_RESIZE_REQUEST
from tpuwizard.core.cloud.compute.slice_body import (
    is_single_vm,
    policy_name,
    region_of,
    request_name,
    template_name,
)
from tpuwizard.core.cloud.diagnose.diagnosis import Context, Diagnosis
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.launch.records.ledger import Resource


def manual_command(resource: Resource) -> str:
    """The gcloud command(s) that delete ``resource`` by hand, on its own backend; a queued
    resource with nodes needs ``--force`` (Google refuses it otherwise). A Compute Engine slice
    is its MIG (its VMs with it), then its template, then its policy, in that order."""
    project = f" --project {resource.project}"
    if resource.backend == COMPUTE:
        if _is_slice(resource):
            region = region_of(resource.zone)
            mig = f"{resource.name} --zone {resource.zone}{project}"
            # Route 2B: an active request is cancelled, then deleted (compute.v1.json: "Requests
            # that are still active cannot be deleted"), before its MIG.
            requests = f"resize-requests {{}} {mig} --resize-requests={request_name(resource.name)}"
            steps = [
                f"gcloud compute instance-groups managed delete {mig} --quiet",
                f"gcloud compute instance-templates delete {template_name(resource.name)} "
                f"--region {region}{project} --quiet",
            ]
            if resource.via == VIA_RESIZE_REQUEST:
                return " && ".join(
                    [
                        f"(gcloud compute instance-groups managed {requests.format('cancel')}; "
                        f"gcloud compute instance-groups managed {requests.format('delete')} "
                        "--quiet)",
                        *steps,
                    ]
                )
            policy = (
                f"gcloud compute resource-policies delete {policy_name(resource.name)} "
                f"--region {region}{project} --quiet"
            )
            return " && ".join([*steps, policy])
        return f"gcloud compute instances delete {resource.name} --zone {resource.zone}{project}"
    if resource.kind == "queued":
        return (
            f"gcloud compute tpus queued-resources delete {resource.name} --zone {resource.zone}"
            f"{project} --force"
        )
    return f"gcloud compute tpus tpu-vm delete {resource.name} --zone {resource.zone}{project}"


def list_command(resource: Resource) -> str:
    """The gcloud command that shows whether ``resource`` is there, on its own backend."""
    project = f" --project {resource.project}"
    if resource.backend == COMPUTE:
        if _is_slice(resource):
            region = region_of(resource.zone)
            listed = (
                f"gcloud compute instance-groups managed list --filter=name={resource.name} "
                f"--zones={resource.zone}{project} && gcloud compute instance-templates list "
                f"--filter=name={template_name(resource.name)} --regions={region}{project}"
            )
            if resource.via == VIA_RESIZE_REQUEST:
                return (
                    f"{listed} && gcloud compute instance-groups managed resize-requests list "
                    f"{resource.name} --zone={resource.zone}{project}"
                )
            return (
                f"{listed} && gcloud compute resource-policies list "
                f"--filter=name={policy_name(resource.name)}{project}"
            )
        return (
            f"gcloud compute instances list --filter=name={resource.name} "
            f"--zones={resource.zone}{project}"
        )
    what = "queued-resources" if resource.kind == "queued" else "tpu-vm"
    return f"gcloud compute tpus {what} list --zone {resource.zone}{project}"


def _is_slice(resource: Resource) -> bool:
    """A Compute Engine slice (a MIG and its parts), unless the ledger says single-host and
    not the course's Route 2B (one VM, but a MIG's)."""
    if resource.via == VIA_RESIZE_REQUEST:
        return True
    return not is_single_vm(resource.accelerator) if resource.accelerator else False


# Diagnoses of the zone itself (it refuses this project, or the API does not know it): their own
# advice, "choose another zone", is no help for what may already exist there.
ZONE_LEVEL = ("zone_unavailable", "invalid_zone")


def check_failed(err: BaseException, resource: Resource) -> Diagnosis:
    """Why ``resource`` could not be checked (or deleted) and how to settle it by hand."""
    d = diagnose(
        err,
        Context(
            project=resource.project,
            zone=resource.zone,
            accelerator=resource.accelerator,
            name=resource.name,
            backend=resource.backend,
            slice=resource.known_slice,
        ),
    )
    by_hand = [
        f"See whether it is there: {list_command(resource)}",
        f"If it is, delete it by hand: {manual_command(resource)}",
    ]
    if d.kind not in ZONE_LEVEL:
        return replace(d, next_steps=[*d.next_steps, *by_hand])
    title = d.title  # "Z is not available to your project"
    if d.kind == "invalid_zone":  # its own title is about offering a TPU type, not existing
        api = "Compute Engine" if resource.backend == COMPUTE else "The TPU API"
        title = f"{api} does not know the zone {resource.zone}"
    again = f"Once {resource.zone} answers, tpuwizard teardown {resource.name} deletes it."
    return replace(d, title=title, next_steps=[*by_hand, again], alternatives=[])
