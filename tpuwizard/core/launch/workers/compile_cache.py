"""A kept node's warm compile cache: JAX's persistent compilation cache in a folder on the node.

A second ``run`` on a kept node would otherwise compile the user's step again (on a v5e chip a
24-layer MLP gradient compiled in 10.3 s cold and 1.08 s from this cache, issue 45). The folder
lies under tpuwizard's remote folder in each worker's home, is kept across runs, and goes with
the node's disk when the node is deleted.

Whether a run was served from the cache is read from the outside: the cache's entries on worker 0
are counted before and after the run. What that can know and what it cannot is in
:class:`CacheCount` and docs/guides/kept-nodes.md.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from tpuwizard.core.remote.transports import REMOTE_DIR, Transport

COMPILE_CACHE_DIR = f"{REMOTE_DIR}/compile-cache"  # under each worker's home
# Cache every compile, not only those of 1 s or more (JAX's default): on a kept node the same
# script runs again and again, its cache is a local folder (a write costs milliseconds), and a
# script's several jitted steps of 0.2-0.9 s each add up on every rerun. It also makes "nothing
# new was written" mean "nothing was compiled again" (see CacheCount).
MIN_COMPILE_SECS = "0"
# JAX names an entry ``<module>-<key>-cache`` (with ``-atime`` files beside it when its LRU
# eviction is on); only the entries are counted.
ENTRY_SUFFIX = "-cache"


def cache_env() -> dict[str, str]:
    """The plain variables of the cache for a job (the folder itself is :func:`cache_exports`)."""
    return {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": MIN_COMPILE_SECS}


def cache_exports() -> str:
    """The shell words that point JAX at the node's cache folder, as an absolute path: a path
    relative to the home would break once the script changes its directory."""
    return f'export JAX_COMPILATION_CACHE_DIR="$HOME"/{shlex.quote(COMPILE_CACHE_DIR)} &&'


def count_entries(transport: Transport, worker: int = 0) -> int | None:
    """How many entries the node's cache holds on ``worker`` (0 before the first run); None
    when the count could not be read (it is then not said)."""
    folder = shlex.quote(COMPILE_CACHE_DIR)
    command = (
        f"if [ -d {folder} ]; then find {folder} -maxdepth 1 -type f "
        f"-name {shlex.quote('*' + ENTRY_SUFFIX)} | wc -l; else echo 0; fi"
    )
    try:
        result = transport.run(worker, command, timeout=30, cancellable=False)
    except Exception:  # an unread count is no reason to fail the run
        return None
    text = result.stdout.strip()
    return int(text) if result.code == 0 and text.isdigit() else None


@dataclass(frozen=True)
class CacheCount:
    """The cache's entries on worker 0 before and after one run.

    It can know: whether the run wrote any new entry. With :data:`MIN_COMPILE_SECS` at 0 every
    compile JAX finishes is written, so a run that wrote none while entries existed compiled
    nothing again: a hit. It cannot know which of the script's steps were read from the cache or
    the time saved; what other workers did (they compile the same program, and only worker 0 is
    counted); nor a script that set its own cache folder or turned the cache off (then nothing
    is written here, and a run that compiled nothing at all reads the same as a hit)."""

    before: int
    after: int

    @property
    def added(self) -> int:
        return self.after - self.before

    @property
    def hit(self) -> bool:
        return self.before > 0 and self.after == self.before
