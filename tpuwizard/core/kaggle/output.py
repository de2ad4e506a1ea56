"""A kernel's output brought home file by file through Kaggle's own client: the listing (every
page, read by client.py, the one module that imports kagglesdk), then each file on its own
request, so one that fails (an expired link, a name this disk refuses, a transient error) costs
only itself. kaggle's ``kernels_output`` fetches them all in one call: one failing file lost
the receipt, the output and every other file (reliability round 6, G6)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILE_TIMEOUT_S = 300  # kaggle's own bound on one file's download


@dataclass(frozen=True)
class Listing:
    """What a kernel's output holds: each file (kagglesdk's items: a name and a signed URL)
    and the session's log."""

    items: list[Any]
    log: str


def fetch_file(api: Any, item: Any, folder: Path) -> Path:
    """One listed file, written under ``folder`` with kaggle's own chunked writer; a name that
    would land outside ``folder`` (the listing relays the notebook's own names) is refused."""
    import requests

    target = folder / str(item.file_name)
    if not target.resolve().is_relative_to(folder.resolve()):
        raise ValueError("its name leads outside the run folder, so it was not written")
    target.parent.mkdir(parents=True, exist_ok=True)
    response = requests.get(item.url, stream=True, timeout=FILE_TIMEOUT_S)
    response.raise_for_status()  # an error page is never saved as the file
    api.download_file(response, str(target), None, True, False)
    return target


def shown_name(name: str) -> str:
    """A listed name as it can be printed: bytes that are no UTF-8 (carried as surrogates)
    shown as ``\\xe9``, as Python shows bytes."""
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte stands for
        return name.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")
