import gc
import os
import sys
import warnings
from pathlib import Path

import pytest

from tests import thread_env

REPO = Path(__file__).resolve().parent.parent
FEW_DESCRIPTORS = 256  # a test worker's own, and a test's that are not collected yet


def _open_descriptors() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # not Linux: nothing to count by
        return 0


CLOSED_INDEX = "http://127.0.0.1:9/simple"  # the discard port: nothing listens there
# Practice workers' shared environments (tpuwizard/sandbox/workers/envs.py): one folder for every
# test and xdist worker of every run on this computer, so that the default JAX's ~140 MB are
# downloaded once per computer, not once per test (each test has its own HOME and state).
WORKER_ENVS = Path.home() / ".cache" / "tpuwizard-tests" / "worker-envs"


@pytest.fixture(scope="session", autouse=True)
def _shared_worker_env():
    """The default JAX's worker environment, built before any test closes the package index
    (with this computer's real one; xdist's workers wait on its lock file for the first)."""
    from tpuwizard.sandbox.workers import envs as worker_envs
    from tpuwizard.sandbox.workers import image
    from tpuwizard.session.practice.worker_jax import practice_jax

    os.environ.setdefault(worker_envs.ENVS_ENV, str(WORKER_ENVS))
    said: list[str] = []
    _, fallback = practice_jax(None, said.append)
    image.index_settings.cache_clear()  # the tests' own (closed) index from here on
    if said or fallback:
        sys.stderr.write("".join(f"\n{line}" for line in [*said, fallback or ""]) + "\n")


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch, request):
    """Every test gets its own state directory and never probes the GCE metadata server."""
    thread_env.begin(request.node.nodeid)
    monkeypatch.setenv("TPUWIZARD_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    # A practice worker downloads a package that is not in the wheel folder from this
    # computer's package index: in tests, one that refuses at once (nothing is downloaded).
    monkeypatch.setenv("PIP_INDEX_URL", CLOSED_INDEX)
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.delenv("COURSE_EXPECT_PLATFORM", raising=False)
    # The session's Billing Catalog prices (core/plan/cost.py) are one per process: none from
    # an earlier test's walk stands in this one's.
    from tpuwizard.core.plan import cost

    monkeypatch.setattr(cost, "_catalog", None)
    # `status` and `down` run in-process (CliRunner) allow a read-only home for their process:
    # no test starts with an earlier one's allowance.
    from tpuwizard.core import paths

    monkeypatch.setitem(paths._READ_ONLY_HOME, "allowed", False)
    # Practice mode exports its sandbox's address and token into os.environ: set, then unset,
    # so that monkeypatch restores them at the end and no test starts with an earlier one's.
    for exported in (
        "TPUWIZARD_TPU_ENDPOINT",
        "TPUWIZARD_COMPUTE_ENDPOINT",
        "TPUWIZARD_SANDBOX_TOKEN",
    ):
        monkeypatch.setenv(exported, "")
        monkeypatch.delenv(exported)
    from tpuwizard.sandbox import serving as sandbox_serving

    serving_before = set(map(id, sandbox_serving.served_in_threads()))
    yield
    stop_left_serving(serving_before)
    collect_leftover_clients()
    # A practice node kept or left running lives on in a lasting sandbox, as it would at Google;
    # a test's one ends with the test, and so do its nodes' jobs: none outlives the suite.
    from tests.integration.iterate_helpers import end_practice

    end_practice(tmp_path / "state")
    # A thread an earlier test left running wrote os.environ during this one (tests/thread_env.py).
    foreign = thread_env.end()
    if foreign:
        pytest.fail(
            "\n".join(foreign) + "\n(that test must end what it started: close its session, "
            "stop its walk or heartbeats, wait for its threads)",
            pytrace=False,
        )


def stop_left_serving(serving_before: set[int]) -> None:
    """A sandbox a test started in this process ends with the test, as it would with the process
    (left serving, each one's clock kept ticking on a folder no test uses any more, and its
    threads and sockets held for the rest of the worker's life)."""
    from tpuwizard.sandbox import serving as sandbox_serving

    for left in sandbox_serving.served_in_threads():
        if id(left) in serving_before:
            continue
        from tpuwizard.sandbox.kaggle.server import KaggleStandIn  # where one is left only

        if isinstance(left, KaggleStandIn):  # its kernels' processes too
            left.switch_off()
        else:  # a SandboxServer's own switch_off stops its VMs, not its serving
            left.shutdown()
            left.server_close()


_descriptors_after_collect = [0]


def collect_leftover_clients() -> None:
    """Clients of stopped servers hold their sockets until collected; past 1,024 descriptors,
    select() (prompt_toolkit's pipe input among others) refuses to watch a new one. A full
    collection costs ~0.3 s in a worker that has imported JAX and Textual: made once
    FEW_DESCRIPTORS more are open than after the last one, not after every test while
    descriptors something still holds keep the count high."""
    if _open_descriptors() - _descriptors_after_collect[0] <= FEW_DESCRIPTORS:
        return
    gc.collect()
    _descriptors_after_collect[0] = held = _open_descriptors()
    if held > FEW_DESCRIPTORS:  # not garbage: something still holds them (said, not hidden)
        warnings.warn(
            f"{held} descriptors are still open after a full collection: a test before this "
            "one left them held (a server, a thread, a file); ls -l /proc/self/fd names them",
            stacklevel=2,
        )


@pytest.fixture
def home(_isolated_state) -> Path:
    """This test's TPUWIZARD_HOME: the ledger, keys and the sandbox's state live here."""
    return Path(os.environ["TPUWIZARD_HOME"])


def tpuwizard_cmd(*args: str) -> list[str]:
    """The installed CLI, run the way a user runs it (a fresh interpreter)."""
    return [sys.executable, "-m", "tpuwizard", *args]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "JAX_"))}
    env.update(extra)
    return env


