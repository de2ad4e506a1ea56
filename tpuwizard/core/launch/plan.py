"""LaunchPlan: what one launch will do, and every rule it must satisfy before any cloud call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core.cloud import gcloud_config, google_errors
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog

ROUTES = ("vm", "spot", "flex")
EXIT_OK, EXIT_FAILED, EXIT_CLOUD, EXIT_TEARDOWN = 0, 1, 3, 4
DEFAULT_MAX_RUN = {"vm": 120, "spot": 120, "flex": 240}  # minutes


@dataclass(frozen=True)
class LaunchPlan:
    accelerator: str
    zone: str
    project: str
    run_id: str
    run_dir: Path
    route: str = "vm"
    name: str | None = None
    script: Path | None = None
    fetch: tuple[str, ...] = ()
    keep: bool = False
    max_run_minutes: float | None = None
    watchdog: bool = False
    failover: bool = False
    internal_ips: bool = False  # no external addresses: only the gcloud (IAP) transport reaches

    @property
    def node_name(self) -> str:
        return self.name or f"tpuwizard-{self.run_id}"

    def validate(self) -> catalog.Slice:
        """Everything that can be checked before any cloud call; raises :class:`BadInput`."""
        try:
            slice_ = catalog.parse_accelerator(self.accelerator)
        except catalog.UnknownAcceleratorError as err:
            raise BadInput(str(err)) from None
        refusal = google_errors.launchable(self.accelerator)
        if refusal:
            raise BadInput(refusal)
        gcloud_config.validate_zone(self.zone)
        gcloud_config.validate_project(self.project)
        gcloud_config.validate_node_name(self.node_name)
        if len(self.node_name) > 60 and self.route != "vm":
            raise BadInput(
                "Names for spot and flex routes must be at most 60 characters "
                "(the queued resource adds '-qr')."
            )
        if self.route not in ROUTES:
            raise BadInput(f"Unknown route '{self.route}'. Choose one of: {', '.join(ROUTES)}.")
        if self.max_run_minutes is not None and not 0.1 <= self.max_run_minutes <= 7 * 24 * 60:
            raise BadInput("--max-run must be between 0.1 minutes and 7 days (10080 minutes).")
        if self.watchdog and self.route == "flex":
            raise BadInput(
                "Flex-start already ends at its deadline (its maxRunDuration): "
                "--watchdog is for the vm and spot routes."
            )
        if self.script is not None and not self.script.is_file():
            raise BadInput(f"Script {self.script} does not exist or is not a file.")
        for pattern in self.fetch:
            if pattern.startswith("/") or ".." in pattern.split("/"):
                raise BadInput(
                    f"--fetch '{pattern}' must be relative to the script's folder "
                    "and may not contain '..'."
                )
        return slice_


def safe_script_name(name: str) -> str:
    if not name or name.startswith(".") or not all(c.isalnum() or c in "._-" for c in name):
        raise BadInput(f"Script name '{name}' must be letters, digits, '.', '_' and '-' only.")
    return name
