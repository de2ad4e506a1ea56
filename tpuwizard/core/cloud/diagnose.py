"""Turning any failure into a plain-language Diagnosis with next steps. No traceback reaches users.

The checks catch google.api_core's parent classes (``Forbidden``, ``TooManyRequests``...) so REST
and gRPC behave alike: gRPC raises subclasses such as ``PermissionDenied`` and
``ResourceExhausted``, and a create operation that ends with code 8 raises ``ResourceExhausted``
on either transport.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tpuwizard.core.plan import catalog


@dataclass(frozen=True)
class Diagnosis:
    kind: str  # "stockout", "quota", "permission", "api_disabled", ...
    title: str
    explanation: str
    next_steps: list[str] = field(default_factory=list)
    alternatives: list[str] = field(default_factory=list)  # zones to try, for a stockout

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "title": self.title,
            "explanation": self.explanation,
            "next_steps": self.next_steps,
            "alternatives": self.alternatives,
        }

    def render(self) -> str:
        lines = [self.title, self.explanation]
        lines += [f"  - {step}" for step in self.next_steps]
        return "\n".join(lines)


@dataclass(frozen=True)
class Context:
    """What the failing call was about, so the diagnosis can be specific."""

    project: str | None = None
    zone: str | None = None
    accelerator: str | None = None
    account: str | None = None
    name: str | None = None


def _reason(err: BaseException) -> str:
    return str(getattr(err, "reason", None) or "")


def _message(err: BaseException) -> str:
    return str(getattr(err, "message", None) or err)


def other_zones(ctx: Context) -> list[str]:
    if not ctx.accelerator:
        return []
    try:
        zones = catalog.zones_offering(ctx.accelerator)
    except catalog.UnknownAcceleratorError:
        return []
    return [z for z in zones if z != ctx.zone]


def diagnose(err: BaseException, ctx: Context | None = None) -> Diagnosis:
    """The plain-language meaning of ``err`` and what to do about it."""
    from google.api_core import exceptions as gx
    from google.auth import exceptions as auth_exc

    from tpuwizard.core.errors import (
        CreateFailed,
        RemoteError,
        SliceIncomplete,
        VersionMismatch,
        WaitTimedOut,
    )

    ctx = ctx or Context()
    if isinstance(err, CreateFailed):
        err = err.error
    if isinstance(err, gx.RetryError) and err.cause is not None:
        err = err.cause  # retries ran out: what matters is what kept failing
    project = ctx.project or "PROJECT_ID"
    where = f" in {ctx.zone}" if ctx.zone else ""
    message = _message(err)
    account = ctx.account or "you@example.com"

    if "PREEMPTED" in message:
        return preempted_diagnosis()
    if (
        isinstance(err, gx.TooManyRequests)
        and (
            getattr(err, "code", None) == 8
            or "capacity" in message.lower()
            or "stockout" in message.lower()
        )
        and "quota" not in message.lower()
    ):
        zones = other_zones(ctx)
        steps = []
        if zones:
            steps.append(
                f"Try another zone that offers {ctx.accelerator}: {', '.join(zones)} "
                "(offered is not the same as free right now)."
            )
        steps.append(
            "Use Flex-start (--route flex): the request waits in a queue for capacity "
            "and runs for a bounded time."
        )
        steps.append("Or try spot capacity (--route spot), which is often easier to get.")
        return Diagnosis(
            "stockout",
            f"No TPU capacity{where} right now",
            f"Google has no free {ctx.accelerator or 'TPU'} capacity{where} at the "
            "moment (a zone stockout, error code 8). Nothing was created and "
            "nothing is billing.",
            steps,
            zones,
        )
    if isinstance(err, gx.TooManyRequests) and "quota" in message.lower():
        quota = re.search(r"[Qq]uota '([^']+)'", message)
        name = quota.group(1) if quota else "the TPU quota for this accelerator and zone"
        return Diagnosis(
            "quota",
            "Quota exceeded",
            f"The project {project} has no quota left for {name}{where}.",
            [
                f"Request more in the console: IAM & Admin → Quotas, filter on {name}.",
                "Or choose a zone or accelerator type with free quota, or a spot or "
                "Flex-start route, which use preemptible quota.",
            ],
        )
    if isinstance(err, gx.Forbidden) and (
        _reason(err) == "SERVICE_DISABLED"
        or "has not been used" in message
        or "is disabled" in message
    ):
        return Diagnosis(
            "api_disabled",
            "The Cloud TPU API is not enabled",
            f"The project {project} has not enabled tpu.googleapis.com.",
            [
                f"gcloud services enable tpu.googleapis.com --project {project}",
                "Then wait a minute and try again.",
            ],
        )
    if isinstance(err, gx.Forbidden):
        return Diagnosis(
            "permission",
            "Permission denied",
            f"Your account may not manage TPUs in {project} ({message}).",
            [
                "Ask a project owner to grant you the TPU Admin role:",
                f"gcloud projects add-iam-policy-binding {project} "
                f"--member=user:{account} --role=roles/tpu.admin",
            ],
        )
    if isinstance(err, gx.Unauthorized) or (
        isinstance(err, auth_exc.GoogleAuthError) and not isinstance(err, auth_exc.TransportError)
    ):
        return Diagnosis(
            "unauthenticated",
            "Not signed in to Google Cloud",
            "No valid Application Default Credentials were found, or they expired.",
            [
                "gcloud auth application-default login",
                "Or practise without a cloud: tpuwizard --sandbox",
            ],
        )
    if isinstance(err, gx.Conflict):
        name = ctx.name or "that name"
        return Diagnosis(
            "already_exists",
            "The name is already taken",
            f"A TPU called {name} already exists{where}.",
            [
                "Choose another name (--name), or",
                f"delete the old one if it is yours: tpuwizard teardown {name}",
            ],
        )
    if isinstance(err, gx.NotFound):
        if "location" in message.lower() or "zone" in message.lower():
            return _invalid_zone(ctx, message)
        return Diagnosis(
            "not_found",
            "Not found",
            f"The TPU API does not know this resource ({message}).",
            ["Check the project id and zone: tpuwizard status lists what exists."],
        )
    if isinstance(err, gx.BadRequest):
        if "accelerator" in message.lower() or "zone" in message.lower():
            return _invalid_zone(ctx, message)
        return Diagnosis(
            "invalid",
            "The TPU API rejected the request",
            message,
            ["Check the values you gave; tpuwizard zones lists valid combinations."],
        )
    if isinstance(err, gx.DeadlineExceeded | WaitTimedOut | TimeoutError):
        return Diagnosis(
            "timeout",
            "It took too long",
            f"The operation did not finish in time ({message}).",
            [
                "Run tpuwizard status to see what exists now, then try again.",
                "Anything tpuwizard created is in its ledger and will be cleaned up.",
            ],
        )
    if isinstance(err, SliceIncomplete):
        missing = ", ".join(f"w{w}" for w in err.missing)
        waited = ", ".join(f"w{w}" for w in err.waited) or "no worker"
        return Diagnosis(
            "slice_incomplete",
            "Not every host started the program",
            f"{missing} never joined the slice; {waited} waited {err.timeout:.0f} s in "
            "jax.distributed.initialize() and gave up. Every VM of a multi-host slice must run "
            "the same program at the same time, or the others wait for ever.",
            [
                f"Read {missing}'s lines above for why its program stopped or never started.",
                "By hand: gcloud compute tpus tpu-vm ssh NAME --worker=all --command ... (never a "
                "single worker).",
                "If a worker's TPU is held by another process, stop that "
                "process or recreate the slice.",
            ],
        )
    if isinstance(err, VersionMismatch):
        return Diagnosis(
            "version_mismatch",
            "The workers run different JAX versions",
            message,
            [
                "Reinstall the same jax[tpu] on every worker (tpuwizard bootstraps all of them "
                "with one command), or recreate the slice."
            ],
        )
    if isinstance(err, RemoteError):
        return Diagnosis(
            "remote",
            "A command on the TPU VM failed",
            message,
            [
                "If SSH is refused, the project may enforce OS Login: use --transport gcloud.",
                "The lines above show the worker's own output.",
            ],
        )
    if isinstance(err, gx.ServiceUnavailable | gx.TooManyRequests):
        return Diagnosis(
            "unavailable",
            "The Cloud TPU API is busy or unavailable",
            f"It kept answering {type(err).__name__} after several retries ({message}).",
            [
                "Wait a few minutes and try again.",
                "Check https://status.cloud.google.com for an outage.",
            ],
        )
    if isinstance(
        err, gx.RetryError | auth_exc.TransportError | ConnectionError | OSError
    ) or _is_requests_connection_error(err):
        return Diagnosis(
            "unreachable",
            "Cannot reach the Cloud TPU API",
            f"The network call failed ({type(err).__name__}: {message}).",
            [
                "Check your internet connection, VPN or proxy settings.",
                "Then try again; nothing new was created.",
            ],
        )
    if isinstance(err, gx.GoogleAPICallError):
        return Diagnosis(
            "api_error",
            "The Cloud TPU API returned an error",
            f"{type(err).__name__}: {message}",
            ["Try again; if it persists, run tpuwizard status and check the Cloud Console."],
        )
    return Diagnosis(
        "unexpected",
        "Something unexpected went wrong",
        f"{type(err).__name__}: {message}",
        ["Run tpuwizard status to see what exists, and report this problem."],
    )


def preempted_diagnosis(route: str = "spot") -> Diagnosis:
    return Diagnosis(
        "preempted",
        "Google preempted the spot TPU",
        "Spot capacity can be taken back at any moment: the VM stopped and its work with it. "
        "tpuwizard deletes it now, since a preempted node still counts against your quota.",
        [
            f"Relaunch: run the same launch again (--route {route}); save checkpoints so a "
            "restart resumes.",
            "For a run that must not be interrupted use --route vm, or Flex-start (--route flex).",
        ],
    )


def _invalid_zone(ctx: Context, message: str) -> Diagnosis:
    zones = other_zones(Context(accelerator=ctx.accelerator)) if ctx.accelerator else []
    steps = [f"Zones documented to offer {ctx.accelerator}: {', '.join(zones)}."] if zones else []
    steps.append(
        "List what your project can use: tpuwizard zones --live"
        + (f" --accelerator {ctx.accelerator}" if ctx.accelerator else "")
    )
    return Diagnosis(
        "invalid_zone", "That zone does not offer this TPU", f"{message}", steps, zones
    )


def _is_requests_connection_error(err: BaseException) -> bool:
    try:
        import requests
    except ImportError:  # pragma: no cover - requests comes with google-auth
        return False
    return isinstance(err, requests.ConnectionError | requests.Timeout)
