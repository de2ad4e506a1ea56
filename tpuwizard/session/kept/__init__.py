"""Kept nodes through the session: finding them again (nodes.py), what ``status`` learns of them
from the cloud (check.py), every command's Kept lines from the ledger alone (lines.py), the
wizard's heartbeats to them (heartbeats.py), a run on one that survives preemption (resume.py)."""
