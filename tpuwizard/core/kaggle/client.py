"""Kaggle's own client (kaggle 2.2.5 over kagglesdk), behind the few calls a run makes.

``kaggle`` is imported here only, when a Kaggle run starts: importing any part of it runs the
package's ``__init__``, which authenticates at once and, without credentials, prints its help on
stdout. That print is kept off stdout (it would corrupt ``--json``); credentials are checked
beforehand (credentials.py), so it is not the user's message.

Where the client talks is the client's own setting: ``KAGGLE_API_ENVIRONMENT`` (read when it is
imported) and the usual ``HTTP_PROXY``; this module never sets an endpoint of its own.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tpuwizard.core.kaggle.protocol import KaggleCallFailed, Pushed, Quota


def _quiet() -> contextlib.AbstractContextManager[object]:
    """kaggle prints notices (an outdated client, a readable key file) on stdout, where the
    command's own output (``--json``) goes: they are kept off it. Never around a ``yield``."""
    return contextlib.redirect_stdout(io.StringIO())


def _failed(what: str, err: Exception) -> KaggleCallFailed:
    response = getattr(err, "response", None)
    status = getattr(response, "status_code", None)
    detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    with contextlib.suppress(Exception):
        body = json.loads(response.text) if response is not None else {}
        detail = body.get("message") or detail
    return KaggleCallFailed(what, detail, status)


def tpu_quota_of(answer: Any) -> Quota | None:
    """The TPU part of kagglesdk's ``ApiGetAcceleratorQuotaStatisticsResponse`` (time
    reserved by running sessions counts as used), or None where Kaggle gave none."""
    tpu = answer.tpu_quota
    if tpu is None or tpu.total_time_allowed is None:
        return None
    used = (tpu.time_used.total_seconds() if tpu.time_used else 0.0) + (
        tpu.time_reserved.total_seconds() if tpu.time_reserved else 0.0
    )
    return Quota(used_s=used, allowed_s=tpu.total_time_allowed.total_seconds())


class KaggleApiKernels:
    """:class:`Kernels` through ``kaggle.api.kaggle_api_extended.KaggleApi``."""

    def __init__(self) -> None:
        try:
            with _quiet():
                from kaggle.api.kaggle_api_extended import KaggleApi

                api = KaggleApi()
                api.authenticate()
        except SystemExit:
            raise KaggleCallFailed("sign-in", "Kaggle did not accept the credentials") from None
        except Exception as err:
            raise _failed("sign-in", err) from None
        self._api: Any = api
        self.username: str = str(api.config_values.get("username") or "")
        if not self.username:
            raise KaggleCallFailed("sign-in", "Kaggle named no user for these credentials")

    def tpu_quota(self) -> Quota | None:
        try:
            with _quiet():
                answer = self._api.quota_view()
        except Exception as err:
            raise _failed("reading the weekly quota", err) from None
        return tpu_quota_of(answer)

    def push(self, folder: Path, timeout_s: int, shape: str) -> Pushed:
        try:
            with _quiet():
                answer = self._api.kernels_push(str(folder), timeout=str(timeout_s), acc=shape)
        except Exception as err:
            raise _failed("pushing the kernel", err) from None
        return Pushed(
            ref=answer.ref or "",
            url=answer.url or "",
            version=answer.version_number,
            error=answer.error or None,
        )

    def status(self, ref: str) -> tuple[str, str | None]:
        try:
            with _quiet():
                answer = self._api.kernels_status(ref)
        except Exception as err:
            raise _failed("reading the kernel's status", err) from None
        return answer.status.name, answer.failure_message or None

    def log_lines(self, ref: str) -> Iterator[str]:
        try:
            for event in self._api.kernels_logs_stream(ref):
                yield from str(event.get("data", "")).splitlines()
        except Exception as err:
            raise _failed("following the kernel's log", err) from None

    def download(self, ref: str, folder: Path) -> list[Path]:
        try:
            with _quiet():
                files, _ = self._api.kernels_output(ref, str(folder), force=True, quiet=True)
        except Exception as err:
            raise _failed("downloading the kernel's output", err) from None
        return [Path(f) for f in files]

    def docker_image(self, ref: str) -> str | None:
        from kagglesdk.kernels.types.kernels_api_service import ApiGetKernelRequest

        owner, slug = ref.split("/", 1)
        request = ApiGetKernelRequest()
        request.user_name, request.kernel_slug = owner, slug
        try:
            with _quiet(), self._api.build_kaggle_client() as kaggle:
                answer = kaggle.kernels.kernels_api_client.get_kernel(request)
        except Exception as err:
            raise _failed("reading the kernel's metadata", err) from None
        return (answer.metadata.docker_image if answer.metadata else None) or None

    def delete(self, ref: str) -> None:
        try:
            with _quiet():
                self._api.kernels_delete(ref, no_confirm=True)
        except Exception as err:
            raise _failed("deleting the kernel", err) from None
