"""What a GKE cluster that runs Kueue needs before it admits and keeps a hand-over's JobSet
(issue 47, item 4): the Kueue queue label, a priority class, a reservation, and an annotation
that stops the cluster autoscaler from taking a quiet node away.

google/tunix PR 2342 (2026-09-21) lists what kept its generated JobSets from running on a shared
Kueue cluster: no ``kueue.x-k8s.io/queue-name`` label (never admitted), priority 0 (never
reached on a busy ClusterQueue), no reservation (NAP will not make a large slice without one),
and a Pod the autoscaler evicted silently while it waited on one long call.
vllm-project/ci-infra PR 464 (2026-08-11): Kueue registers its JobSet integration only if the
JobSet CRDs exist when its controller starts.

The values are checked here, once, at the edge: each is a name Kubernetes, Kueue or Compute
Engine would refuse otherwise, so a typo fails here with exit 2 rather than on the cluster.
"""

from __future__ import annotations

import re

from tpuwizard.core.errors import BadInput, shown
from tpuwizard.core.routes import Route

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
RESERVATION_NAME = "cloud.google.com/reservation-name"
RESERVATION_AFFINITY = "cloud.google.com/reservation-affinity"

KUEUE_JOBSET_SOURCE = (
    "Kueue's 'Run A JobSet' page (kueue.sigs.k8s.io/docs/tasks/run/jobsets: the queue in "
    "metadata.labels, the first priorityClassName of the replicated jobs as the priority), read "
    "from kubernetes-sigs/kueue at ff69552e79, 2026-08-22"
)
RESERVATION_SOURCE = (
    "GKE's 'Consuming reserved zonal resources' (kubernetes-engine/docs/how-to/"
    "consuming-reservations: the reservation-name and reservation-affinity node selectors) and "
    "xpk 1.16.0's xpk/core/capacity.py; Compute Engine's 'Consume reservations': Spot VMs "
    "cannot consume a reservation"
)
# The PriorityClasses xpk cluster create installs (xpk/templates/kueue_config.yaml.j2), and the
# only values xpk workload create's --priority takes (xpk/parser/workload.py, xpk 1.16.0).
XPK_PRIORITIES = ("very-low", "low", "medium", "high", "very-high")

# A label value (at most 63 characters) that Kueue also reads as an object name: its webhook
# checks the queue-name label as a DNS-1123 subdomain (pkg/controller/jobframework/validation.go,
# ValidateQueueName). Both at once: lower-case letters, digits, '-' and '.', alphanumeric ends.
_QUEUE = re.compile(r"[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?", re.ASCII)
# A PriorityClass is named by a DNS-1123 subdomain: dot-separated labels, at most 253 characters.
_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*", re.ASCII)
_SUBDOMAIN_MAX = 253
# A Compute Engine resource name (RFC 1035): a lower-case letter first, at most 63 characters.
_GCE_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?", re.ASCII)


def check_queue(value: str) -> str:
    """``--queue``: the name of a Kueue LocalQueue in the JobSet's namespace."""
    if not _QUEUE.fullmatch(value):
        raise BadInput(
            f"--queue {shown(value)} is not a Kueue queue name: Kueue reads the "
            f"{QUEUE_LABEL} label as a label value that is also an object name, so lower-case "
            "letters, digits, '-' and '.', starting and ending with a letter or digit, at most "
            "63 characters. Give your LocalQueue's name (kubectl get localqueues), e.g. "
            "team-a-queue."
        )
    return value


def check_priority(value: str) -> str:
    """``--priority``: the name of a Kubernetes PriorityClass."""
    if len(value) > _SUBDOMAIN_MAX or not _SUBDOMAIN.fullmatch(value):
        raise BadInput(
            f"--priority {shown(value)} is not a priority class name: Kubernetes names a "
            "PriorityClass with lower-case letters, digits, '-' and '.', each dot-separated part "
            "starting and ending with a letter or digit, at most 253 characters. Give one that "
            "exists on the cluster (kubectl get priorityclass), e.g. high."
        )
    return value


