"""Launches, in rooms by what changes together (top to bottom; a room imports only rooms below):

- ``lifecycle``: one launch from plan to verified end, and its parts (provision, fan-out, the
  steps on the workers, the ending), sharing one state;
- ``kept``: a node kept by ``up``: what it was asked for, runs on it, its heartbeat book, its
  lock;
- ``teardown`` and ``workers``: verified deletes and the survey of what may bill; jobs on every
  worker, the script's pass (copy, run, fetch) a launch and a kept node share, multi-host
  joins, packages, reruns, the watchdog and its heartbeats;
- ``resume``: the spot run that resumes after preemption and the copying of its checkpoints
  (teardown and resume never import each other);
- ``plan`` and ``records``: the plan and every rule it must satisfy before any cloud call; the
  write-ahead ledger, ownership by labels, and what may bill;
- ``events``: the one vocabulary the TUI, plain mode and ``--json`` read, and its guide.

The import contracts in pyproject.toml hold these layers.
"""
