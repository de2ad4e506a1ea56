"""The plan as a Cluster Toolkit job: the ``gcluster job submit`` command and the JobSet it
stands for.

Every flag is one Cluster Toolkit v1.95.0 defines (GoogleCloudPlatform/cluster-toolkit, commit
1047080375afbb44da4b596be314634e7486af4a: ``cmd/job/submit.go`` for submit's own flags,
``cmd/job/job.go`` for ``--cluster``, ``--location`` and ``--project``). The compute type is
the slice's GKE machine type, one of the values of ``pkg/config/hardware.go``'s
AcceleratorShorthandMap, with ``--topology`` given: gcluster reads a shorthand's number as chips
where Cloud TPU's v5p and TPU7x names count TensorCores, and refuses TPU7x without a topology.
The JobSet beside it follows ``pkg/orchestrator/gke/templates/jobset.tmpl``, filled for this
plan; gcluster itself writes its own after reading the cluster (``--dry-run-out``).
"""

from __future__ import annotations

from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.verifier import VERIFIER_FILENAME
from tpuwizard.core.export_marks import JOB_FILENAME
from tpuwizard.core.handover import admission, workload_policy
from tpuwizard.core.handover.idle import cluster_bills, header
from tpuwizard.core.handover.job import job_command, shipped_path
from tpuwizard.core.handover.jobset import (
    API_VERSION,
    CAPACITY_SELECTOR,
    DEFAULT_IMAGE,
    node_pool_notes,
)
from tpuwizard.core.handover.plan import HandoverPlan
from tpuwizard.core.handover.yaml_text import Value, comment, dump
from tpuwizard.core.remote.transports import shell

CTK_VERSION = "v1.95.0"
CTK_SOURCE = (
    f"Cluster Toolkit {CTK_VERSION} (GoogleCloudPlatform/cluster-toolkit, cmd/job/submit.go and "
    "cmd/job/job.go)"
)
# The GKE machine type's family, by the catalog's generation key; the VM's chips end the name.
MACHINE_FAMILY = {
    "v4": "ct4p-hightpu",
    "v5e": "ct5lp-hightpu",
    "v5p": "ct5p-hightpu",
    "v6e": "ct6e-standard",
    "tpu7x": "tpu7x-standard",
}
# The TPU machine types gcluster resolves without reading the cluster: the TPU values of
# pkg/config/hardware.go's AcceleratorShorthandMap (v1.95.0).
GCLUSTER_MACHINE_TYPES = frozenset(
    {
        "ct4p-hightpu-4t",
        "ct5p-hightpu-1t",
        "ct5p-hightpu-2t",
        "ct5p-hightpu-4t",
        "ct5lp-hightpu-1t",
        "ct5lp-hightpu-4t",
        "ct5lp-hightpu-8t",
        "ct6e-standard-1t",
        "ct6e-standard-4t",
        "ct6e-standard-8t",
        "tpu7x-standard-4t",
    }
)
# submit.go's PreRunE: "workload name cannot exceed 28 characters".
NAME_MAX = 28
# Where gcluster puts the folder it builds into the image: each file at its path from the build
# context, from the image's root (pkg/imagebuilder/crane_builder.go, header.Name = relPath).
IMAGE_ROOT = "/"
# How long the finished JobSet (and so its Pods' logs, with the receipt line) is kept: a day to
# read them, where gcluster's own default is 1h.
TTL = "24h"
TTL_SECONDS = 24 * 3600
GRACE_SECONDS = 30  # --grace-period's default, 30s
# The LocalQueue gcluster makes where the cluster has none (gke_job_orchestrator.go).
DEFAULT_QUEUE = "multislice-queue"
WORKLOAD_LABEL = "gcluster.google.com/workload"
TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"


def machine_type(plan: HandoverPlan) -> str:
    """The compute type: the slice's GKE machine type (its VM's chips, ``-4t``)."""
    return f"{MACHINE_FAMILY[plan.slice.generation.key]}-{plan.gke.chips_per_vm}t"


def check(plan: HandoverPlan) -> None:
    """What gcluster refuses raises :class:`BadInput`, saying what to use."""
    if len(plan.workload) > NAME_MAX:
        raise BadInput(
            f"--name {plan.workload} has {len(plan.workload)} characters: gcluster job submit "
            f"takes at most {NAME_MAX} ({CTK_SOURCE}). Give a shorter --name, e.g. tpuwizard-run."
        )
    if machine_type(plan) not in GCLUSTER_MACHINE_TYPES:
        raise BadInput(
            f"{plan.slice.name} needs machine type {machine_type(plan)}, which gcluster "
            f"{CTK_VERSION} does not know without reading your cluster. Use --to jobset or "
            "--to xpk for this slice."
        )


def node_constraints(plan: HandoverPlan) -> dict[str, str]:
    """``--node-constraint``'s labels (the Pods' node selector): the route's capacity, the
    reservation and TPU7x's workload policy, as ``--to jobset`` selects them."""
    labels = {
        **CAPACITY_SELECTOR.get(plan.route, {}),
        **admission.reservation_selector(plan.reservation),
    }
    if workload_policy.needed(plan):
        labels[workload_policy.SELECTOR] = workload_policy.policy_name(plan)
    return labels


