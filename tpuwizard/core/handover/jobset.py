"""The plan as a JobSet for GKE (``jobset.x-k8s.io/v1alpha2``, as xpk 1.16.0 writes it for TPUs).

One replicatedJob whose ``replicas`` is the number of slices; each Job has ``parallelism`` =
``completions`` = the VMs of one slice, one Pod per VM asking for the VM's chips as
``google.com/tpu``, placed by the TPU node selectors, one slice per node pool
(``exclusive-topology``). The deadline is each Job's ``activeDeadlineSeconds``: it bounds one
attempt, so a run may last (max restarts + 1) x the deadline. Restarts are
``failurePolicy.maxRestarts``. Where Kueue runs: the queue label, the Pods' priority class, the
reservation's node selectors and the autoscaler's safe-to-evict annotation (core/handover/
admission.py); a TPU7x multi-host slice also selects its node pool's workload policy
(core/handover/workload_policy.py).
"""

from __future__ import annotations

import re

from tpuwizard.core.errors import BadInput, shown
from tpuwizard.core.handover import admission, workload_policy
from tpuwizard.core.handover.idle import cluster_bills, header
from tpuwizard.core.handover.job import files_note, job_command
from tpuwizard.core.handover.plan import HandoverPlan
from tpuwizard.core.handover.yaml_text import Value, comment, dump
from tpuwizard.core.remote.transports import shell

API_VERSION = "jobset.x-k8s.io/v1alpha2"
# The image's Python runs only uv's installer: the job builds its own Python 3.12 and venv.
DEFAULT_IMAGE = "python:3.12"
# An image reference as Docker and containerd read one (github.com/distribution/reference,
# reference.go's grammar): [domain[:port]/]path[:tag][@digest], the name at most 255 characters.
_HOST_PART = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_DOMAIN = rf"(?:{_HOST_PART}(?:\.{_HOST_PART})*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_PATH = rf"{_PATH_PART}(?:/{_PATH_PART})*"
_IMAGE = re.compile(
    rf"(?P<name>(?:{_DOMAIN}/)?{_PATH})(?::[\w][\w.-]{{0,127}})?"
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?",
    re.ASCII,
)
_NAME_MAX = 255
_IMAGE_MAX = 512  # the name, a 128-character tag and a sha512 digest fit; read no further
# The node label GKE gives a capacity type (xpk/core/capacity.py, xpk 1.16.0).
CAPACITY_SELECTOR = {
    "spot": {"cloud.google.com/gke-spot": "true"},
    "flex": {"cloud.google.com/gke-queued": "true"},
}


def check_image(image: str) -> str:
    """``--image`` as an image reference, or :class:`BadInput` saying what one looks like."""
    found = _IMAGE.fullmatch(image) if len(image) <= _IMAGE_MAX else None
    if found is None or len(found["name"]) > _NAME_MAX:
        raise BadInput(
            f"--image {shown(image)} is not a container image reference: give one "
            "such as python:3.12 or us-docker.pkg.dev/my-project/my-repo/train:v1 (registry, "
            "lower-case path, :tag or @sha256:digest; no spaces or line breaks)."
        )
    return image


def manifest(plan: HandoverPlan, image: str = DEFAULT_IMAGE) -> dict[str, Value]:
    """The JobSet as data (validated against the JobSet CRD's schema in the tests)."""
    check_image(image)
    gke = plan.gke
    selector: dict[str, Value] = {
        "cloud.google.com/gke-tpu-accelerator": gke.accelerator_label,
        "cloud.google.com/gke-tpu-topology": gke.topology,
        **CAPACITY_SELECTOR.get(plan.route, {}),
        **admission.reservation_selector(plan.reservation),
    }
    if workload_policy.needed(plan):
        selector[workload_policy.SELECTOR] = workload_policy.policy_name(plan)
    pod: dict[str, Value] = {
        "restartPolicy": "Never",
        "hostNetwork": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "nodeSelector": selector,
    }
    if plan.priority is not None:
        pod["priorityClassName"] = plan.priority  # Kueue's JobSet page: the workload's priority
    job: dict[str, Value] = {
        "parallelism": gke.vms,
        "completions": gke.vms,
        "backoffLimit": 0,
    }
    if plan.deadline_seconds is not None:
        job["activeDeadlineSeconds"] = plan.deadline_seconds
    pod["tolerations"] = [{"key": "google.com/tpu", "operator": "Exists"}]
    pod["containers"] = [
        {
            "name": "jax-tpu",
            "image": image,
            "command": list[Value](job_command(plan)),
            "securityContext": {"privileged": True},
            "resources": {"limits": {"google.com/tpu": gke.chips_per_vm}},
        }
    ]
    job["template"] = {
        "metadata": {
            "labels": {"tpuwizard.dev/workload": plan.workload},
            "annotations": {admission.SAFE_TO_EVICT: "false"},
        },
        "spec": pod,
    }
    metadata: dict[str, Value] = {"name": plan.workload}
    if plan.queue is not None:
        metadata["labels"] = {admission.QUEUE_LABEL: plan.queue}  # Kueue's JobSet page
    metadata["annotations"] = {
        "alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "JobSet",
        "metadata": metadata,
        "spec": {
            "failurePolicy": {"maxRestarts": plan.max_restarts},
            "replicatedJobs": [
                {"name": "slice", "replicas": plan.slices, "template": {"spec": job}}
            ],
        },
    }


