"""The two ways Google serves TPUs, by the names the CLI, the ledger and the screens use.

``tpu-api``: the Cloud TPU API (nodes, queued resources; in maintenance, bug and security fixes
only). ``compute``: Compute Engine instances (and MIGs), where TPU7x and new work go
(compute-engine.md, "Why it matters"). No imports: the kept-node lines read it at start-up.
"""

from __future__ import annotations

TPU_API = "tpu-api"
COMPUTE = "compute"
BACKENDS = (TPU_API, COMPUTE)
# What a user may ask for: one of the two, or "auto" (the support matrix decides).
AUTO = "auto"
CHOICES = (AUTO, *BACKENDS)
# How a Flex-start VM on Compute Engine is asked for (launch --via): "auto", tpuwizard's own
# default (one instance for a single-host type, bulk mode for a multi-host slice), or the course's
# Route 2B, "resize-request" (a template, a MIG of size 0 and a resize request for one VM).
VIA_AUTO = "auto"
VIA_RESIZE_REQUEST = "resize-request"
VIAS = (VIA_AUTO, VIA_RESIZE_REQUEST)