def check_reservation(value: str) -> str:
    """``--reservation``: the name of a Compute Engine reservation in the plan's project."""
    if not _GCE_NAME.fullmatch(value):
        raise BadInput(
            f"--reservation {shown(value)} is not a reservation name: Compute Engine names one "
            "with a lower-case letter first, then lower-case letters, digits and '-', not ending "
            "with '-', at most 63 characters (gcloud compute reservations list). A reservation "
            "of another project is not supported by export."
        )
    return value


def check_route(reservation: str | None, route: str) -> None:
    """A reservation is consumed by on-demand capacity only."""
    if reservation is not None and route != Route.VM:
        words = {
            "spot": "Spot VMs cannot consume a reservation",
            "flex": "Flex-start is a capacity of its own, made without reservation affinity "
            "(xpk/core/capacity.py)",
        }
        raise BadInput(
            f"--reservation with --route {route}: {words[route]}. Use --route vm with "
            "--reservation, or drop --reservation."
        )


def reservation_selector(reservation: str | None) -> dict[str, str]:
    """The Pod's node selector that makes GKE place it on (and, where it autoscales, make) nodes
    from the named reservation only."""
    if reservation is None:
        return {}
    return {RESERVATION_NAME: reservation, RESERVATION_AFFINITY: "specific"}


def install_order() -> list[str]:
    """The header's lines on what the cluster must run, and in which order, for Kueue to manage
    a JobSet at all."""
    return [
        "Where Kueue runs, install JobSet (its CRDs) BEFORE Kueue, or restart Kueue's controller "
        "after installing JobSet: Kueue registers its JobSet integration only if the JobSet CRDs "
        "exist when it starts (vllm-project/ci-infra PR 464; Kueue's JobSet page says the restart "
        "was needed before Kueue v0.8.1), and jobset.x-k8s.io/jobset must be in Kueue's "
        "integrations.frameworks. xpk cluster create installs JobSet and Kueue itself.",
    ]


def admission_notes(queue: str | None, priority: str | None, reservation: str | None) -> list[str]:
    """What the JobSet asks of Kueue and GKE, and what each missing value means there."""
    lines: list[str] = []
    if queue is None:
        lines.append(
            f"No --queue: the JobSet has no {QUEUE_LABEL} label. Kueue leaves it alone, unless "
            "its configuration sets manageJobsWithoutQueueName: true, when it is suspended and "
            "never starts. On a cluster with Kueue, give --queue LOCALQUEUE "
            "(kubectl get localqueues)."
        )
    else:
        lines.append(
            f"Queue: label {QUEUE_LABEL}: {queue}; that LocalQueue must exist in the namespace "
            "you apply to (kubectl get localqueues)."
        )
    if priority is None:
        lines.append(
            "No --priority: each Pod gets the cluster's default priority (0 where none is set); "
            "on a busy Kueue ClusterQueue such a workload can wait behind every one with a "
            "priority (google/tunix PR 2342), and the scheduler may preempt its Pods for any of a "
            "higher priority."
        )
    else:
        lines.append(
            f"Priority: each Pod's priorityClassName is {priority}, which Kueue takes as the "
            "workload's priority; that PriorityClass must exist (kubectl get priorityclass), or "
            "no Pod is created. xpk's clusters have " + ", ".join(XPK_PRIORITIES) + "."
        )
    if reservation is not None:
        lines.append(
            f"Reservation: the Pods select nodes of reservation {reservation} "
            f"({RESERVATION_NAME}, {RESERVATION_AFFINITY}: specific). A reservation bills for "
            "what it holds whether or not a job uses it, until it ends or you delete it; that is "
            "not counted above."
        )
    lines.append(
        f'Each Pod carries {SAFE_TO_EVICT}: "false": the cluster autoscaler does not take its '
        "node away while it waits quietly (a Pod evicted that way disappears without an error; "
        "google/tunix PR 2342)."
    )
    return lines
