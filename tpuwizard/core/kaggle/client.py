"""Kaggle's own client (kaggle 2.2.5 over kagglesdk), behind the few calls a run makes.

``kaggle`` is imported here only, when a Kaggle run starts: importing any part of it runs the
package's ``__init__``, which authenticates at once and, without credentials, prints its help on
stdout. That print is kept off stdout (it would corrupt ``--json``); credentials are checked
beforehand (credentials.py), so it is not the user's message.

Where the client talks is the client's own setting: ``KAGGLE_API_ENVIRONMENT`` (read when it is
imported) and the usual ``HTTP_PROXY``; this module never sets an endpoint of its own.

kaggle's requests carry no timeout: a Kaggle (or a proxy) that accepts the connection and never
answers would hold the run for ever. Each call is made in a thread of its own and waited for a
bounded time (:func:`bounded`); one not answered in time fails as a call with no answer.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from tpuwizard.core.kaggle.output import Listing
from tpuwizard.core.kaggle.protocol import Downloaded, KaggleCallFailed, Pushed, Quota

T = TypeVar("T")
CALL_TIMEOUT_S = 60.0  # the longest wait for one answer from Kaggle (the session may set it)
IMPORT_S = 30.0  # kaggle's import (which signs in) may take this long besides its call
DOWNLOAD_TIMES = 10  # a download (every output file) may take this many times as long
OUTPUT_PAGE_SIZE = 20  # kaggle's own page size for a kernel's output listing
STREAM_QUIET_TIMES = 5  # the log stream followed live while a line comes this often at least


def _quiet() -> contextlib.AbstractContextManager[object]:
    """kaggle prints notices (an outdated client, a readable key file) on stdout, where the
    command's own output (``--json``) goes: they are kept off it. Never around a ``yield``."""
    return contextlib.redirect_stdout(io.StringIO())


def bounded(what: str, timeout_s: float, call: Callable[[], T]) -> T:
    """``call``'s answer, waited for ``timeout_s`` at most in this thread (a stop signal still
    reaches it); not answered in time: :class:`KaggleCallFailed` with no status, and the call's
    thread is left to end with the process. Its own exceptions are raised here."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = call()
        except BaseException as err:  # SystemExit too: kaggle exits on refused credentials
            box["error"] = err
        finally:
            done.set()

    threading.Thread(target=work, name=f"kaggle call: {what}", daemon=True).start()
    if not done.wait(timeout_s):
        raise KaggleCallFailed(what, f"no answer within {timeout_s:g} s", None)
    if "error" in box:
        raise box["error"]
    return box["value"]


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


def tpu_quota_from_json(data: dict[str, Any]) -> Quota | None:
    """:func:`tpu_quota_of` an answer's JSON, parsed as kaggle's client parses the answer."""
    from kagglesdk.kernels.types.kernels_api_service import (
        ApiGetAcceleratorQuotaStatisticsResponse,
    )

    return tpu_quota_of(ApiGetAcceleratorQuotaStatisticsResponse.from_dict(data))


def list_output(api: Any, ref: str) -> Listing:
    """Every page of the kernel's output listing, as ``kernels_output`` reads it."""
    from kagglesdk.kernels.types.kernels_api_service import ApiListKernelSessionOutputRequest

    owner, slug = ref.split("/", 1)
    items: list[Any] = []
    log, token = "", None
    with api.build_kaggle_client() as kaggle:
        while True:
            request = ApiListKernelSessionOutputRequest()
            request.user_name, request.kernel_slug = owner, slug
            request.page_size = OUTPUT_PAGE_SIZE
            if token:
                request.page_token = token
            response = kaggle.kernels.kernels_api_client.list_kernel_session_output(request)
            items.extend(response.files or [])
            log = log or response.log or ""
            token = response.next_page_token
            if not token:
                return Listing(items, log)


