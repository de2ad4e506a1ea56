"""Issue 55: a practice worker's offline install that fails, for whatever reason uv gives, is
tried online before anything is diagnosed (uv's words for a package it lacks change once the
package's index page is in its cache); a worker with no route out gets no route's failure."""

from __future__ import annotations

import subprocess

import pytest

from tpuwizard.sandbox.workers import tools as worker_tools
from tpuwizard.sandbox.workers.tools import NO_ROUTE, OFFLINE_WORKED, ONLINE, after_offline

HINT = (
    "\n\nhint: Packages were unavailable because the network was disabled. When the network is "
    "disabled, registry packages may only be read from the cache.\n"
)
EMPTY_CACHE = (
    "error: No solution found when resolving dependencies\n  cause: Because einops was not "
    "found in the cache and you require einops, we can conclude that your requirements are "
    "unsatisfiable." + HINT
)
WARM_CACHE = (
    "error: No solution found when resolving dependencies\n  cause: Because einops==0.8.2 "
    "needs to be downloaded from a registry and you require einops==0.8.2, we can conclude "
    "that your requirements are unsatisfiable." + HINT
)
CONFLICT = (
    "error: No solution found when resolving dependencies\n  cause: Because needsnewjax==1.0 "
    "depends on jax>=99 and you require needsnewjax, we can conclude that your requirements "
    "are unsatisfiable.\n"
)
UNRELATED = "error: Failed to read `/tmp/added.txt`: Permission denied (os error 13)\n"


def offline(code: int, stderr: str) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(["uv", "pip", "install"], code, "", stderr)


@pytest.mark.parametrize(
    ("code", "stderr", "route_out", "then"),
    [
        (1, EMPTY_CACHE, True, ONLINE),  # round 5's wording: the one matched before
        (1, WARM_CACHE, True, ONLINE),  # round 6's: the index page cached, the wheel not
        (1, CONFLICT, True, ONLINE),  # the index may hold a version that fits
        (2, UNRELATED, True, ONLINE),
        (1, "", True, ONLINE),  # no words at all
        (0, "Installed 1 package in 1ms\n", True, OFFLINE_WORKED),
        (0, "", False, OFFLINE_WORKED),
        (1, EMPTY_CACHE, False, NO_ROUTE),
        (1, WARM_CACHE, False, NO_ROUTE),
        (1, CONFLICT, False, NO_ROUTE),
    ],
)
def test_an_offline_failure_goes_online_whatever_uv_said(code, stderr, route_out, then):
    assert after_offline(offline(code, stderr), route_out) == then


def test_the_packages_an_install_asks_for_are_read_from_its_arguments_and_files(tmp_path):
    listed = tmp_path / "added-packages.txt"
    listed.write_text("flax>=0.8\n# a comment\n\noptax\n")
    args = ["pip", "install", "--python", "/v/bin/python", "-r", str(listed), "-c", "held.txt",
            "--find-links", "/wheels", "--index-url", "http://127.0.0.1:9/simple",
            "--index-strategy", "unsafe-best-match", "--quiet", "numpy"]  # fmt: skip
    assert worker_tools.requested(args) == ["flax>=0.8", "optax", "numpy"]
