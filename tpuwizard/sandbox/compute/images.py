"""Public images, as Compute Engine's ``images.get`` and ``images.getFromFamily`` answer them.

gcloud resolves a boot image before it sends a create: ``instance-templates create`` and
``instances create`` read ``projects/P/global/images/family/F`` (compute.v1.json
images.getFromFamily: "Returns the latest image that is part of an image family and is not
deprecated"), with ``--image-family`` or, without it, gcloud's default, ``debian-12`` in
``debian-cloud`` (its ``DEFAULT_IMAGE_FAMILY``, which the course's Route 2B template leaves in
place). The families served: the TPU image reference/compute-engine.md names ("One VM", the boot
disk) and gcloud's default. Image names, ids and sizes are the sandbox's (a family's latest image
is named FAMILY-vDATE, as Google's public images are); no create reads them.
"""

from __future__ import annotations

from typing import Any

from tpuwizard.sandbox.compute import google as ce
from tpuwizard.sandbox.model import ApiError

# (project, family) -> (the latest image's date stamp, its description, its size in GB)
FAMILIES: dict[tuple[str, str], tuple[str, str, str]] = {
    ("ubuntu-os-accelerator-images", "ubuntu-accel-2204-amd64-tpu-v5e-v5p-v6e"): (
        "v20261101",
        "Canonical, Ubuntu, 22.04 LTS, accelerator image for TPU v5e, v5p and v6e",
        "10",
    ),
    ("debian-cloud", "debian-12"): ("v20261111", "Debian, Debian GNU/Linux, 12 (bookworm)", "10"),
}


def image_resource(project: str, family: str) -> dict[str, Any]:
    stamp, description, size = FAMILIES[(project, family)]
    name = f"{family}-{stamp}"
    return {
        "kind": "compute#image",
        "id": ce.stable_id(f"image/{project}/{name}"),
        "creationTimestamp": "2026-11-01T00:00:00.000-07:00",
        "name": name,
        "description": description,
        "family": family,
        "sourceType": "RAW",
        "status": "READY",
        "archiveSizeBytes": "1073741824",
        "diskSizeGb": size,
        "architecture": "X86_64",
        "labelFingerprint": "42WmSpB8rSM=",
        "storageLocations": ["us", "eu", "asia"],
        "selfLink": f"{ce.BASE}projects/{project}/global/images/{name}",
    }


def from_family(project: str, family: str) -> dict[str, Any]:
    if (project, family) not in FAMILIES:
        raise ApiError(
            404,
            "notFound",
            f"The resource 'projects/{project}/global/images/family/{family}' was not found",
        )
    return image_resource(project, family)


def by_name(project: str, name: str) -> dict[str, Any]:
    for (owner, family), (stamp, _, _) in FAMILIES.items():
        if owner == project and name == f"{family}-{stamp}":
            return image_resource(project, family)
    raise ApiError(
        404, "notFound", f"The resource 'projects/{project}/global/images/{name}' was not found"
    )