class KaggleApiKernels:
    """:class:`Kernels` through ``kaggle.api.kaggle_api_extended.KaggleApi``, each call bounded
    by ``call_timeout_s``."""

    def __init__(self, call_timeout_s: float = CALL_TIMEOUT_S) -> None:
        self.timeout_s = call_timeout_s

        def sign_in() -> Any:
            # Importing kaggle signs in too (its __init__ asks Kaggle about the token), so the
            # import is inside the bound, given the seconds an import itself takes.
            from kaggle.api.kaggle_api_extended import KaggleApi

            api = KaggleApi()
            api.authenticate()
            return api

        try:
            with _quiet():
                api = bounded("sign-in", self.timeout_s + IMPORT_S, sign_in)
        except KaggleCallFailed:
            raise
        except SystemExit:
            raise KaggleCallFailed("sign-in", "Kaggle did not accept the credentials") from None
        except Exception as err:
            raise _failed("sign-in", err) from None
        self._api: Any = api
        self.username: str = str(api.config_values.get("username") or "")
        if not self.username:
            raise KaggleCallFailed("sign-in", "Kaggle named no user for these credentials")

    def _call(self, what: str, call: Callable[[], T], times: int = 1) -> T:
        """One call to Kaggle, bounded, its printed notices kept off stdout, its failure a
        :class:`KaggleCallFailed`."""
        try:
            with _quiet():
                return bounded(what, self.timeout_s * times, call)
        except KaggleCallFailed:
            raise
        except Exception as err:
            raise _failed(what, err) from None

    def tpu_quota(self) -> Quota | None:
        return tpu_quota_of(self._call("reading the weekly quota", self._api.quota_view))

    def push(self, folder: Path, timeout_s: int, shape: str) -> Pushed:
        answer = self._call(
            "pushing the kernel",
            lambda: self._api.kernels_push(str(folder), timeout=str(timeout_s), acc=shape),
        )
        return Pushed(
            ref=answer.ref or "",
            url=answer.url or "",
            version=answer.version_number,
            error=answer.error or None,
        )

    def status(self, ref: str) -> tuple[str, str | None]:
        answer = self._call("reading the kernel's status", lambda: self._api.kernels_status(ref))
        return answer.status.name, answer.failure_message or None

    def log_lines(self, ref: str) -> Iterator[str]:
        """The log's lines as they come. The stream is read in a thread of its own; when no
        line comes for a while (a quiet script, or a stream that never answers) following it
        live ends here, and the run follows the session's state (the whole log comes back
        with the output)."""
        lines: queue.Queue[tuple[str, object]] = queue.Queue()

        def pump() -> None:
            try:
                for event in self._api.kernels_logs_stream(ref):
                    for line in str(event.get("data", "")).splitlines():
                        lines.put(("line", line))
                lines.put(("end", None))
            except Exception as err:
                lines.put(("error", err))

        threading.Thread(target=pump, name="kaggle log stream", daemon=True).start()
        while True:
            try:
                kind, item = lines.get(timeout=self.timeout_s * STREAM_QUIET_TIMES)
            except queue.Empty:
                return
            if kind == "end":
                return
            if kind == "error":
                assert isinstance(item, Exception)
                raise _failed("following the kernel's log", item)
            yield str(item)

    def download(self, ref: str, folder: Path) -> Downloaded:
        """The listing (a failure here is the run's), then each file on its own: one that
        fails is named with why, and the others still come (core/kaggle/output.py)."""
        from tpuwizard.core.kaggle.output import fetch_file, shown_name

        listing = self._call(
            "listing the kernel's output", lambda: list_output(self._api, ref), DOWNLOAD_TIMES
        )
        folder.mkdir(parents=True, exist_ok=True)
        files: list[Path] = []
        missed: list[tuple[str, str]] = []
        for item in listing.items:
            name = shown_name(str(item.file_name))
            try:
                files.append(
                    self._call(
                        f"downloading {name}",
                        functools.partial(fetch_file, self._api, item, folder),
                        DOWNLOAD_TIMES,
                    )
                )
            except KaggleCallFailed as err:
                missed.append((name, err.detail))
        if listing.log:
            log = folder / (ref.split("/", 1)[1] + ".log")
            log.write_text(listing.log, encoding="utf-8")
            files.append(log)
        return Downloaded(files, missed)

    def docker_image(self, ref: str) -> str | None:
        from kagglesdk.kernels.types.kernels_api_service import ApiGetKernelRequest

        owner, slug = ref.split("/", 1)
        request = ApiGetKernelRequest()
        request.user_name, request.kernel_slug = owner, slug

        def get_kernel() -> Any:
            with self._api.build_kaggle_client() as kaggle:
                return kaggle.kernels.kernels_api_client.get_kernel(request)

        answer = self._call("reading the kernel's metadata", get_kernel)
        return (answer.metadata.docker_image if answer.metadata else None) or None

    def delete(self, ref: str) -> None:
        self._call("deleting the kernel", lambda: self._api.kernels_delete(ref, no_confirm=True))
