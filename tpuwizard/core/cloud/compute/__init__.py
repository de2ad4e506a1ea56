"""Compute Engine: ComputeCloud (client.py) and its parts: the create bodies of a VM and of a
slice, a slice's creates, reads and waits, Route 2B's resize request, the REST reads and their
typed views, the aggregated survey, errors, and what an instance's status means for billing."""
