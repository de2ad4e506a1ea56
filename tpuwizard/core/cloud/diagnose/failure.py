"""Turning any failure into a plain-language Diagnosis with next steps. No traceback reaches users.

The checks catch google.api_core's parent classes (``Forbidden``, ``TooManyRequests``...) so REST
and gRPC behave alike: gRPC raises subclasses such as ``PermissionDenied`` and
``ResourceExhausted``, and a create operation that ends with code 8 raises ``ResourceExhausted``
on either transport.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tpuwizard.core.choices import Choice, phrase
from tpuwizard.core.cloud import google_errors as ge
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.diagnose import tpu7x_access
from tpuwizard.core.cloud.diagnose.capacity import (
    invalid_zone_diagnosis,
    other_zones,
    preempted_diagnosis,
    queue_expired_diagnosis,
    queue_suspended_diagnosis,
    quota_diagnosis,
    stockout_diagnosis,
)
from tpuwizard.core.cloud.diagnose.compute import compute_diagnosis
from tpuwizard.core.cloud.diagnose.diagnosis import Context, Diagnosis
from tpuwizard.core.cloud.diagnose.remote import remote_diagnosis
from tpuwizard.core.routes import Route
from tpuwizard.core.untrusted import NotASmallFile

if TYPE_CHECKING:
    from tpuwizard.core.errors import LedgerUnwritable


def _configured_account() -> str | None:
    """The account gcloud is signed in as, so permission advice names it."""
    from tpuwizard.core.cloud import gcloud_config

    try:
        return gcloud_config.discover().account
    except Exception:
        return None


def _reason(err: BaseException) -> str:
    return str(getattr(err, "reason", None) or "")


# The REST transport puts the request before Google's words ("POST https://...: <message>"):
# the user needs the words, not our URL.
_REQUEST_PREFIX = re.compile(r"^(GET|POST|PUT|PATCH|DELETE) \S+: ")


def _message(err: BaseException) -> str:
    return _REQUEST_PREFIX.sub("", str(getattr(err, "message", None) or err))


def diagnose(err: BaseException, ctx: Context | None = None) -> Diagnosis:
    """The plain-language meaning of ``err`` and what to do about it: the first family of
    failure that knows it says it (their order matters: see _MATCHERS)."""
    ctx = ctx or Context()
    said = _as_raised(err, ctx)
    if said is not None:
        return said
    failure = _Failure.read(err, ctx)
    for matcher in _MATCHERS:
        said = matcher(failure)
        if said is not None:
            return said
    return Diagnosis(
        "unexpected",
        "Something unexpected went wrong",
        f"{type(failure.err).__name__}: {failure.message}",
        ["Run tpuwizard status to see what exists, and report this problem."],
    )


@dataclass(frozen=True)
class _Failure:
    """The error the matchers read (a failed create's own, or what kept failing through the
    retries) and what their words need."""

    err: BaseException
    ctx: Context
    spot: bool  # a spot create: Google's codes 13 and 5 mean "no capacity" only there
    message: str  # Google's words, without our request's URL

    @classmethod
    def read(cls, err: BaseException, ctx: Context) -> _Failure:
        from google.api_core import exceptions as gx

        from tpuwizard.core.errors import CreateFailed

        spot = ctx.route == Route.SPOT
        if isinstance(err, CreateFailed):
            spot = spot or err.route == Route.SPOT
            err = err.error
        if isinstance(err, gx.RetryError) and err.cause is not None:
            err = err.cause  # retries ran out: what matters is what kept failing
        return cls(err, ctx, spot, _message(err))

    @property
    def project(self) -> str:
        return self.ctx.project or "PROJECT_ID"

    @property
    def where(self) -> str:
        return f" in {self.ctx.zone}" if self.ctx.zone else ""

    @property
    def api(self) -> str:
        """The API, at a sentence's start: "The Cloud TPU API", "Compute Engine"."""
        named = api_name(self.ctx.backend)
        return named[:1].upper() + named[1:]

    def account(self) -> str | None:
        """Whom permission advice names: the context's account, else gcloud's."""
        return self.ctx.account or _configured_account()