def commands_file(plan: HandoverPlan) -> str:
    """The file the export writes the commands to, in its folder."""
    return f"{plan.workload}-gcluster.sh"


def manifest_file(plan: HandoverPlan) -> str:
    """The JobSet the command stands for, beside the commands."""
    return f"{plan.workload}-gcluster.jobset.yaml"


def dry_run_file(plan: HandoverPlan) -> str:
    """Where gcluster's own ``--dry-run-out`` writes its JobSet: in the export's folder."""
    return shipped_path(plan, f"{plan.workload}-gcluster-dry-run.yaml")


def container_command(plan: HandoverPlan) -> str:
    """``--command``: gcluster runs it as ``/bin/bash -c``, from the image's root, where the
    folder it built in lies."""
    return f"cd {IMAGE_ROOT} && {shell(*job_command(plan))}"


def _where(plan: HandoverPlan) -> list[str]:
    words = ["--cluster", plan.cluster, "--location", plan.zone]
    return words + (["--project", plan.project] if plan.project else [])


def submit_words(plan: HandoverPlan, dry_run: bool) -> list[str]:
    """``gcluster job submit`` as its words, before quoting."""
    check(plan)
    words = [
        "gcluster",
        "job",
        "submit",
        *_where(plan),
        "--name",
        plan.workload,
        "--compute-type",
        machine_type(plan),
        "--topology",
        plan.gke.topology,
        "--num-slices",
        str(plan.slices),
        "--base-image",
        DEFAULT_IMAGE,
        "--build-context",
        ".",
        "--command",
        container_command(plan),
        "--restarts",
        str(plan.max_restarts),
        "--gke-ttl-after-finished",
        TTL,
    ]
    if plan.queue is not None:
        words += ["--queue", plan.queue]
    if plan.priority is not None:
        words += ["--priority", plan.priority]
    labels = node_constraints(plan)
    if labels:
        words += ["--node-constraint", ",".join(f"{k}={v}" for k, v in labels.items())]
    if plan.slice.generation.key == "tpu7x":
        # gcluster splits a TPU7x VM into two containers by default; the job is one process
        # per VM, holding all its chips.
        words.append("--gke-disable-parallel-containers")
    return words + (["--dry-run-out", dry_run_file(plan)] if dry_run else [])


def submit(plan: HandoverPlan, dry_run: bool) -> str:
    return shell(*submit_words(plan, dry_run))


def image_form(plan: HandoverPlan) -> str:
    """The form of the image name gcluster gives what it builds (crane_builder.go's
    GenerateImageName): the upper-case parts are known only when it builds."""
    region = plan.zone.rsplit("-", 1)[0]
    return (
        f"{region}-docker.pkg.dev/{plan.project or 'PROJECT'}/GCLUSTER_IMAGE_REPO/USER-runner:TAG"
    )


