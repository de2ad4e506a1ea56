"""The launcher every worker's script starts through (verify/tpu_launch.py): the join's
timeouts given to jax.distributed.initialize, the script's arguments unchanged, a stack on
SIGUSR1, the join's progress marked."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tpuwizard_verify import tpu_launch

from tpuwizard.core.launch.workers.distributed import (
    SLICE_PORT,
    JoinTimeouts,
    join_env,
    launcher_source,
    script_command,
    slice_coordinator,
)
from tpuwizard.core.launch.workers.jobs import ScriptJob
from tpuwizard.core.preflight import network
from tpuwizard.core.remote.jobs import Job


def fake_initialize(
    coordinator_address=None,
    num_processes=None,
    process_id=None,
    local_device_ids=None,
    cluster_detection_method=None,
    initialization_timeout=300,
    heartbeat_timeout_seconds=100,
    shutdown_timeout_seconds=300,
):
    return {"init": initialization_timeout, "heartbeat": heartbeat_timeout_seconds}


@pytest.fixture
def timeouts(monkeypatch):
    monkeypatch.setenv("TPUWIZARD_INIT_TIMEOUT", "1800")
    monkeypatch.setenv("TPUWIZARD_HEARTBEAT_TIMEOUT", "1200")


def test_the_launcher_gives_initialize_the_timeouts_the_script_left_out(timeouts):
    wrapped = tpu_launch.with_timeouts(fake_initialize)
    assert wrapped() == {"init": 1800, "heartbeat": 1200}
    # The script's own values win, by name or by position.
    assert wrapped(initialization_timeout=60) == {"init": 60, "heartbeat": 1200}
    assert wrapped(None, None, None, None, None, 90, 30) == {"init": 90, "heartbeat": 30}


def test_a_jax_without_those_parameters_gets_none_of_them(timeouts):
    def old_initialize(coordinator_address=None, num_processes=None, process_id=None):
        return "joined"

    assert tpu_launch.with_timeouts(old_initialize)() == "joined"


def test_the_timeouts_travel_in_the_job_environment_with_the_slice_address():
    job = ScriptJob(
        Job("script-x"),
        ".tpuwizard/work",
        "../venv/bin/python",
        "train.py",
        ["--lr", "3e-4"],
        None,
        slice_address="10.0.0.2:8476",
        timeouts=JoinTimeouts.of(600, None),
    )
    env = job.env_for(1, 4)
    assert env["TPUWIZARD_INIT_TIMEOUT"] == "600" and env["TPUWIZARD_HEARTBEAT_TIMEOUT"] == "1200"
    assert env["JAX_COORDINATOR_ADDRESS"] == "10.0.0.2:8476"
    assert env["TPUWIZARD_JOB_DIR"] == ".tpuwizard/jobs/script-x"
    assert job.command().endswith("../venv/bin/python -u ../tpu_launch.py train.py --lr 3e-4")
    # The sandbox names its own coordinator; JAX_COORDINATOR_ADDRESS is then left out.
    assert "JAX_COORDINATOR_ADDRESS" not in join_env(1, 4, "127.0.0.1:5000", "10.0.0.2:8476")
    # GKE's hand-over runs the script bare (GKE sets the coordinator).
    assert script_command("python", "t.py", ["a"]) == "python -u t.py a"


def test_a_slice_joins_on_worker_0_and_a_port_the_slice_rule_opens():
    assert slice_coordinator(("10.0.0.2", "10.0.0.3"), 2) == "10.0.0.2:8476"
    assert slice_coordinator(("10.0.0.2",), 1) is None  # one VM: no join
    assert slice_coordinator((), 4) is None  # not known: JAX picks
    assert SLICE_PORT == network.JOIN_PORT and SLICE_PORT in network.SLICE_RULE_PORTS


def run_launcher(tmp_path: Path, script: str, *args: str, **env: str):
    (tmp_path / "tpu_launch.py").write_text(launcher_source())
    (tmp_path / "s.py").write_text(script)
    return subprocess.run(
        [sys.executable, "-u", "tpu_launch.py", "s.py", *args],
        cwd=tmp_path,
        env={**os.environ, "HOME": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_script_runs_as_main_with_its_arguments_and_a_stack_on_sigusr1(tmp_path):
    (tmp_path / "job").mkdir()
    script = (
        "import os, signal, sys, time\n"
        "def deep():\n"
        "    os.kill(os.getpid(), signal.SIGUSR1)\n"
        "    time.sleep(0.5)\n"
        "deep()\n"
        "print(__name__, sys.argv)\n"
    )
    done = run_launcher(tmp_path, script, "--lr", "3e-4", "a b", TPUWIZARD_JOB_DIR="job")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "__main__ ['s.py', '--lr', '3e-4', 'a b']"
    stack = (tmp_path / "job" / "stack").read_text()
    assert "in deep" in stack and 's.py"' in stack


def test_real_jax_initialize_is_wrapped_and_marks_the_join(tmp_path):
    """The installed JAX: its initialize() gets the launcher's timeouts (read back from the
    call) and the job folder says the script reached the join."""
    (tmp_path / "job").mkdir()
    script = (
        "import jax, jax._src.distributed as d\n"
        "seen = {}\n"
        "def record(self, *args, **kwargs):\n"
        "    seen.update(kwargs, initialization_timeout=args[5])  # JAX passes it by position\n"
        "d.State.initialize = record\n"
        "jax.distributed.initialize(coordinator_address='127.0.0.1:1', num_processes=1,\n"
        "                           process_id=0)\n"
        "print(seen['initialization_timeout'], seen['heartbeat_timeout_seconds'])\n"
    )
    done = run_launcher(
        tmp_path,
        script,
        TPUWIZARD_JOB_DIR="job",
        TPUWIZARD_INIT_TIMEOUT="1800",
        TPUWIZARD_HEARTBEAT_TIMEOUT="1200",
        JAX_PLATFORMS="cpu",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["1800", "1200"], done.stdout
    assert (tmp_path / "job" / "joining").exists() and (tmp_path / "job" / "joined").exists()


# A SIGTERM sent straight to the script's process (as Google's Autocheckpoint sends it, past the
# job's wrapper): (the script's handling, its exit code, whether the job's folder marks it).
SIGTERM_CASES = [
    (
        "def on(s, f):\n    print('saved')\n    sys.exit(0)\nsignal.signal(signal.SIGTERM, on)\n",
        0,
        True,
    ),
    ("", -signal.SIGTERM, False),  # no handler: it dies of it; nothing ran to write a mark
    ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n", 0, False),  # ignored: nothing happened
]


@pytest.mark.parametrize(("handling", "code", "marked"), SIGTERM_CASES)
def test_a_sigterm_the_scripts_handler_gets_is_marked_in_the_job_folder(
    tmp_path, handling, code, marked
):
    (tmp_path / "job").mkdir()
    script = (
        "import os, signal, sys, time\n"
        + handling
        + "assert signal.getsignal(signal.SIGTERM) is not None\n"
        + "os.kill(os.getpid(), signal.SIGTERM)\n"
        + "time.sleep(1)\n"
    )
    done = run_launcher(tmp_path, script, TPUWIZARD_JOB_DIR="job")
    assert done.returncode == code, done.stderr
    assert (tmp_path / "job" / "sigterm").exists() is marked


def test_the_script_reads_back_its_own_sigterm_handler(tmp_path):
    (tmp_path / "job").mkdir()
    script = (
        "import signal\n"
        "def on(s, f): pass\n"
        "assert signal.signal(signal.SIGTERM, on) is signal.SIG_DFL\n"
        "assert signal.getsignal(signal.SIGTERM) is on\n"
        "assert signal.signal(signal.SIGTERM, signal.SIG_DFL) is on\n"
        "print('ok')\n"
    )
    done = run_launcher(tmp_path, script, TPUWIZARD_JOB_DIR="job")
    assert done.stdout.strip() == "ok", done.stderr
