"""The two ways Google serves TPUs, by the names the CLI, the ledger and the screens use, and
the two ways tpuwizard reaches the VMs it made.

``tpu-api``: the Cloud TPU API (nodes, queued resources; in maintenance, bug and security fixes
only). ``compute``: Compute Engine instances (and MIGs), where TPU7x and new work go
(compute-engine.md, "Why it matters"). Each is a ``StrEnum``, so the words on disk, in ``--json``
and in the ledger stay the strings they always were, while the code compares members. Only the
standard library's enum: the kept-node lines read it at start-up.
"""

from __future__ import annotations

from enum import StrEnum


class Backend(StrEnum):
    """Which API creates a TPU; ``AUTO`` is what a person may ask for: the pipeline decides."""

    AUTO = "auto"
    TPU_API = "tpu-api"
    COMPUTE = "compute"


class Via(StrEnum):
    """How a Flex-start VM on Compute Engine is asked for (launch --via): ``AUTO``, tpuwizard's own
    default (one instance for a single-host type, bulk mode for a multi-host slice), or the
    course's Route 2B, ``RESIZE_REQUEST`` (a template, a MIG of size 0, a resize request)."""

    AUTO = "auto"
    RESIZE_REQUEST = "resize-request"


class Transport(StrEnum):
    """How the workers are reached: tpuwizard's own SSH, or gcloud's (OS Login, IAP)."""

    SSH = "ssh"
    GCLOUD = "gcloud"


TPU_API = Backend.TPU_API
COMPUTE = Backend.COMPUTE
BACKENDS = (TPU_API, COMPUTE)
AUTO = Backend.AUTO
CHOICES = tuple(Backend)
VIA_AUTO = Via.AUTO
VIA_RESIZE_REQUEST = Via.RESIZE_REQUEST
VIAS = tuple(Via)
