"""Fault injection for the sandbox, from a spec such as
``stockout=us-central1-a,us-west1-c;unavailable=2;delete_fail=1;slow_create=5``.

Keys:
  stockout=ZONE[,ZONE]  creates in these zones end with code 8 (no capacity); queued resources wait
  stockout_code=N       the stockout's code and text instead: 9 reserved capacity, 13 or 5 a
                        refused spot create (a spot queued resource then goes FAILED)
  unavailable=N         the next N requests answer 503
  delete_fail=N         the next N delete operations (a node's or a queued resource's) end with
                        an internal error, leaving it as it was
  lying_delete=N        the next N delete operations end "done" without an error, but the node (or
                        queued resource) is still there: listed, gettable and READY
  lost_create=N         the next N creates are carried out, but their answer is a 503
  reset_create=N        the next N creates are carried out, then the connection is reset before
                        any answer (a dropped network after the create landed: it may exist)
  slow_create=SECONDS   provisioning takes this long
  never_ready=1         nodes stay CREATING
  preempt_after=SECONDS spot nodes become PREEMPTED this long after READY (their VMs vanish)
  preempt_times=N       with preempt_after: only the first N spot nodes (or VMs) are preempted
  preempt_on=GLOB       a READY spot node of the TPU API is preempted once its worker 0 holds a
                        file matching GLOB (relative to the worker's home): a given moment of
                        the script, e.g. .tpuwizard/work/ckpt/*/COMMITTED (preempt_times applies)
  preempt_on_count=N    with preempt_on: once it holds N such files (default 1)
  worker_stall=N        worker N's script job (a launch's script, a kept node's run) is
                        suspended (SIGSTOP to its process group) as soon as it starts: a worker
                        that hangs, as a stuck import or a dead host does (issue 47); the others
                        wait for it in jax.distributed.initialize
  verify_stall=N        worker N's verifier job (a launch's verify-*, before the script) is
                        suspended as worker_stall's script job is: a worker that hangs before
                        the user's script starts (a stuck import of JAX, a dead host)
  maintenance_sigterm=S the script's job (a launch's script-*, a kept node's run-*) on every
                        worker of a TPU-API node or Compute Engine VM is sent SIGTERM S seconds
                        after it started, as Autocheckpoint warns of a maintenance event: the
                        signal goes to the job's wrapper, which passes it to the script. Once
                        per VM (a script run again there is left to finish); the VM stays
                        (what Google does next is not staged)
  held_chip=WHO         worker 0's chip is held by a process that stays (once per VM, started at
                        the next tick): WHO is other (a process tpuwizard did not start, as one
                        started by hand over SSH) or ours (an earlier run's job, left running
                        when its laptop lost the connection). A practice worker's chip is the
                        stand-in file dev/accel0 in its home (sandbox/workers/chip.py), listed
                        as a TPU VM's /dev/accel* and /dev/vfio/* are
  sa_no_delete=1        the VM's service account may not delete: testIamPermissions says so, and
                        the project's IAM policy gives the default compute account no role
                        (as in organisations created since May 2024, google-behaviour.md:67)
  policy_unreadable=1   getIamPolicy answers 403: the caller may not read the project's policy
  no_act_as=1           the caller lacks iam.serviceAccounts.actAs on every service account: the
                        actAs test says so, and a create that attaches an account answers 403
  latency_ms=N          every request waits this long first
  forbidden=N           the next N requests answer 403: permission denied
  api_disabled=N        the next N requests answer 403: the TPU API is not enabled
  quota=N               the next N creates answer 429: quota exceeded
  create_rate=N         the next N creates answer 429: too many CreateNode requests per minute
  unauthenticated=N     the next N requests answer 401
  read_error=N          the next N reads (GET requests) answer 500: an internal error, which the
                        client does not retry
  bootstrap_fail=N      the next N VMs to boot (a node's workers together, or a Compute Engine
                        instance) fail every bootstrap: their uv installs nothing, with uv's words
                        for a full boot disk (os error 28); SSH and the watchdog, which install
                        nothing, work. Whatever packages were asked for

What the preflight reads (docs/preflight-sandbox.md has every path and body). These change the
project, not the next N requests, and none of the counted keys above answer the preflight's APIs
(Service Usage, Cloud Billing, Cloud Quotas, OS Login, Org Policy), so a preflight before a launch
leaves the launch's faults to the launch; latency_ms delays them too. While api_disabled has
requests left, Service Usage says tpu.googleapis.com and compute.googleapis.com are DISABLED.
  quota_limit=QUOTA[@REGION]:N  the quota QUOTA (a Cloud Quotas quota id, e.g.
                        PREEMPTIBLE-TPU-V6E-per-project-region or
                        TPUV6EPreemptiblePerProjectPerRegionForTPUAPI) is N chips in REGION (every
                        region without @REGION); repeatable (;) or comma-separated. Cloud Quotas
                        answers it, and a create that would take more chips than are left is
                        refused with the quota error of its backend. Unset: generous limits
  no_billing=1          no billing account is linked: billingInfo says billingEnabled false
  oslogin=WORDS         OS Login, by comma-separated words: 1 (project metadata enable-oslogin
                        TRUE), 2fa (that, and enable-oslogin-2fa TRUE), policy (the org policy
                        compute.requireOsLogin is enforced). A VM under OS Login authorizes only
                        the keys imported into an OS Login profile, never ssh-keys metadata
  oslogin_denied=1      the caller lacks compute.instances.osLogin and osAdminLogin
                        (testIamPermissions leaves them out), and no VM accepts its OS Login keys
  iap_denied=1          the caller lacks the IAP-secured Tunnel User role: testIamPermissions
                        leaves out iap.tunnelInstances.accessViaIAP (and the dest groups' one)
  no_external_ip=1      the org policy compute.vmExternalIpAccess denies every external IP; a create
                        asking for one is refused (412 conditionNotMet on Compute Engine)
  orgpolicy_unreadable=1 getEffectivePolicy answers 403: the caller may not read org policies
  cloud_nat=REGIONS     Cloud NAT in these regions (1: every region): routers list a router with a
                        NAT there, and VMs without an external IP there reach package indexes
  no_quota_project=SERVICES these preflight APIs (1: all five) refuse a request without a quota
                        project (no x-goog-user-project header) with Google's 403 "... API
                        requires a quota project, which is not set by default"
  disabled_services=SERVICES these services are DISABLED (Service Usage says so) and their own
                        preflight paths answer 403 SERVICE_DISABLED, e.g. cloudquotas.googleapis.com

Compute Engine's TPU VMs (``/compute/v1``) answer the keys above in Compute Engine's shape:
stockout=ZONE ends an insert's operation with ZONE_RESOURCE_POOL_EXHAUSTED (a Flex-start insert
waits instead, until its requestValidForDuration), quota=N with QUOTA_EXCEEDED naming the metric
and region, preempt_after deletes (or stops) a RUNNING spot VM, delete_fail and lying_delete act on
instance deletes. And these are theirs:
  flex_pending=1        Flex-start inserts never get capacity: PENDING until their
                        requestValidForDuration passes (forever without one)
  slow_pending_delete=SECONDS deleting a PENDING instance takes this long
                        (compute-engine.md:64: 39 minutes once)
  staging_error=N       the next N inserts to reach the end of STAGING end with INTERNAL_ERROR
                        instead of RUNNING, the instance gone
  unreachable=ZONE[,ZONE] Compute Engine's aggregated lists cannot reach these zones: each says
                        so in its scope's warning (UNREACHABLE) and lists nothing of theirs
  ai_zones_visible=1    the project turned on AI zone visibility (a preview setting): the TPU
                        API's locations and Compute Engine's zones list the AI zones
                        (us-central1-ai1a, ...). Unset, they are hidden from both lists, as Google
                        hides them, yet a request naming one is served
  sku_missing=GEN:MODEL[@REGION] the Billing Catalog (billing_catalog.py) lists no SKU for GEN's
                        MODEL (on-demand, spot, flex) in REGION (every region without @REGION);
                        repeatable (;) or comma-separated, e.g. sku_missing=v6e:spot@us-east5
  flex_sku_reported=1   the Billing Catalog lists a Flex-start SKU as users report it, "DWS
                        Defined Duration V6e" at $1.35 per chip-hour in us-east5 (issue 33's
                        users' reading of the catalog; no Google page gives the figure, so it
                        is a fault key, never the default)
  billing_unauthenticated=1 the Billing Catalog answers 401 UNAUTHENTICATED (no credentials it
                        accepts); the Cloud Billing API off is
                        disabled_services=cloudbilling.googleapis.com
  no_tpu7x_access=1     the project has no TPU7x access (Google grants it through the account
                        team): a tpu7x instance insert answers 403. UNCONFIRMED:
                        Google's answer to such a project is on no page we have; 403 is the code
                        assumed, and the text is the sandbox's own (a zero quota is the other
                        possibility: quota_limit=TPUS-PER-TPU-FAMILY-per-project-region:0)
                        (compute-engine.md:63-64)
  vm_failure=N          the next N MIGs to reach ACTIVE lose their last VM to a host failure
                        (TERMINATED); under DO_NOTHING the MIG leaves it: ACTIVE_DEGRADED
  resize_request_refused=1 a MIG's resize requests are refused with the words users report for
                        TPU MIGs ("Creating resize requests for managed instance group with TPU
                        is not allowed", compute-engine.md); by default they are served, as
                        Google's about-resize-requests-mig page describes (mig_resize.py)

Known only to the in-memory cloud of the unit tests (tests/fakes.py), which reads the same spec:
  refused_create=N      the next N creates make no connection (refused, as when the network is
                        down): nothing is sent. A server cannot stage this for one request: a
                        refusal happens before any server sees the request.
  timeout_create=N      the next N creates are carried out and their answer never comes (a read
                        timeout): the sandbox would have to hold the client for its whole timeout.
  listed_after_delete=N the next N node deletes leave the node in its zone's list (DELETING) while
                        a get already answers NotFound, until it is deleted again. The sandbox's
                        node store (state.py) has no such half-deleted record yet; it refuses the
                        key rather than ignore it.
"""