def manifest_file(plan: HandoverPlan) -> str:
    """The file the export writes the JobSet to, in its folder (not xpk's manifest file name:
    both may be there)."""
    return f"{plan.workload}.jobset.yaml"


def teardown(plan: HandoverPlan) -> list[str]:
    where = shell("--zone", plan.zone, *(["--project", plan.project] if plan.project else []))
    made = "  (if you made it with the command below)"
    pools = (
        [line + made for line in workload_policy.teardown(plan)]
        if workload_policy.needed(plan)
        else []
    )
    return [
        shell("kubectl", "delete", "jobset", plan.workload),
        *pools,
        shell("xpk", "cluster", "delete", "--cluster", plan.cluster)
        + f" {where}"
        + "  (if xpk made the cluster)",
        shell("gcloud", "container", "clusters", "list") + f" {where}",
    ]


def node_pool_notes(plan: HandoverPlan) -> list[str]:
    """TPU7x multi-host: the workload policy and the node pools that pass it, to run first on a
    cluster that has no such pools."""
    if not workload_policy.needed(plan):
        return []
    return [
        f"TPU7x multi-host: GKE places each slice by a HIGH_THROUGHPUT workload policy passed to "
        "its node pool with --placement-policy (in place of --tpu-topology), and the Pods select "
        f"it ({workload_policy.SELECTOR}; {workload_policy.SOURCE}). On a cluster without such "
        "pools (xpk cluster create --tpu-type makes them itself), run first, with --location "
        "your cluster's (gcloud container clusters list); the pools bill as the first line of "
        "the bills above says, until the teardown deletes them:",
        *(f"  {line}" for line in workload_policy.commands(plan)),
    ]


def notes(plan: HandoverPlan, image: str) -> list[str]:
    attempt = plan.max_run_minutes
    if attempt is None:
        deadline = "No deadline: the Jobs run until they end or you delete the JobSet."
    else:
        whole = attempt * (plan.max_restarts + 1)
        deadline = (
            f"Deadline: activeDeadlineSeconds {plan.deadline_seconds} bounds ONE attempt; with "
            f"{plan.max_restarts} restart(s) the run can last ({plan.max_restarts} + 1) x "
            f"{attempt:g} = {whole:g} minutes."
        )
    return [
        *admission.install_order(),
        *admission.admission_notes(plan.queue, plan.priority, plan.reservation),
        *node_pool_notes(plan),
        files_note(plan, manifest_file(plan), "this JobSet"),
        f"The image ({image}) must hold your folder ({plan.script or 'your code'} and "
        f"{plan.folder}/) in its working directory: xpk's --script-dir builds such an image "
        "(tpuwizard export --to xpk); give it with --image.",
        deadline,
        "Apply on a cluster with TPU node pools of this accelerator and topology: "
        "kubectl apply -f THIS_FILE. Each VM's log holds the verifier's receipt line.",
    ]


def render(plan: HandoverPlan, image: str = DEFAULT_IMAGE) -> str:
    head = header(
        f"JobSet ({API_VERSION}) for GKE: {plan.slices} x {plan.slice.name}.",
        plan,
        cluster_bills(plan),
        teardown(plan),
    )
    return comment([*head, "", *notes(plan, image)]) + dump(manifest(plan, image))
