"""The preflight's result and how its checks run: concurrently, each within a timeout, and never
with a traceback (an exception is UNKNOWN, saying why)."""

from __future__ import annotations

import concurrent.futures
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

# One check's whole time: its calls each have their own (shorter) timeout inside it.
CHECK_TIMEOUT = 20.0


class Verdict(enum.StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"  # the create would be refused (or its SSH would): ``fix`` says what to run
    UNKNOWN = "UNKNOWN"  # could not tell; never stops a launch


@dataclass(frozen=True)
class Check:
    """One line of the preflight. ``fix``: the one command that fixes a FAIL, or that lets an
    UNKNOWN check run (enable its API, set a quota project); None where there is none."""

    name: str
    verdict: Verdict
    detail: str
    fix: str | None = None
    # What the launch must do for this PASS to hold (oslogin.IMPORT_KEY), else None.
    launch_does: str | None = None

    @property
    def failed(self) -> bool:
        return self.verdict is Verdict.FAIL

    def line(self) -> str:
        """The check as one line a user reads."""
        fix = f" Fix: {self.fix}" if self.fix else ""
        return f"{self.verdict.value:<7} {self.name}: {self.detail}.{fix}"

    def as_json(self) -> dict[str, str | None]:
        return {
            "name": self.name,
            "verdict": self.verdict.value,
            "detail": self.detail,
            "fix": self.fix,
        }


def passed(name: str, detail: str) -> Check:
    return Check(name, Verdict.PASS, detail)


def failed(name: str, detail: str, fix: str | None) -> Check:
    return Check(name, Verdict.FAIL, detail, fix)


def unknown(name: str, detail: str, fix: str | None = None) -> Check:
    return Check(name, Verdict.UNKNOWN, detail, fix)


@dataclass(frozen=True)
class CheckJob:
    """A check not yet run: its name (for the line when it raises or runs out of time)."""

    name: str
    run: Callable[[], Check]


def run_checks(jobs: Sequence[CheckJob], timeout: float = CHECK_TIMEOUT) -> list[Check]:
    """Run every job at once, in threads; answers in the jobs' order. A job that raises is
    UNKNOWN with the exception's words; one still running after ``timeout`` is UNKNOWN too (its
    thread is left to finish on its own: each of its calls has its own timeout)."""
    if not jobs:
        return []
    pool = concurrent.futures.ThreadPoolExecutor(
        max_workers=len(jobs), thread_name_prefix="preflight"
    )
    try:
        futures = [pool.submit(_guarded, job) for job in jobs]
        concurrent.futures.wait(futures, timeout=timeout)
        return [
            f.result()
            if f.done()
            else unknown(job.name, f"no answer within {timeout:g} s (the check was abandoned)")
            for job, f in zip(jobs, futures, strict=True)
        ]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _guarded(job: CheckJob) -> Check:
    try:
        return job.run()
    except Exception as err:  # a check never raises: it could not tell, and says why
        return unknown(job.name, f"the check itself failed ({type(err).__name__}: {err})")


def in_parallel(*calls: Callable[[], T]) -> list[T]:
    """Several calls of one check at once (so three 200 ms reads cost 200 ms, not 600); an
    exception in one is raised here, and the check's guard makes it UNKNOWN."""
    if len(calls) == 1:
        return [calls[0]()]
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(lambda call: call(), calls))
