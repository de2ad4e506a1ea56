"""What a launch needs from the world: the cloud, the ledger, how to reach workers, timings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tpuwizard.core.cloud.oslogin import LoginChoice
from tpuwizard.core.cloud.protocol import Cloud
from tpuwizard.core.cloud.types import NodeInfo
from tpuwizard.core.deadlines import READY_TIMEOUT_S
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.launch.workers.held_chip import TPU_DEVICE_FILES
from tpuwizard.core.launch.workers.rerun import Reruns
from tpuwizard.core.launch.workers.watchdog import WatchdogConfig
from tpuwizard.core.remote.bootstrap import BootstrapPlan
from tpuwizard.core.remote.transports import Transport


@dataclass
class Runtime:
    """What a launch needs from the world: the cloud, the ledger, and how to reach workers."""

    cloud: Cloud  # the TPU API's TpuCloud, or a test's in-memory one
    ledger: Ledger
    make_transport: Callable[[NodeInfo], Transport]
    bootstrap: BootstrapPlan
    expect: str = "tpu"  # the sandbox runs on CPU devices and says so
    # The chip's device files, listed for their holders before a run on a kept node: a TPU VM's
    # /dev/accel* and /dev/vfio/*; a practice worker's stand-in (sandbox/workers/chip.py).
    chip_files: tuple[str, ...] = TPU_DEVICE_FILES
    practice: bool = False
    ssh_metadata: dict[str, str] = field(default_factory=dict)
    poll: float = 2.0
    watchdog: WatchdogConfig = field(default_factory=WatchdogConfig)
    # Multi-host: the sandbox names the coordinator; on Cloud TPU jax.distributed finds it.
    explicit_coordinator: bool = False
    join_timeout: int = 300
    ready_timeout: float = READY_TIMEOUT_S
    # The preflight read the quota for every request --fan-out sends at once (a finding of the
    # checks before create, CheckedPlan's): said with the requests, never assumed.
    fan_out_quota_checked: bool = False
    reachable_timeout: float = 300
    # Set by a front end that offers "Run again": the launch waits for its answer after the script.
    reruns: Reruns | None = None
    # The owner label every resource this install creates carries (paths.owner_label()).
    owner: str | None = None
    # OS Login: the fingerprint of the key imported for this launch, and what deletes it
    # (raises when that is refused; returns the name of another resource that still logs in with
    # the key, which then stays); called once nothing of the launch is left (Ending.finish).
    login_key: str | None = None
    forget_login_key: Callable[[], str | None] | None = None
    # How SSH logs in (chosen before the create): recorded with each create's intent, so that a
    # kept node's later commands log in the same way.
    login: LoginChoice | None = None
    # Practice only: the JAX its worker can run for the plan's --jax, and a line saying why it
    # is another (session/practice/worker_jax.py), given a callable for a line said on the way (an
    # environment built for it); None: the plan's, as on a real VM.
    worker_jax: (
        Callable[[str | None, Callable[[str], None]], tuple[str | None, str | None]] | None
    ) = None