from __future__ import annotations

import math
import socket
import struct
import threading
from dataclasses import dataclass, field

from tpuwizard.core.errors import BadInput
from tpuwizard.sandbox.workers.chip import HeldChip

COUNTED = (
    "unavailable",
    "delete_fail",
    "lying_delete",
    "lost_create",
    "reset_create",
    "forbidden",
    "api_disabled",
    "quota",
    "create_rate",
    "unauthenticated",
    "read_error",
    "bootstrap_fail",
    "staging_error",
    "vm_failure",
)
MEMORY_ONLY = ("listed_after_delete", "refused_create", "timeout_create")


class ConnectionDropped(Exception):
    """Raised after a create was carried out under ``reset_create``: the server resets the
    connection instead of answering."""


def reset_connection(connection: socket.socket) -> bool:
    """Close ``connection`` with a reset (RST), as a network that dropped after the request
    landed; True, for the handler's ``close_connection``."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return True


FLAGS = (
    "sa_no_delete",
    "policy_unreadable",
    "no_act_as",
    "flex_pending",
    "no_billing",
    "oslogin_denied",
    "iap_denied",
    "no_external_ip",
    "orgpolicy_unreadable",
    "resize_request_refused",
    "no_tpu7x_access",
    "ai_zones_visible",
    "billing_unauthenticated",
    "flex_sku_reported",
)
PREFLIGHT_KEYS = (
    "quota_limit",
    "oslogin",
    "cloud_nat",
    "disabled_services",
    "no_quota_project",
    "sku_missing",
)
OSLOGIN_WORDS = ("1", "true", "yes", "on", "2fa", "policy")
OFF = ("0", "false", "no", "off")
STOCKOUT_CODES = (8, 9, 13, 5)


@dataclass
class Faults:
    stockout: set[str] = field(default_factory=set)
    stockout_code: int = 8
    unreachable: set[str] = field(default_factory=set)  # zones aggregated lists cannot reach
    slow_create: float | None = None
    never_ready: bool = False
    sa_no_delete: bool = False  # the VM's service account may not delete (watchdog check)
    policy_unreadable: bool = False  # getIamPolicy answers 403
    no_act_as: bool = False  # the caller may not attach service accounts
    preempt_after: float | None = None  # spot nodes are preempted this long after READY
    preempt_times: int | None = None  # only this many preemptions in all (None: every node)
    preempt_on: str | None = None  # a glob in worker 0's home: preempted once it matches
    preempt_on_count: int = 1  # ... this many files
    worker_stall: int | None = None  # this worker's script job is suspended once it starts
    verify_stall: int | None = None  # this worker's verifier job is suspended once it starts
    maintenance_sigterm: float | None = None  # SIGTERM to script jobs this long after start
    held_chip: HeldChip | None = None  # worker 0's chip is held by such a process
    latency_ms: int = 0
    flex_pending: bool = False  # Compute Engine Flex-start inserts never get capacity
    slow_pending_delete: float | None = None  # deleting a PENDING instance takes this long
    # What the preflight reads (preflight_routes.py): (quota id, region or "" for every region)
    quota_limits: dict[tuple[str, str], int] = field(default_factory=dict)
    no_billing: bool = False
    oslogin: bool = False  # project metadata enable-oslogin TRUE
    oslogin_2fa: bool = False  # and enable-oslogin-2fa TRUE
    oslogin_policy: bool = False  # org policy compute.requireOsLogin enforced
    oslogin_denied: bool = False
    iap_denied: bool = False  # testIamPermissions leaves out IAP's tunnel permissions
    no_external_ip: bool = False
    orgpolicy_unreadable: bool = False
    resize_request_refused: bool = False  # MIG resize requests refused in users' reported words
    no_tpu7x_access: bool = False  # tpu7x inserts answer 403 (unconfirmed: faults' docstring)
    ai_zones_visible: bool = False  # the project turned on AI zone visibility: lists show them
    billing_unauthenticated: bool = False  # the Billing Catalog answers 401
    flex_sku_reported: bool = False  # the Billing Catalog lists users' reported Flex-start SKU
    missing_skus: set[tuple[str, str, str]] = field(default_factory=set)  # (gen, model, region)
    cloud_nat: set[str] = field(default_factory=set)  # regions; "*" every region
    disabled_services: set[str] = field(default_factory=set)
    needs_quota_project: set[str] = field(default_factory=set)  # services; "*" all preflight
    counters: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def left(self, name: str) -> bool:
        """Has the counted fault ``name`` requests left? (A look, not a use.)"""
        with self._lock:
            return self.counters.get(name, 0) > 0

    def take(self, name: str) -> bool:
        """Use up one of the counted faults ``name``; True when it fires now."""
        with self._lock:
            left = self.counters.get(name, 0)
            if left <= 0:
                return False
            self.counters[name] = left - 1
            return True


def parse_faults(spec: str | None, memory: bool = False) -> Faults:
    """The faults a spec names; ``memory``: for the in-memory test cloud, which also knows the
    keys in :data:`MEMORY_ONLY`."""
    faults = Faults()
    for part in (spec or "").split(";"):
        part = part.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not value:
            raise BadInput(f"Fault '{part}' needs a value, e.g. unavailable=2.")
        try:
            if key == "stockout":
                faults.stockout = {z.strip() for z in value.split(",") if z.strip()}
            elif key == "unreachable":
                faults.unreachable = {z.strip() for z in value.split(",") if z.strip()}
            elif key == "stockout_code":
                faults.stockout_code = int(value)
                if faults.stockout_code not in STOCKOUT_CODES:
                    raise BadInput(f"stockout_code must be one of {STOCKOUT_CODES}.")
            elif key == "slow_create":
                faults.slow_create = _amount(part, value)
            elif key == "never_ready":
                faults.never_ready = value not in ("0", "false", "no")
            elif key in FLAGS:
                setattr(faults, key, value not in ("0", "false", "no"))
            elif key in PREFLIGHT_KEYS:
                _preflight_fault(faults, key, value)
            elif key == "preempt_after":
                faults.preempt_after = _amount(part, value)
            elif key == "preempt_times":
                faults.preempt_times = int(_amount(part, value, int))
            elif key == "preempt_on":
                faults.preempt_on = _worker_glob(value)
            elif key == "worker_stall":
                faults.worker_stall = int(_amount(part, value, int))
            elif key == "verify_stall":
                faults.verify_stall = int(_amount(part, value, int))
            elif key == "preempt_on_count":
                faults.preempt_on_count = max(1, int(_amount(part, value, int)))
            elif key == "maintenance_sigterm":
                faults.maintenance_sigterm = _amount(part, value)
            elif key == "held_chip":
                faults.held_chip = _held_chip(value)
            elif key == "slow_pending_delete":
                faults.slow_pending_delete = _amount(part, value)
            elif key == "latency_ms":
                faults.latency_ms = int(_amount(part, value, int))
            elif key in COUNTED or (memory and key in MEMORY_ONLY):
                faults.counters[key] = int(_amount(part, value, int))
            elif key in MEMORY_ONLY:
                raise BadInput(
                    f"Fault '{key}' is known only to the unit tests' in-memory cloud, not to the "
                    "sandbox: leave it out of TPUWIZARD_SANDBOX_FAULTS."
                )
            else:
                known = ", ".join(
                    [
                        "stockout",
                        "stockout_code",
                        "unreachable",
                        "slow_create",
                        "never_ready",
                        "latency_ms",
                        "sa_no_delete",
                        "policy_unreadable",
                        "no_act_as",
                        "preempt_after",
                        "preempt_times",
                        "preempt_on",
                        "preempt_on_count",
                        "worker_stall",
                        "verify_stall",
                        "maintenance_sigterm",
                        "held_chip",
                        "flex_pending",
                        "slow_pending_delete",
                        *PREFLIGHT_KEYS,
                        *FLAGS[4:],
                        *COUNTED,
                    ]
                )
                raise BadInput(f"Unknown fault '{key}'. Known faults: {known}.")
        except BadInput:
            raise  # a BadInput is a ValueError too: its own message says what is wrong
        except ValueError:
            raise BadInput(f"Fault '{part}' has a value that is not a number.") from None
    return faults


def _amount(part: str, value: str, kind: type[float] | type[int] = float) -> float:
    """A finite number of zero or more: seconds, milliseconds or a count."""
    number = kind(value)
    if not math.isfinite(number) or number < 0:
        raise BadInput(f"Fault '{part}' needs a finite number of zero or more.")
    return number


def _held_chip(value: str) -> HeldChip:
    try:
        return HeldChip(value)
    except ValueError:
        raise BadInput(
            f"Fault 'held_chip={value}' needs ours or other: who holds worker 0's chip."
        ) from None


def _worker_glob(value: str) -> str:
    """A glob inside a worker's home: never absolute, never climbing out."""
    if value.startswith(("/", "~")) or ".." in value.split("/"):
        raise BadInput(
            f"Fault 'preempt_on={value}' needs a glob inside the worker's home, such as "
            "preempt_on=.tpuwizard/work/ckpt/*/COMMITTED."
        )
    return value


