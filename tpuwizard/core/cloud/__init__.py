"""Clouds, in rooms: the ``Cloud`` protocol every launch, teardown and ``status`` talks to
(protocol.py), and its two implementations, each the only caller of its API:

- ``tpu``: TpuCloud over the Cloud TPU API (nodes, queued resources), what its states bill;
- ``compute``: ComputeCloud over Compute Engine (instances; for slices a workload policy, a
  template and a MIG), its REST reads, its aggregated survey, what its statuses bill;
- ``diagnose``: any failure turned into a plain-language Diagnosis with next steps.

Shared by both, here: the resource types, names, polling, Google's errors and calls, endpoints,
gcloud's configuration, zones and AI zones, IAM and OS Login, and which backend serves a launch.
"""
