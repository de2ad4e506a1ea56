"""The API methods Google's own gcloud calls that tpuwizard does not, served as Google does.

``gcloud compute tpus`` (528) reads single accelerator types and runtime versions, lists
locations and accelerator types through the v1 API (``locations list`` and ``accelerator-types
list`` say ``api_version: v1``), reads guest attributes, and ``tpu-vm ssh`` fetches the project
from Compute Engine and adds its key to the node's metadata with ``nodes.patch``. Each shape is
the discovery document's (tpu.v1.json, tpu.v2.json, compute.v1.json). :class:`GcloudMethods` is
held by the server's ``Api`` as ``gcloud``: the routes name its methods as ``gcloud.NAME``.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from tpuwizard.sandbox import google, locations
from tpuwizard.sandbox.model import ApiError, now_iso, page
from tpuwizard.sandbox.state import SandboxState

_TPU = r"^/(?P<version>v2|v2alpha1)/projects/(?P<project>[^/]+)/locations/(?P<zone>[^/]+)"
_V1 = r"^/(?P<version>v1)/projects/(?P<project>[^/]+)/locations"
ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (method, re.compile(pattern), handler)
    for method, pattern, handler in [
        ("GET", _TPU + r"/acceleratorTypes/(?P<id>[^/:]+)$", "gcloud.get_accelerator_type"),
        ("GET", _TPU + r"/runtimeVersions/(?P<id>[^/:]+)$", "gcloud.get_runtime_version"),
        (
            "POST",
            _TPU + r"/nodes/(?P<id>[^/:]+):getGuestAttributes$",
            "gcloud.get_guest_attributes",
        ),
        ("PATCH", _TPU + r"/nodes/(?P<id>[^/:]+)$", "gcloud.patch_node"),
        # v1's Location is v2's; its AcceleratorType has only name and type.
        ("GET", _V1 + "$", "list_locations"),
        ("GET", _V1 + r"/(?P<zone>[^/]+)/acceleratorTypes$", "gcloud.list_accelerator_types_v1"),
    ]
]
# gcloud reads a worker's host key from the "hostkeys" namespace, keyed by its type, the value
# its base64 (ssh_utils.GetHostKeysFromGuestAttributes; tpu_vm/ssh.py takes the ssh-ed25519 one).
HOST_KEY_NAMESPACE = "hostkeys"
COMPUTE = "https://www.googleapis.com/compute/v1/"


class GcloudMethods:
    """One method per route above; each returns the JSON to answer with."""

    def __init__(self, state: SandboxState) -> None:
        self.s = state

    def get_accelerator_type(
        self, version: str, project: str, zone: str, id: str, query: dict, body: dict
    ) -> dict:
        locations.require_zone(project, zone)
        name = f"projects/{project}/locations/{zone}/acceleratorTypes/{id}"
        for entry in locations.accelerator_types(zone):
            if entry["type"] == id:
                return dict(entry, name=name)
        raise ApiError(404, "NOT_FOUND", f"Resource '{name}' was not found.")

    def get_runtime_version(
        self, version: str, project: str, zone: str, id: str, query: dict, body: dict
    ) -> dict:
        locations.require_zone(project, zone)
        name = f"projects/{project}/locations/{zone}/runtimeVersions/{id}"
        if id not in locations.runtime_versions(zone):
            raise ApiError(404, "NOT_FOUND", f"Resource '{name}' was not found.")
        return {"name": name, "version": id}

    def list_accelerator_types_v1(
        self, version: str, project: str, zone: str, query: dict, body: dict
    ) -> dict:
        locations.require_zone(project, zone)
        parent = f"projects/{project}/locations/{zone}"
        types = [
            {"name": f"{parent}/acceleratorTypes/{t['type']}", "type": t["type"]}
            for t in locations.accelerator_types(zone)
        ]
        return page(types, "acceleratorTypes", query)

    def get_guest_attributes(
        self, version: str, project: str, zone: str, id: str, query: dict, body: dict
    ) -> dict:
        """Each asked worker's attributes under ``queryPath`` ("", "NAMESPACE/" or
        "NAMESPACE/KEY"); ``workerIds`` empty (gcloud sends ``[""]``): every worker."""
        vms = len(self.s.nodes.get_node(project, zone, id)["networkEndpoints"])
        asked = [str(w) for w in body.get("workerIds", []) if str(w) != ""]
        if any(not w.isdigit() or int(w) >= vms for w in asked):
            raise ApiError(
                400,
                "INVALID_ARGUMENT",
                f"Invalid workerIds {asked}: node {id} has workers 0 to {vms - 1}.",
            )
        path = str(body.get("queryPath", ""))
        namespace, _, key = path.strip("/").partition("/")
        node = self.s.data["nodes"][f"projects/{project}/locations/{zone}/nodes/{id}"]
        published = self._host_keys() if node.get("_booted") else []
        items = [
            entry
            for entry in published
            if namespace in ("", entry["namespace"]) and key in ("", entry["key"])
        ]
        workers = asked or [str(w) for w in range(vms)]
        return {
            "guestAttributes": [{"queryPath": path, "queryValue": {"items": items}}] * len(workers)
        }

    def _host_keys(self) -> list[dict[str, str]]:
        """What the guest agent publishes of a booted VM's host keys: a paired sandbox's VMs are
        its sshd, so its keys are theirs, read as a client reads them; unpaired VMs run no sshd."""
        keyscan = shutil.which("ssh-keyscan")
        if self.s.vms.authorized_keys is None or keyscan is None:
            return []
        try:
            done = subprocess.run(
                [keyscan, "-T", "2", "-p", str(self.s.ssh_port), google.EXTERNAL_ADDRESS],
                capture_output=True,
                text=True,
                timeout=5,
            )
        except (OSError, subprocess.TimeoutExpired):
            return []
        entries = []
        for line in done.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and not line.startswith("#"):
                _host, kind, key = parts
                entries.append({"namespace": HOST_KEY_NAMESPACE, "key": kind, "value": key})
        return sorted(entries, key=lambda e: e["key"])

    def patch_node(
        self, version: str, project: str, zone: str, id: str, query: dict, body: dict
    ) -> dict:
        return self.s.nodes.update_node(
            project, zone, id, body, str(query.get("updateMask", "")), version
        )

    def get_compute_project(self, project: str, query: dict, body: dict) -> dict:
        """Compute Engine's projects.get, which ``tpu-vm ssh`` (and the preflight) reads for
        project-wide ssh keys and OS Login: no ssh keys, and ``enable-oslogin`` (and
        ``enable-oslogin-2fa``) TRUE only with the fault ``oslogin``."""
        number = google.project_number(project)
        items = []
        if self.s.faults.oslogin:
            items.append({"key": "enable-oslogin", "value": "TRUE"})
        if self.s.faults.oslogin_2fa:
            items.append({"key": "enable-oslogin-2fa", "value": "TRUE"})
        return {
            "kind": "compute#project",
            "id": number,
            "name": project,
            "creationTimestamp": now_iso(0),
            "selfLink": f"{COMPUTE}projects/{project}",
            "commonInstanceMetadata": {
                "kind": "compute#metadata",
                "fingerprint": "AAAAAAAAAAA=",
                "items": items,
            },
            "defaultServiceAccount": f"{number}{google.DEFAULT_ACCOUNT_DOMAIN}",
            "xpnProjectStatus": "UNSPECIFIED_XPN_PROJECT_STATUS",
            "defaultNetworkTier": "PREMIUM",
        }
