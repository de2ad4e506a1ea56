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