def pytest_configure(config: pytest.Config) -> None:
    thread_env.install()  # before any test starts a thread
    # One turn of the kill drills for the whole run: xdist's workers inherit it (tests/rotation.py).
    from tests.rotation import TURN_ENV, todays_turn

    os.environ.setdefault(TURN_ENV, todays_turn())


# Each group of slow end-to-end tests and how many of it run per suite run (tests/rotation.py),
# so the suite keeps near its 20 minutes on 2 cores; each test is met within about four turns,
# and every behaviour in them is also proven against the in-memory cloud on every run.
# TPUWIZARD_DRILL=all runs them all (before a release, or when a change touches them).
ROTATING_PER_RUN: dict[str, int] = {
    "signal-drill": 10,  # of 51: a stop signal at each point of launch, up, run, the wizard,
    # and while a stall is waited for or handled, or Autocheckpoint's v2alpha1 create is made;
    # just before and just after the hand-over (Kept), and a keep whose bootstrap fails
    "program-fit": 4,  # of 16: fit --program compiling real JAX programs per topology
    "resume-e2e": 3,  # of 12: spot runs preempted (or sent SIGTERM) and resumed bit for bit,
    # in the wizard too
    "kept-node-e2e": 6,  # of 39: up, run, watch, ssh, down; Run again, Keep, idle, OS Login,
    # fit --measure --node (refused before SSH, stopped by SIGINT), another's ledger record,
    # a read-only home (with OS Login keys, Kaggle kernels, Colab sessions), a run folder
    # closed by status, secrets on the TPU route, a held TPU
    # (its words after the run; and a holder found before it, ended or refused, also before
    # the wizard's Run again, then Run anyway),
    # a --max-run deadline passing in the open wizard
    "real-tools-e2e": 3,  # of 14: gcloud, the course's programs, ownership, SkyPilot, k8s, ...
    "kaggle-e2e": 1,  # of 4: status and teardown after launch --route kaggle, ownership, secrets
    "colab-e2e": 1,  # of 4: launch --route colab stopped by SIGINT, SIGTERM, SIGKILL; secrets
    "multihost-e2e": 1,  # of 4: a v5litepod-16's four workers, their traces, one killed
    "deep-checks-e2e": 1,  # of 4: the precision profile and trace: verify, launch, the wizard;
    # the chip's own words (HBM out of memory) diagnosed after a launch
}
# The slow folders first: xdist hands out tests in this order, so the many quick unit tests
# fill the workers' last minutes instead of one long end-to-end test running alone.
SLOW_FIRST = ("tests/integration/", "tests/tui/")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tests.rotation import rotating_tests

    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        marker = item.get_closest_marker("rotating")
        if marker is not None:
            groups.setdefault(marker.args[0], []).append(item)
    skipped: list[pytest.Item] = []
    for group, members in groups.items():
        chosen = rotating_tests([m.nodeid for m in members], ROTATING_PER_RUN[group])
        skipped += [m for m in members if m.nodeid not in chosen]
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = [item for item in items if item not in skipped]
    items.sort(key=lambda item: not item.nodeid.startswith(SLOW_FIRST))  # stable otherwise