def _as_raised(err: BaseException, ctx: Context) -> Diagnosis | None:
    """Errors read as raised, before a failed create is unwrapped: OS Login refused our key
    (nothing was made), or a queued request ended without its node (a failed create itself)."""
    from tpuwizard.core.cloud.oslogin import OsLoginError
    from tpuwizard.core.errors import QueueExpired, QueueSuspended

    if isinstance(err, OsLoginError):
        return Diagnosis(
            "os_login",
            "OS Login: tpuwizard's key could not be put in your profile",
            str(err),
            ["Nothing was created. `--transport gcloud` logs in through OS Login instead."],
        )
    # Capacity, preemption or a user, each by what Google's state says (google-behaviour.md,
    # queued resource failed), never "too long".
    if isinstance(err, QueueExpired):
        return queue_expired_diagnosis(err, ctx)
    if isinstance(err, QueueSuspended):
        return queue_suspended_diagnosis(err, ctx)
    return None


def _compute_refusal(f: _Failure) -> Diagnosis | None:
    """Compute Engine's own codes and words, read before the TPU API's."""
    return compute_diagnosis(f.err, f.ctx, f.spot)


def _capacity_or_quota(f: _Failure) -> Diagnosis | None:
    """No TPU free (a stockout, a preemption), too many requests a minute, or a quota."""
    from google.api_core import exceptions as gx

    if "PREEMPTED" in f.message:
        return preempted_diagnosis()
    capacity = ge.capacity_refusal(f.err, f.spot)
    if capacity is not None:
        return stockout_diagnosis(f.ctx, capacity, f.spot)
    if not isinstance(f.err, gx.TooManyRequests):
        return None
    if ge.rate_limited(f.err):
        return Diagnosis(
            "rate_limited",
            "Too many create requests",
            f"Google limits how many TPUs a project may ask for per minute ({f.message}).",
            ["Wait a minute and launch again; nothing was created."],
        )
    quota = ge.quota_refusal(f.err)
    return None if quota is None else quota_diagnosis(quota, f.ctx, f.project, f.where)


def _forbidden(f: _Failure) -> Diagnosis | None:
    """A 403, by what Google says it is about: a zone this project may not use, a service
    account it may not attach, the API not enabled, TPU7x access, else a missing role."""
    from google.api_core import exceptions as gx

    forbidden = isinstance(f.err, gx.Forbidden)
    if forbidden and ge.location_unavailable(f.err):
        return _zone_unavailable(f)
    if forbidden and ge.needs_act_as(f.err):
        account = f.account()
        member = f"user:{account}" if account else "user:YOUR_ACCOUNT"
        return Diagnosis(
            "permission",
            "You may not attach that service account",
            f"Creating a TPU that runs as a service account needs iam.serviceAccounts.actAs on "
            f"it ({f.message}).",
            [
                "Ask a project owner to grant you the Service Account User role:",
                f"gcloud projects add-iam-policy-binding {f.project} --member={member} "
                "--role=roles/iam.serviceAccountUser",
            ],
        )
    if forbidden and (
        _reason(f.err) == "SERVICE_DISABLED"
        or "has not been used" in f.message
        or "is disabled" in f.message
    ):
        return Diagnosis(
            "api_disabled",
            "The Cloud TPU API is not enabled",
            f"The project {f.project} has not enabled tpu.googleapis.com.",
            [
                f"gcloud services enable tpu.googleapis.com --project {f.project}",
                "Then wait a minute and try again.",
            ],
        )
    # A 403 on TPU7x: access, most likely (keyed on the code, whatever error carries it).
    access = tpu7x_access.access_diagnosis(f.err, f.ctx)
    if access is not None or not forbidden:
        return access
    return Diagnosis(
        "permission",
        "Permission denied",
        f"Your account may not manage TPUs in {f.project} ({f.message}).",
        [
            "Ask a project owner to grant you the TPU Admin role:",
            f"gcloud projects add-iam-policy-binding {f.project} "
            f"--member=user:{f.account() or 'YOUR_ACCOUNT'} --role=roles/tpu.admin",
        ],
    )


def _zone_unavailable(f: _Failure) -> Diagnosis:
    """403 "Location Z is not found or access is unauthorized.": not a missing role."""
    zone = f.ctx.zone or "this zone"
    return Diagnosis(
        "zone_unavailable",
        f"{zone} is not available to your project",
        f"Google says {f.message!r}: the project {f.project} may not use this zone (it is not "
        "enabled for it, or the zone is restricted). This is not a missing role.",
        [
            phrase("Choose another zone: {0}.", Choice("zone", f.ctx.accelerator or "")),
            "To use this zone anyway, ask Google Cloud support or your account team.",
        ],
        other_zones(f.ctx),
    )


