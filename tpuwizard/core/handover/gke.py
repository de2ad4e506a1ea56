"""What GKE calls a TPU slice: its accelerator label, its topology, and the VMs xpk makes of it.

The labels and the topology rule are xpk 1.16.0's (``xpk/core/system_characteristics.py``): a
slice of more than one chip is made of 4-chip VMs, a 1-chip slice is one 1-chip VM; v5e and v6e
slices are 2-D (``4x4``), v4, v5p and TPU7x slices 3-D (``2x2x2``). GKE serves v4, v5e, v5p,
v6e and TPU7x; v2 and v3 only the Cloud TPU API.
"""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog

XPK_VERSION = "1.16.0"
XPK_SOURCE = f"xpk {XPK_VERSION} (PyPI), xpk/core/system_characteristics.py, read 2026-12-02"

# cloud.google.com/gke-tpu-accelerator, by the catalog's generation key (xpk 1.16.0).
GKE_ACCELERATORS = {
    "v4": "tpu-v4-podslice",
    "v5e": "tpu-v5-lite-podslice",
    "v5p": "tpu-v5p-slice",
    "v6e": "tpu-v6e-slice",
    "tpu7x": "tpu7x",
}
_TWO_D = ("v5e", "v6e")


@dataclass(frozen=True)
class GkeSlice:
    """One slice as GKE and xpk see it."""

    slice: catalog.Slice
    accelerator_label: str
    topology: str
    vms: int
    chips_per_vm: int

    @property
    def name(self) -> str:
        return self.slice.name


def topology(chips: int, two_d: bool) -> str:
    """The slice's chip grid: 2-D grids grow ``2x2``, ``2x4``, ``4x4``; 3-D ones ``2x2x1``,
    ``2x2x2``, ``2x2x4``, ``2x4x4``, ``4x4x4``: the rightmost smallest side doubles."""
    dims = [1, 1] if two_d else [1, 1, 1]
    if not two_d and chips >= 4:
        dims = [2, 2, 1]
    while dims[0] * dims[1] * (1 if two_d else dims[2]) < chips:
        smallest = min(dims)
        at = max(i for i, d in enumerate(dims) if d == smallest)
        dims[at] *= 2
    return "x".join(str(d) for d in dims)


def gke_slice(s: catalog.Slice) -> GkeSlice:
    """The slice ``s`` for GKE; one GKE does not serve raises :class:`BadInput`."""
    label = GKE_ACCELERATORS.get(s.generation.key)
    if label is None:
        served = ", ".join(sorted(GKE_ACCELERATORS))
        raise BadInput(
            f"{s.name} cannot go to GKE: GKE serves TPU {served} ({XPK_SOURCE}); "
            f"{s.generation.key} only through the Cloud TPU API. Choose a slice of those, "
            "e.g. v5litepod-16 or v6e-16."
        )
    per_vm = 1 if s.chips == 1 else 4
    return GkeSlice(
        slice=s,
        accelerator_label=label,
        topology=topology(s.chips, s.generation.key in _TWO_D),
        vms=max(1, s.chips // per_vm),
        chips_per_vm=per_vm,
    )
