"""What the zone's TPU list shows after a teardown: the course's last step (``gcloud compute
tpus tpu-vm list --zone Z`` and seeing none), done for the user and said in words.

Every TPU there is listed, each with who made it: this install (tpuwizard), another tpuwizard
user, or not tpuwizard at all, such as one made by hand with the course's own commands. tpuwizard
never deletes one it did not make; seeing it here is how the user learns it still bills.
"""

from __future__ import annotations

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.protocol import Cloud
from tpuwizard.core.cloud.types import MANAGED_BY, OWNER_LABEL, NodeInfo
from tpuwizard.core.launch.events import launch_events as ev

YOURS, OTHER_USERS, NOT_OURS = "yours", "another tpuwizard user's", "not made by tpuwizard"


def made_by(node: NodeInfo, owner: str | None) -> str:
    """Who made ``node``, by its labels: :data:`YOURS`, :data:`OTHER_USERS` or :data:`NOT_OURS`."""
    if not all(node.labels.get(k) == v for k, v in MANAGED_BY.items()):
        return NOT_OURS
    return YOURS if owner is not None and node.labels.get(OWNER_LABEL) == owner else OTHER_USERS


def list_command(backend: str, zone: str) -> str:
    """The gcloud command that shows the same list."""
    if backend == Backend.COMPUTE:
        return f"gcloud compute instances list --zones {zone}"
    return f"gcloud compute tpus tpu-vm list --zone {zone}"


def zone_listed(cloud: Cloud, zone: str, owner: str | None, practice: bool) -> ev.ZoneListed:
    """List every TPU in ``zone`` of ``cloud``'s project now (one list call). On Compute Engine
    only the instances that are TPU VMs: an ordinary VM there is not the user's TPU."""
    nodes = [n for n in cloud.list_nodes(zone) if n.accelerator_type]
    tpus = tuple(
        ev.ListedTpu(n.name, n.accelerator_type, n.state, made_by(n, owner))
        for n in sorted(nodes, key=lambda n: n.name)
    )
    command = "" if practice else list_command(cloud.backend, zone)
    return ev.ZoneListed(zone, cloud.backend, command, tpus, practice)
