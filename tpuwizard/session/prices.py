"""The session's prices: the Billing Catalog's (Google's, or in practice the sandbox's), read
through the disk cache; the offline table where neither a fresh read nor a cached one exists.
Never raises for the cloud's sake: a failed read is a reason, said beside the offline figures."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpuwizard.core import paths
from tpuwizard.core.prices import cache
from tpuwizard.core.prices.cache import PriceBook

if TYPE_CHECKING:
    from tpuwizard.core.prices.live import BookPrices
    from tpuwizard.session.session import Session


def price_book(session: Session, refresh: bool = False) -> tuple[PriceBook | None, str]:
    """(the book, "") when one is read or cached; (an older book, why it was not re-read) when
    the read failed but an earlier one is on disk; (None, why) when there is neither. A fresh
    cached book answers without a call unless ``refresh`` (``--refresh-prices``)."""
    from tpuwizard.core.prices.reader import PriceReadError, read_catalog

    path = cache.cache_file(paths.cache_dir(), session.practice)
    saved, set_aside = cache.read(path)
    if saved is not None and saved.fresh() and not refresh:
        return saved, ""
    try:
        endpoint, credentials = _where(session)
        book = read_catalog(endpoint, credentials() if callable(credentials) else credentials)
    except PriceReadError as err:  # said beside the figures, with what to do
        if saved is not None:
            return saved, f"not re-read ({err}); the read of {saved.date} stands"
        return None, str(err) + (f"; {set_aside_words(path, set_aside)}" if set_aside else "")
    with contextlib.suppress(OSError):  # the read stands; the next command reads it again
        cache.save(path, book)
    return book, ""


def set_aside_words(path: Path, why: str) -> str:
    """The saved read was not used, and why (said where the offline table stands in)."""
    return f"the saved read {path} was set aside: {why}"


def reading_prices() -> None:
    """From now until :func:`use_catalog_prices` lands: the offline table's figures, each
    marked as standing in while the catalog is read (a screen must not wait for it)."""
    from tpuwizard.core.plan import cost
    from tpuwizard.core.prices.live import BookPrices

    cost.use_catalog(BookPrices(None, reading=True))


def catalog_prices(session: Session, refresh: bool = False) -> BookPrices:
    """The catalog's prices as read now (or the cached read), or the offline table's with why
    they are not: blocks for a cold read, so a screen calls it off its thread, and installs
    nothing (:func:`use_prices` does, on the caller's thread)."""
    from tpuwizard.core.prices.live import BookPrices

    try:
        book, why = price_book(session, refresh)
    except Exception as err:  # the cloud did not open (said where it is used): offline, said
        book, why = None, f"the cloud could not be opened ({err})"
    return BookPrices(book, why)


def use_prices(prices: BookPrices) -> str:
    """Price every figure from ``prices`` from now on: the meter, Review, Capacity, the
    summary, plain mode. Returns whose prices they are now, for a line to say."""
    from tpuwizard.core.plan import cost

    cost.use_catalog(prices)
    return cost.source()


def use_catalog_prices(session: Session, refresh: bool = False) -> str:
    """Read the catalog (or take the cached read) and price every figure from it from now on
    (plain mode, which may wait for it)."""
    return use_prices(catalog_prices(session, refresh))


class PricesBeside:
    """A command's prices without waiting for the catalog (``launch``): the cached read at
    once, however old (labelled with its date), else the offline table's marked as standing
    in; where that read is missing or older than a day, the catalog is read on a thread and
    every later figure is its. :meth:`finish` ends it: a read landing after installs nothing."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._lock = threading.Lock()
        self._finished = False
        self._thread: threading.Thread | None = None

    def start(self) -> BookPrices:
        """Install the prices to start with (no call, so the first line never waits), and
        start the read where one is due; returns what was installed."""
        from tpuwizard.core.prices.live import BookPrices

        saved = cached_book(self.session)
        if saved is not None and saved.fresh():
            return self._install(BookPrices(saved))
        if saved is not None:
            first = BookPrices(saved, f"being read again; the read of {saved.date} stands")
        else:
            first = BookPrices(None, reading=True)
        self._install(first)
        self._thread = threading.Thread(target=self._read, name="price-read", daemon=True)
        self._thread.start()
        return first

    def _read(self) -> None:
        self._install(catalog_prices(self.session))

    def _install(self, prices: BookPrices) -> BookPrices:
        with self._lock:
            if not self._finished:
                use_prices(prices)
        return prices

    def wait(self, wait_s: float) -> None:
        """Let a read under way land for up to ``wait_s`` seconds (a guard on money checks the
        catalog's figure, not the one standing in while it is read); installs go on after."""
        if self._thread is not None:
            self._thread.join(wait_s)

    def finish(self, wait_s: float = 0.0) -> None:
        """Let a read under way land for up to ``wait_s`` seconds, then install no more."""
        if self._thread is not None:
            self._thread.join(wait_s)
        with self._lock:
            self._finished = True


def cached_book(session: Session) -> PriceBook | None:
    """The book on disk, however old, without a call (for screens that must not wait)."""
    return cached_read(session)[0]


def cached_read(session: Session) -> tuple[PriceBook | None, str]:
    """(the book on disk, however old, "") or (None, why it was set aside, or "" for none),
    without a call."""
    path = cache.cache_file(paths.cache_dir(), session.practice)
    book, why = cache.read(path)
    return book, set_aside_words(path, why) if why else ""


def _where(session: Session) -> tuple[str, Any]:
    """The catalog's address and credentials: in practice the sandbox's (it serves every API
    on one port), else Google's with Google's default credentials (read only when called)."""
    from tpuwizard.core.prices.reader import GOOGLE_BILLING_ENDPOINT

    if session.practice:
        cloud = session.cloud  # starts the sandbox once
        return cloud.endpoint, cloud.credentials
    return GOOGLE_BILLING_ENDPOINT, _google_default


def _google_default() -> Any:
    import google.auth
    from google.auth import exceptions as auth_exc

    from tpuwizard.core.prices.reader import PriceReadError

    try:
        credentials, _ = google.auth.default(
            scopes=["https://www.googleapis.com/auth/cloud-platform"]
        )
    except auth_exc.GoogleAuthError as err:
        raise PriceReadError(
            "no credentials the Cloud Billing API accepts (gcloud auth application-default "
            f"login): {err}"
        ) from None
    return credentials