def manifest(plan: HandoverPlan) -> dict[str, Value]:
    """The JobSet of jobset.tmpl for this command (validated against the JobSet CRD's schema in
    the tests)."""
    check(plan)
    gke = plan.gke
    selector: dict[str, Value] = {
        **node_constraints(plan),
        "cloud.google.com/gke-tpu-accelerator": gke.accelerator_label,
        TOPOLOGY_LABEL: gke.topology,
    }
    pod: dict[str, Value] = {
        "hostNetwork": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "terminationGracePeriodSeconds": GRACE_SECONDS,
    }
    if plan.priority is not None:
        pod["priorityClassName"] = plan.priority
    pod["restartPolicy"] = "Never"
    pod["containers"] = [
        {
            "name": "workload-container",
            "image": image_form(plan),
            "command": ["/bin/bash", "-c", container_command(plan)],
            "resources": {"limits": {"google.com/tpu": gke.chips_per_vm}},
        }
    ]
    pod["nodeSelector"] = selector
    pod["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "cloud.google.com/gke-nodepool",
                                "operator": "NotIn",
                                "values": ["default-pool"],
                            }
                        ]
                    }
                ]
            }
        }
    }
    pod["tolerations"] = [{"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}]
    job: dict[str, Value] = {
        "parallelism": gke.vms,
        "completions": gke.vms,
        "backoffLimit": 0,
        "template": {"metadata": {"labels": {WORKLOAD_LABEL: plan.workload}}, "spec": pod},
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "JobSet",
        "metadata": {
            "name": plan.workload,
            "labels": {
                WORKLOAD_LABEL: plan.workload,
                admission.QUEUE_LABEL: plan.queue or DEFAULT_QUEUE,
            },
            "annotations": {
                "alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"
            },
        },
        "spec": {
            "ttlSecondsAfterFinished": TTL_SECONDS,
            "failurePolicy": {
                "maxRestarts": plan.max_restarts,
                # jobset.tmpl leaves out the rule's name, which the JobSet CRD's schema
                # requires; JobSet's webhook names it failurePolicyRule0, as here.
                "rules": [
                    {
                        "name": "failurePolicyRule0",
                        "action": "FailJobSet",
                        "onJobFailureReasons": ["PodFailurePolicy"],
                    }
                ],
            },
            "replicatedJobs": [
                {"name": "main-job", "replicas": plan.slices, "template": {"spec": job}}
            ],
        },
    }


def render_manifest(plan: HandoverPlan) -> str:
    lines = [
        f"The JobSet ({API_VERSION}) that {commands_file(plan)}'s gcluster job submit stands "
        f"for: Cluster Toolkit {CTK_VERSION}'s template (pkg/orchestrator/gke/templates/"
        "jobset.tmpl) filled for this plan by tpuwizard. Never applied to a cluster here.",
        "gcluster writes its own after reading your cluster (step 2 of the commands): the queue "
        "label is the cluster's only LocalQueue where you gave no --queue, and the image the "
        f"one it builds, named as {image_form(plan)}.",
    ]
    return comment(lines) + dump(manifest(plan))


def teardown(plan: HandoverPlan) -> list[str]:
    where = shell(*_where(plan))
    policy = (
        [line + "  (if you made it)" for line in workload_policy.teardown(plan)]
        if workload_policy.needed(plan)
        else []
    )
    region_or_zone = shell("--location", plan.zone) + (
        f" {shell('--project', plan.project)}" if plan.project else ""
    )
    return [
        shell("gcluster", "job", "cancel", plan.workload) + f" {where}",
        *policy,
        shell("gcluster", "destroy", plan.cluster)
        + "  (if gcluster deploy made the cluster as deployment "
        + f"{plan.cluster}; run it where you deployed)",
        shell("gcloud", "container", "clusters", "list") + f" {region_or_zone}",
    ]


def notes(plan: HandoverPlan) -> list[str]:
    deadline = (
        f"Your --max-run of {plan.max_run_minutes:g} minutes is NOT enforced: gcluster job "
        "submit has no deadline flag (its --timeout only bounds how long it waits). Cancel the "
        "job yourself, or use --to jobset, which sets activeDeadlineSeconds."
        if plan.max_run_minutes is not None
        else "No deadline: the job runs until it ends or you cancel it."
    )
    queue = (
        f"Kueue: the LocalQueue {plan.queue} (--queue)."
        if plan.queue is not None
        else f"Kueue: without --queue, gcluster takes the cluster's only LocalQueue, or offers to "
        f"make {DEFAULT_QUEUE} where there is none."
    )
    return [
        f"This export wrote four files into {plan.folder}/: {commands_file(plan)} (these "
        f"commands), {manifest_file(plan)} (the JobSet they stand for), {VERIFIER_FILENAME} "
        f"(the verifier) and {JOB_FILENAME} (the job every VM runs).",
        f"Flags as {CTK_SOURCE} defines them; never run against a cluster here. gcluster's job "
        "commands are marked experimental (alpha) by Cluster Toolkit itself.",
        f"Run these from the folder that holds {plan.script or 'your code'} and {plan.folder}/: "
        f"--base-image {DEFAULT_IMAGE} --build-context . builds an image of it with Crane, "
        "which needs GCLUSTER_IMAGE_REPO set to an Artifact Registry repository of the project "
        "(export GCLUSTER_IMAGE_REPO=my-repo).",
        f"Compute type {machine_type(plan)} (the VM's machine type) with --topology "
        f"{plan.gke.topology}: gcluster reads a shorthand's number as chips.",
        deadline,
        f"A failed run is restarted whole up to {plan.max_restarts} time(s) (--restarts); the "
        f"finished JobSet and its logs are kept {TTL} (--gke-ttl-after-finished).",
        queue,
        "The route's capacity, a reservation and TPU7x's workload policy are node labels "
        "(--node-constraint): the cluster's node pools must carry them; gcluster job submit "
        "makes no node pool.",
        *node_pool_notes(plan),
    ]


def render(plan: HandoverPlan) -> str:
    check(plan)
    head = header(
        f"Cluster Toolkit (gcluster {CTK_VERSION}) job for {plan.slice.name}: run each line "
        "yourself, in order.",
        plan,
        cluster_bills(plan),
        teardown(plan),
    )
    body = [
        "# 1. A GKE cluster with TPU node pools of this machine type and topology (they bill",
        "#    from then on): gcluster deploy with Cluster Toolkit's TPU blueprints",
        "#    (examples/gke-tpu-v6e, examples/gke-tpu-7x), or one you have.",
        "",
        f"# 2. Write gcluster's own JobSet to {dry_run_file(plan)}, to read beside",
        f"#    {manifest_file(plan)}; nothing is applied.",
        submit(plan, dry_run=True),
        "",
        "# 3. Submit it: bootstrap, verifier (its receipt line is in each VM's log), your script.",
        submit(plan, dry_run=False),
        "",
    ]
    return comment([*head, "", *notes(plan)]) + "\n" + "\n".join(body)