def _not_signed_in(f: _Failure) -> Diagnosis | None:
    """No credentials, or expired ones (a network failure on the way to them is not this)."""
    from google.api_core import exceptions as gx
    from google.auth import exceptions as auth_exc

    if not isinstance(f.err, gx.Unauthorized) and (
        not isinstance(f.err, auth_exc.GoogleAuthError)
        or isinstance(f.err, auth_exc.TransportError)
    ):
        return None
    return Diagnosis(
        "unauthenticated",
        "Not signed in to Google Cloud",
        "No valid Application Default Credentials were found, or they expired.",
        [
            "gcloud auth application-default login",
            phrase("Or practise without a cloud: {0}", Choice("practice")),
            "Practising against `tpuwizard sandbox serve`? Export the "
            "TPUWIZARD_SANDBOX_TOKEN line it printed.",
        ],
    )


def _bad_request(f: _Failure) -> Diagnosis | None:
    """The request itself: a name taken, a resource or zone unknown, values refused."""
    from google.api_core import exceptions as gx

    if isinstance(f.err, gx.Conflict):
        name = f.ctx.name or "that name"
        return Diagnosis(
            "already_exists",
            "The name is already taken",
            f"A TPU called {name} already exists{f.where}.",
            [
                phrase("Choose another name: {0}; or", Choice("name")),
                f"delete the old one if it is yours: tpuwizard teardown {name}",
            ],
        )
    if isinstance(f.err, gx.NotFound):
        if "location" in f.message.lower() or "zone" in f.message.lower():
            return invalid_zone_diagnosis(f.ctx, f.message)
        return Diagnosis(
            "not_found",
            "Not found",
            f"{f.api} does not know this resource ({f.message}).",
            ["Check the project id and zone: tpuwizard status lists what exists."],
        )
    if isinstance(f.err, gx.BadRequest):
        if "accelerator" in f.message.lower() or "zone" in f.message.lower():
            return invalid_zone_diagnosis(f.ctx, f.message)
        return Diagnosis(
            "invalid",
            f"{f.api} rejected the request",
            f.message,
            ["Check the values you gave; tpuwizard zones lists valid combinations."],
        )
    return None


def _too_long_or_too_soon(f: _Failure) -> Diagnosis | None:
    """A wait that ran out, or a delete Google refuses right after the create."""
    from google.api_core import exceptions as gx

    from tpuwizard.core.errors import WaitTimedOut

    if isinstance(f.err, gx.DeadlineExceeded | WaitTimedOut | TimeoutError):
        return Diagnosis(
            "timeout",
            "It took too long",
            f"The operation did not finish in time ({f.message}).",
            [
                "Run tpuwizard status to see what exists now, then try again.",
                "Anything tpuwizard created is in its ledger and will be cleaned up.",
            ],
        )
    if ge.not_deletable_yet(f.err):
        return Diagnosis(
            "not_deletable",
            "Google does not let it be deleted yet",
            f"Right after a create Google refuses deletes for a while ({f.message}).",
            [f"Run tpuwizard teardown {f.ctx.name or 'NAME'} again in a few minutes."],
        )
    return None


def _on_the_workers(f: _Failure) -> Diagnosis | None:
    """What went wrong on the workers: SSH, the script, its packages, a slice (remote.py)."""
    return remote_diagnosis(f.err, f.message, f.ctx.slice)


def _busy(f: _Failure) -> Diagnosis | None:
    """The API kept answering "unavailable" or "too many requests" through every retry."""
    from google.api_core import exceptions as gx

    if not isinstance(f.err, gx.ServiceUnavailable | gx.TooManyRequests):
        return None
    return Diagnosis(
        "unavailable",
        f"{f.api} is busy or unavailable",
        f"It kept answering {type(f.err).__name__} after several retries ({f.message}).",
        [
            "Wait a few minutes and try again.",
            "Check https://status.cloud.google.com for an outage.",
        ],
    )


def _this_computer(f: _Failure) -> Diagnosis | None:
    """A file here that could not be written is never "the network" (so: before it)."""
    return local_disk_diagnosis(f.err)


