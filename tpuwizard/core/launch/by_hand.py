"""When tpuwizard cannot check or delete something: the gcloud commands that do it by hand, and
the diagnosis that names them."""

from __future__ import annotations

from dataclasses import replace

from tpuwizard.core.cloud.backends import COMPUTE
from tpuwizard.core.cloud.diagnose import Context, Diagnosis, diagnose
from tpuwizard.core.launch.ledger import Resource


def manual_command(resource: Resource) -> str:
    """The gcloud command that deletes ``resource`` by hand; a queued resource with nodes needs
    ``--force`` (Google refuses it otherwise; it deletes only the nodes the request made)."""
    project = f" --project {resource.project}"
    where = f"--zone {resource.zone}{project}"
    if resource.backend == COMPUTE and _one_vm(resource):
        return f"gcloud compute instances delete {resource.name} {where}"
    if resource.backend == COMPUTE:  # a slice: its MIG, then what the MIG was made from
        return (
            f"gcloud compute instance-groups managed delete {resource.name} {where}, then its "
            "instance template and resource policy"
        )
    if resource.kind == "queued":
        return (
            f"gcloud compute tpus queued-resources delete {resource.name} --zone {resource.zone}"
            f"{project} --force"
        )
    return f"gcloud compute tpus tpu-vm delete {resource.name} --zone {resource.zone}{project}"


def list_command(resource: Resource) -> str:
    """The gcloud command that lists what is in ``resource``'s zone, to look by hand."""
    if resource.backend == COMPUTE:
        return f"gcloud compute instances list --zones {resource.zone} --project {resource.project}"
    what = "queued-resources" if resource.kind == "queued" else "tpu-vm"
    return f"gcloud compute tpus {what} list --zone {resource.zone} --project {resource.project}"


def _one_vm(resource: Resource) -> bool:
    """A Compute Engine record of one instance, not of a slice (a MIG and its parts)."""
    from tpuwizard.core.cloud.compute_slice_body import is_single_vm

    return not resource.accelerator or is_single_vm(resource.accelerator)


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
        title = f"The TPU API does not know the zone {resource.zone}"
    again = f"Once {resource.zone} answers, tpuwizard teardown {resource.name} deletes it."
    return replace(d, title=title, next_steps=[*by_hand, again], alternatives=[])
