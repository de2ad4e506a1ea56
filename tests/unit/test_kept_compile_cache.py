"""A kept node's warm compile cache (issue 45, item 4): each run's job points JAX at a folder kept
on the node, caches every compile, and the run says whether it compiled anything again.

The runs are real: a worker home whose venv python is this one, and real JAX on CPU (JAX 0.10's
CPU backend writes the persistent cache)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.test_kept_run_events import kept_node
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.workers.compile_cache import (
    COMPILE_CACHE_DIR,
    CacheCount,
    count_entries,
)
from tpuwizard.core.remote.sync import LocalFolder
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.words.event_text import describe

JITTED = (
    "import json, os\n"
    "os.chdir('/')  # the cache folder must not depend on the script's directory\n"
    "import jax, jax.numpy as jnp\n"
    "step = jax.jit(lambda w, x: jnp.tanh(x @ w).sum())\n"
    "print(float(jax.grad(step)(jnp.ones((8, 8)), jnp.ones((2, 8))).sum()))\n"
    "print(json.dumps({k: os.environ.get(k) for k in ('JAX_COMPILATION_CACHE_DIR',\n"
    "    'JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS')}), flush=True)\n"
)


def _run(transport: LocalTransport, tmp_path: Path, script: Path) -> list[ev.Event]:
    events: list[ev.Event] = []
    node = kept_node(transport, tmp_path)
    code = node.run(script, [], [], LocalFolder.of_script(script), events.append, CancelToken())
    assert code == 0, [describe(e) for e in events]
    return events


def _cache(events: list[ev.Event]) -> ev.CompileCache:
    found = [e for e in events if isinstance(e, ev.CompileCache)]
    assert len(found) == 1
    return found[0]


@pytest.fixture
def worker(tmp_path: Path) -> LocalTransport:
    import shlex
    import sys

    home = tmp_path / "w0"
    (home / ".tpuwizard" / "venv" / "bin").mkdir(parents=True)
    python = home / ".tpuwizard" / "venv" / "bin" / "python"
    # A wrapper, not a link: a linked venv python outside its venv loses the venv's JAX.
    python.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    python.chmod(0o755)
    return LocalTransport([home])


def test_a_second_run_of_a_jitted_script_is_a_compile_cache_hit(worker, tmp_path):
    pytest.importorskip("jax")
    folder = tmp_path / "project"
    folder.mkdir()
    script = folder / "train.py"
    script.write_text(JITTED)
    home = worker.homes[0]

    first = _run(worker, tmp_path, script)
    cold = _cache(first)
    assert cold.before == 0 and cold.after > 0 and not cold.hit
    # The folder is absolute, under the worker's home, and every compile is cached.
    env = json.loads([e.text for e in first if isinstance(e, ev.ScriptLine)][-1])
    assert env == {
        "JAX_COMPILATION_CACHE_DIR": str(home / COMPILE_CACHE_DIR),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    }
    assert "cold" in describe(cold)[0]

    second = _run(worker, tmp_path, script)
    warm = _cache(second)
    assert warm.hit and warm.before == warm.after == cold.after
    assert describe(warm) == [
        f"compile cache: hit, nothing compiled again ({cold.after} entries kept on the node "
        "from earlier runs)"
    ]
    names = [e.event_name() for e in second]
    assert names.index("compile_cache") == len(names) - 2  # said just before the run's end

    # An edit that changes the step compiles it again: not a hit, and said so.
    script.write_text(JITTED.replace("(8, 8)", "(8, 4)"))
    third = _cache(_run(worker, tmp_path, script))
    assert not third.hit and third.after > third.before == cold.after
    assert "compiles the cache did not hold yet" in describe(third)[0]


def test_counting_reads_only_entries_and_an_absent_folder_as_none_kept(tmp_path):
    home = tmp_path / "w0"
    home.mkdir()
    transport = LocalTransport([home])
    assert count_entries(transport) == 0
    cache = home / COMPILE_CACHE_DIR
    cache.mkdir(parents=True)
    (cache / "jit_step-abc-cache").write_bytes(b"x")
    (cache / "jit_step-abc-atime").write_bytes(b"x")  # JAX's LRU bookkeeping, not an entry
    (cache / "xla_gpu_kernel_cache").mkdir()
    assert count_entries(transport) == 1


def test_a_hit_needs_entries_before_and_none_added():
    assert CacheCount(3, 3).hit
    assert not CacheCount(0, 0).hit  # nothing kept: nothing could be read from it
    assert not CacheCount(3, 4).hit
    said = describe(ev.CompileCache(0, 0, False))[0]
    assert said.startswith("compile cache: empty")
