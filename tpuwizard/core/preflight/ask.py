"""What the preflight is asked about, and what it reads with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tpuwizard.core.cloud.backends import Backend, Transport
from tpuwizard.core.plan import catalog
from tpuwizard.core.preflight.rest import Endpoints, Rest
from tpuwizard.core.routes import Route


@dataclass(frozen=True)
class PreflightAsk:
    """One launch before its create: ``backend`` is decided (tpu-api or compute). Without an
    accelerator and zone (the wizard's Account step) only the project's checks apply."""

    project: str
    accelerator: str | None
    zone: str | None
    route: Route  # vm, spot or flex
    backend: Backend
    internal_ips: bool = False
    transport: Transport = Transport.SSH  # tpuwizard's key in the VM's metadata, or gcloud's SSH
    # Requests sent together in the zone's region (--fan-out): each takes its own quota.
    at_once: int = 1
    # False where the workers are reached without a login (practice without an OpenSSH server:
    # a local shell), so no key is imported for them whatever OS Login says.
    ssh_login: bool = True

    @property
    def region(self) -> str:
        assert self.zone is not None, "only the checks of a launch read the region"
        return region_of(self.zone)

    @cached_property
    def known_slice(self) -> catalog.Slice | None:
        """The type asked about, parsed once (the session makes an ask from a front end's
        answers: an edge); None without one, or for a name that is no TPU type."""
        try:
            return catalog.parse_accelerator(self.accelerator) if self.accelerator else None
        except catalog.UnknownAcceleratorError:
            return None

    @property
    def slice(self) -> catalog.Slice:
        assert self.accelerator is not None, "only the checks of a launch read the slice"
        if self.known_slice is None:
            return catalog.parse_accelerator(self.accelerator)  # raises, saying why
        return self.known_slice

    @property
    def for_launch(self) -> bool:
        return self.accelerator is not None and self.zone is not None


def region_of(zone: str) -> str:
    """us-central1-a -> us-central1; an AI zone too (us-central1-ai1a -> us-central1)."""
    return zone.rsplit("-", 1)[0]


@dataclass(frozen=True)
class Reach:
    """How the checks read: ``rest`` over the caller's credentials (None: there are none, and
    the checks that need them say so), the APIs' addresses, and the zone's accelerator types for
    the asked backend (the backend's own client's list)."""

    rest: Rest | None
    endpoints: Endpoints
    offered: Callable[[], list[str]]
    practice: bool = False
    # Where the quota check keeps what it read (quota_cache.py); None: it keeps nothing.
    quota_cache: Path | None = None