def _unreachable(f: _Failure) -> Diagnosis | None:
    """The network call itself failed. Whether anything was made is the caller's to say (a
    create's outcome is its own event): the network failing says nothing about it."""
    from google.api_core import exceptions as gx
    from google.auth import exceptions as auth_exc

    if not isinstance(
        f.err, gx.RetryError | auth_exc.TransportError | ConnectionError | OSError
    ) and not _is_requests_connection_error(f.err):
        return None
    return Diagnosis(
        "unreachable",
        f"Cannot reach {api_name(f.ctx.backend)}",
        f"The network call failed ({type(f.err).__name__}: {f.message}).",
        [
            "Check your internet connection, VPN or proxy settings.",
            "Then try again: tpuwizard status shows what exists once the network is back.",
        ],
    )


def _other_api_error(f: _Failure) -> Diagnosis | None:
    """Any other answer of Google's API, said as it came."""
    from google.api_core import exceptions as gx

    if not isinstance(f.err, gx.GoogleAPICallError):
        return None
    return Diagnosis(
        "api_error",
        f"{f.api} returned an error",
        f"{type(f.err).__name__}: {f.message}",
        ["Try again; if it persists, run tpuwizard status and check the Cloud Console."],
    )


# The families of failure, tried in this order: the first that knows the error says it.
# Compute Engine's words before the TPU API's; capacity and quota before a 403's kinds (a
# REST 429 is a quota, a rate limit or a stockout); this computer's disk before the network.
_MATCHERS: tuple[Callable[[_Failure], Diagnosis | None], ...] = (
    _compute_refusal,
    _capacity_or_quota,
    _forbidden,
    _not_signed_in,
    _bad_request,
    _too_long_or_too_soon,
    _on_the_workers,
    _busy,
    _this_computer,
    _unreachable,
    _other_api_error,
)


def api_name(backend: str | None) -> str:
    """The API a resource is on, by its backend (None: the TPU API, the default one)."""
    return "Compute Engine" if backend == Backend.COMPUTE else "the Cloud TPU API"


def _is_requests_connection_error(err: BaseException) -> bool:
    try:
        import requests
    except ImportError:  # pragma: no cover - requests comes with google-auth
        return False
    return isinstance(err, requests.ConnectionError | requests.Timeout)


# errno values that only a local file system gives: a missing or wrong-type path, permissions,
# a full or read-only disk.
_DISK_ERRNOS = {
    errno.ENOENT,
    errno.EACCES,
    errno.EPERM,
    errno.ENOSPC,
    errno.EROFS,
    errno.ENOTDIR,
    errno.EISDIR,
    errno.EEXIST,
    errno.EDQUOT,
    errno.EFBIG,  # a file past the size this process may write (ulimit -f) or the disk takes
    errno.ENAMETOOLONG,
}


def local_disk_diagnosis(err: BaseException) -> Diagnosis | None:
    """An error from this computer's disk (a path that is a file, no permission, a full disk),
    said as such: never as a network failure."""
    from tpuwizard.core.errors import LedgerUnwritable

    if isinstance(err, NotASmallFile):  # a FIFO, a device, a folder or a huge file in its place
        return Diagnosis(
            "local_disk",
            "A file on this computer could not be read",
            f"{err.filename}: {err.why}.",
            [
                f"Move {err.filename} aside (tpuwizard reads only a regular file there), then "
                "run this again."
            ],
        )
    if not isinstance(err, OSError) or isinstance(err, ConnectionError | TimeoutError):
        return None
    if isinstance(err, LedgerUnwritable):
        return ledger_unwritable_diagnosis(err)
    if _is_requests_connection_error(err) or err.errno not in _DISK_ERRNOS:
        return None
    where = f" ({err.filename})" if err.filename else ""
    return Diagnosis(
        "local_disk",
        "A file on this computer could not be written or read",
        f"{err.strerror or err}{where}.",
        [
            phrase(
                "Check that the folder exists, is a folder, is writable and the disk has room "
                "(TPUWIZARD_HOME, or {0}).",
                Choice("run_dir"),
            )
        ],
    )


def ledger_unwritable_diagnosis(err: LedgerUnwritable) -> Diagnosis:
    """The record that comes before every create could not be written: nothing was created."""
    return Diagnosis(
        "ledger_unwritable",
        "Nothing was created: tpuwizard's ledger could not be written",
        f"The ledger {err.ledger} refused the record that comes before every create "
        f"({err.strerror}). What is created without it could be lost after a crash, with no "
        "record to find it by, so nothing was created.",
        [
            "Free some space on that disk, or make it writable (TPUWIZARD_HOME chooses where "
            "tpuwizard keeps its state), then run again."
        ],
    )