def _preflight_fault(faults: Faults, key: str, value: str) -> None:
    words = [w.strip() for w in value.split(",") if w.strip()]
    if key == "quota_limit":
        for word in words:
            quota, sep, amount = word.rpartition(":")
            quota_id, _, region = quota.partition("@")
            if not sep or not quota_id.strip():
                raise BadInput(
                    f"Fault 'quota_limit={value}' needs QUOTA[@REGION]:N, e.g. "
                    "quota_limit=PREEMPTIBLE-TPU-V6E-per-project-region:0."
                )
            limit = int(_amount(f"quota_limit={word}", amount.strip(), int))
            faults.quota_limits[(quota_id.strip(), region.strip())] = limit
    elif key == "sku_missing":
        for word in words:
            what, _, region = word.partition("@")
            gen, sep, model = what.partition(":")
            if not sep or model not in ("on-demand", "spot", "flex") or not gen:
                raise BadInput(
                    f"Fault 'sku_missing={value}' needs GEN:MODEL[@REGION] with MODEL one of "
                    "on-demand, spot, flex, e.g. sku_missing=v6e:spot@us-east5."
                )
            faults.missing_skus.add((gen, model, region))
    elif key == "oslogin":
        if all(w.lower() in OFF for w in words):
            return
        for word in (w.lower() for w in words):
            if word not in OSLOGIN_WORDS:
                raise BadInput(
                    f"Fault 'oslogin={value}': '{word}' is not one of 1, 2fa, policy "
                    "(comma-separated, e.g. oslogin=policy,2fa)."
                )
            faults.oslogin_policy |= word == "policy"
            faults.oslogin |= word != "policy"
            faults.oslogin_2fa |= word == "2fa"
    elif key == "cloud_nat":
        if words in (["1"], ["true"], ["yes"]):
            faults.cloud_nat = {"*"}
        elif not all(w.lower() in OFF for w in words):
            faults.cloud_nat = set(words)
    elif key == "disabled_services":
        faults.disabled_services = set(words)
    elif key == "no_quota_project":
        if words in (["1"], ["true"], ["yes"]):
            faults.needs_quota_project = {"*"}
        elif not all(w.lower() in OFF for w in words):
            faults.needs_quota_project = set(words)
