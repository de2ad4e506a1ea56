"""What every Google client tpuwizard builds shares: credentials for an endpoint, the retry of
idempotent reads and deletes, and quota refusals made final. Used by :mod:`client` (the TPU
API) and :mod:`compute` (Compute Engine), so that both treat Google's answers alike.

google.* is imported inside each function: the CLI must not import Google's clients until a
command needs the cloud.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tpuwizard.core.cloud.endpoint import GOOGLE_ENDPOINTS, TOKEN_ENV


def retry_reads(deadline: float = 60.0) -> Any:  # a google.api_core.retry.Retry
    from google.api_core import exceptions, retry

    # Only transient answers are retried; api_core's backoff adds jitter by itself.
    return retry.Retry(
        predicate=retry.if_exception_type(
            exceptions.TooManyRequests, exceptions.ServiceUnavailable
        ),
        initial=0.2,
        maximum=5.0,
        multiplier=2.0,
        timeout=deadline,
    )


class quota_is_final:
    """Over REST a quota refusal arrives as ``TooManyRequests``, which callers may treat as
    transient; raise it as ``ResourceExhausted`` (its gRPC class) so that nobody retries it."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, err: BaseException | None, tb: Any) -> None:
        from google.api_core import exceptions

        from tpuwizard.core.cloud.google_errors import quota_refusal

        quota = isinstance(err, exceptions.TooManyRequests) and quota_refusal(err) is not None
        if quota and not isinstance(err, exceptions.ResourceExhausted):
            assert isinstance(err, exceptions.TooManyRequests)
            raise exceptions.ResourceExhausted(
                err.message, errors=err.errors, details=err.details, response=err.response
            ) from err


def credentials_for(endpoint: str) -> Any:
    """Google's default credentials for Google's endpoints; for any other (the sandbox) the
    static token in ``TPUWIZARD_SANDBOX_TOKEN`` when set, else anonymous: Google's own
    credentials are never sent anywhere but Google."""
    if endpoint not in GOOGLE_ENDPOINTS:
        token = os.environ.get(TOKEN_ENV)
        if token:  # google-auth's static token credentials: sent as "Bearer <token>"
            from google.oauth2.credentials import Credentials

            return Credentials(token=token)
        from google.auth.credentials import AnonymousCredentials

        return AnonymousCredentials()
    import google.auth

    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    return credentials


def at_once(*reads: Callable[[], Any]) -> list[Any]:
    """Independent reads made together, answers in order: at 200 ms a request, a survey's
    reads one after another are what the user waits for. The first failure (in order) raises."""
    with ThreadPoolExecutor(max_workers=len(reads)) as pool:
        futures = [pool.submit(one) for one in reads]
    return [f.result() for f in futures]
