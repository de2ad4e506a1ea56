"""The calls a run on Kaggle makes, and what they answer: client.py makes them with Kaggle's
own client; the unit tests with an in-memory fake."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class KaggleCallFailed(Exception):
    """A call to Kaggle failed: ``status`` is the HTTP status where one came back."""

    def __init__(self, what: str, detail: str, status: int | None = None) -> None:
        super().__init__(f"{what}: {detail}")
        self.what, self.detail, self.status = what, detail, status


class PushNotListed(KaggleCallFailed):
    """The push got no answer, and Kaggle does not list the kernel just after: taken as not
    landed (its record closed), though a push Kaggle answers late can still land."""


@dataclass(frozen=True)
class Pushed:
    ref: str
    url: str
    version: int | None
    error: str | None  # Kaggle's own words when it refused the push
    found: bool = False  # its answer was lost; it was found by its slug


@dataclass(frozen=True)
class Quota:
    """The weekly TPU quota, in seconds."""

    used_s: float
    allowed_s: float

    @property
    def left_s(self) -> float:
        return max(0.0, self.allowed_s - self.used_s)


@dataclass(frozen=True)
class Downloaded:
    """A kernel's output as it came home, file by file: the files that came (the log among
    them), and each listed file that did not, by its name as Kaggle listed it (which may hold
    what no file name here can: shown escaped) with why."""

    files: list[Path]
    missed: list[tuple[str, str]]


class Kernels(Protocol):
    """The calls a Kaggle run makes (an in-memory fake implements them in the unit tests)."""

    username: str

    def tpu_quota(self) -> Quota | None: ...
    def push(self, folder: Path, timeout_s: int, shape: str) -> Pushed: ...
    def status(self, ref: str) -> tuple[str, str | None]: ...
    def log_lines(self, ref: str) -> Iterator[str]: ...
    def download(self, ref: str, folder: Path) -> Downloaded: ...
    def docker_image(self, ref: str) -> str | None: ...
    def delete(self, ref: str) -> None: ...
