"""The two backends a drill's commands make their resource on (the TPU API's node, Compute
Engine's instance), and how the sandbox's state file holds each: what the signal drill and the
crash tests read to judge what is left billing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tests.integration.launch_helpers import ZONE


@dataclass(frozen=True)
class DrillBackend:
    name: str
    accelerator: str
    zone: str  # one the sandbox's catalog offers the accelerator in on this backend
    creating: str  # the first state a create reports
    ready: str  # the state of a resource that is up (a kept one must stay in it)
    folder: str  # the sandbox's folder of worker homes, under TPUWIZARD_HOME/sandbox
    keep: tuple[str, ...]  # `up`'s bound on a kept resource (Compute Engine has no --idle)

    @property
    def flags(self) -> tuple[str, ...]:
        return ("--backend", self.name, "--zone", self.zone, "--accelerator", self.accelerator)


BACKENDS = {
    "tpu-api": DrillBackend(
        "tpu-api", "v5litepod-1", ZONE, "CREATING", "READY", "workers", ("--idle", "10")
    ),
    # v6e is served by both; Compute Engine's create reports PROVISIONING, then RUNNING.
    "compute": DrillBackend(
        "compute",
        "v6e-1",
        "us-east5-b",
        "PROVISIONING",
        "RUNNING",
        "instances",
        ("--max-run", "10"),
    ),
}


def _state(home: Path) -> dict:
    path = home / "sandbox" / "state.json"
    return json.loads(path.read_text()) if path.exists() else {}


def sandbox_names(home: Path) -> set[str]:
    """The nodes, queued resources and instances the sandbox holds now: what may bill."""
    state = _state(home)
    held = (*state.get("nodes", ()), *state.get("queued", ()), *state.get("instances", ()))
    return {key.rsplit("/", 1)[-1] for key in held}


def node_state(home: Path, name: str) -> str | None:
    """The sandbox's state of the node or instance ``name`` (None: it does not exist)."""
    state = _state(home)
    found = [n["state"] for k, n in state.get("nodes", {}).items() if k.endswith(f"/{name}")]
    found += [i["status"] for k, i in state.get("instances", {}).items() if k.endswith(f"/{name}")]
    return found[0] if found else None
