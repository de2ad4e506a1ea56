"""The Cloud TPU API: TpuCloud (client.py), its queued resources (queued.py), what a TPU state
means for billing (states.py)."""
