"""`launch --route kaggle` end to end, with kaggle 2.2.5's own client talking to the Kaggle
stand-in: practice (`--sandbox`), and the real path (no `--sandbox`: expected `tpu`) pointed at
a stand-in this test runs, the way the client allows (KAGGLE_API_ENVIRONMENT=LOCALHOST and the
stand-in as its HTTP proxy). Every kernel here runs on this computer's CPU."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from tests.conftest import clean_env, tpuwizard_cmd
from tests.integration.kaggle_helpers import cli_env, launch, make_project, named, stand_ins
from tests.rotation import rotating
from tests.waiting import wait_until
from tpuwizard.sandbox.kaggle.sessions import PINNED_IMAGE

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path)


@pytest.fixture
def stand_in(tmp_path):
    yield from stand_ins(tmp_path)


def test_practice_pushes_follows_downloads_and_checks_the_receipt(tmp_path, project):
    # A token of the user's own is in the environment: practice never uses it.
    env = cli_env(tmp_path, KAGGLE_API_TOKEN="KGAT_users_real_token")
    code, events, err = launch(project, env, "--sandbox", "--fetch", "*.txt", "--max-run", "5")
    assert code == 0, err
    [planned] = named(events, "kernel_planned")
    assert planned["practice"] and planned["expect"] == "cpu" and planned["max_run_minutes"] == 5
    assert planned["quota_left_s"] == 20 * 3600
    states = [e["state"] for e in named(events, "kernel_state")]
    assert states[0] in ("QUEUED", "RUNNING") and states[-1] == "COMPLETE"
    lines = [e["text"] for e in named(events, "script_line")]
    assert "devices: 8 cpu" in lines and any("PASS" in line for line in lines)
    [receipt] = named(events, "receipt_saved")
    assert receipt["ok"]
    run_dir = Path(events[-1]["run_dir"])
    assert events[-1]["exit_code"] == 0 and run_dir.parent == project / "runs"
    assert (run_dir / "receipt.json").is_file() and (run_dir / "kernel.log").is_file()
    assert "devices: 8 cpu" in (run_dir / "output.txt").read_text()
    assert (run_dir / "files" / "result.txt").read_text() == "done"
    # The same kind of summary and outcome.json a TPU route's launch ends with (issue 49): the
    # checks, the script's exit, the kernel kept as the run's record; never "nothing was
    # created" (on Kaggle the kernel stays in the account).
    said = " ".join(err.split())
    assert f"Summary of {planned['kernel']} (TpuV5E8 in Kaggle, practice)" in said
    assert "Checks: 7 of 7 PASS" in said and "Your script: exit 0." in said
    assert f"Kernel {planned['kernel']}: kept as this run's record" in said
    assert "Nothing was created" not in said and "Checks: none ran" not in said
    outcome = json.loads((run_dir / "outcome.json").read_text())
    assert outcome["route"] == "kaggle" and outcome["exit_code"] == 0 and outcome["ok"]
    assert (outcome["checks_passed"], outcome["checks"], outcome["script_exit_code"]) == (7, 7, 0)
    assert outcome["receipt"] == str(run_dir / "receipt.json") and outcome["receipt_ok"]
    [left] = outcome["left_in_account"]  # in practice, the stand-in's account, ended with it
    assert left["name"] == planned["kernel"] and left["delete_command"] is None
    assert outcome["still_existing"] == [] and outcome["billing"] == []
    # The stand-in ended with the command, and its kernel with it: nothing left for status.
    from tpuwizard.core.kaggle.ledger import KernelLedger

    assert KernelLedger(Path(clean_env()["TPUWIZARD_HOME"]) / "kaggle-ledger.jsonl").held() == []


def test_an_output_file_that_cannot_be_downloaded_loses_only_itself(tmp_path, project):
    """Reliability round 6, G6: a file named with a byte that is no UTF-8 cannot be served
    (the stand-in answers 404, as a transient error would on Kaggle); it lost the receipt, the
    output and every other file. Now each file comes on its own: the rest of the run stays."""
    (project / "main.py").write_text(
        "import os\nos.makedirs('out', exist_ok=True)\nopen('out/ok.txt', 'w').write('fine')\n"
        "open(b'out/caf\\xe9.txt', 'w').write('x')\nprint('wrote both', flush=True)\n"
    )
    env = cli_env(tmp_path)
    code, events, err = launch(project, env, "--sandbox", "--fetch", "out/**", "--max-run", "5")
    assert code == 1, err  # a file of the script's did not come back: the run fails for it
    run_dir = Path(events[-1]["run_dir"])
    [receipt] = named(events, "receipt_saved")
    assert receipt["ok"] and (run_dir / "receipt.json").is_file()
    assert "wrote both" in (run_dir / "output.txt").read_text()
    assert (run_dir / "kernel.log").is_file()
    assert (run_dir / "files" / "out" / "ok.txt").read_text() == "fine"
    [missed] = named(events, "file_not_fetched")
    assert missed["path"] == str(run_dir / "files" / "out" / "caf\\xe9.txt")
    assert missed["incomplete"] and missed["reason"]
    said = " ".join(err.split())
    assert "Your script: exit 0." in said and "Receipt: none was saved" not in said
    assert "1 file(s) did not come back whole (a run fails for it)." in said


def test_a_kernel_that_ran_on_cpu_fails_naming_the_pinned_image(tmp_path, project, stand_in):
    server = stand_in("pinned")
    code, events, err = launch(project, cli_env(tmp_path, server))
    assert code == 1, err
    [planned] = named(events, "kernel_planned")
    assert planned["expect"] == "tpu" and not planned["practice"]
    [failed] = named(events, "failed")
    assert failed["diagnosis"]["kind"] == "kaggle_cpu_run"
    assert PINNED_IMAGE in failed["diagnosis"]["explanation"]
    [push] = server.pushes  # what went over the wire, as kaggle 2.2.5 sent it
    assert push["isPrivate"] is True and push["enableTpu"] is True
    assert push["machineShape"] == "TpuV5E8" and push["sessionTimeoutSeconds"] == 3600
    assert "dockerImage" not in push and push["slug"].startswith("ada/tpuwizard-")


def test_a_push_whose_answer_is_lost_is_found_by_its_slug_not_pushed_twice(
    tmp_path, project, stand_in
):
    server = stand_in("lose_push;kernel_error")  # the kernel ends at once: no JAX run needed
    code, events, err = launch(project, cli_env(tmp_path, server), "--delete-kernel")
    [pushed] = named(events, "kernel_pushed")
    assert pushed["found_after_lost_answer"], err
    assert len(server.pushes) == 1 and named(events, "kernel_state")[-1]["state"] == "ERROR"
    assert code == 1 and named(events, "failed")[0]["diagnosis"]["kind"] == "kaggle_kernel_error"
    # --delete-kernel: deleted once it ended, and verified by asking for it.
    [deleted] = named(events, "kernel_deleted")
    assert deleted["verified"] and server.sessions.latest == {}


@pytest.mark.parametrize(
    ("faults", "kind"),
    [("quota_exhausted", "kaggle_quota"), ("unverified", "kaggle_unverified")],
)
def test_refusals_known_before_a_run_end_with_their_diagnosis(
    tmp_path, project, stand_in, faults, kind
):
    server = stand_in(faults)
    code, events, err = launch(project, cli_env(tmp_path, server))
    assert code == 3, err
    assert named(events, "failed")[0]["diagnosis"]["kind"] == kind
    assert not named(events, "kernel_pushed")
    assert server.sessions.latest == {}  # no session was started


def test_kaggle_s_own_notices_stay_off_the_json_stream(tmp_path, project, stand_in):
    """With a legacy key (no sign-in call first), the first answer announcing a newer API makes
    kaggle print a notice on stdout: it must not break `--json`'s one object per line."""
    server = stand_in("quota_exhausted;newer_client=99.0")
    env = cli_env(tmp_path, server, KAGGLE_USERNAME="ada", KAGGLE_KEY=server.token)
    del env["KAGGLE_API_TOKEN"]
    code, events, err = launch(project, env)  # every stdout line parsed as JSON
    assert code == 3, err
    assert named(events, "failed")[0]["diagnosis"]["kind"] == "kaggle_quota"


def test_without_kaggle_credentials_it_practises_and_says_why(tmp_path, project):
    """As the wizard and plain mode do: no Kaggle credentials, so the stand-in, said first."""
    code, events, err = launch(project, cli_env(tmp_path))
    assert code == 0, err
    [planned] = named(events, "kernel_planned")
    assert planned["practice"] and planned["expect"] == "cpu"
    assert planned["practice_why"].startswith("no Kaggle credentials were found (")
    assert "kaggle.json" in planned["practice_why"]
    assert events[-1]["exit_code"] == 0 and named(events, "receipt_saved")[0]["ok"]


def test_the_readmes_free_route_example_runs_as_written_without_kaggle_credentials(tmp_path):
    """The README's `tpuwizard launch --route kaggle --script main.py`, word for word, in a
    home with no Kaggle credentials: practice, its first line saying why, exit 0."""
    import shlex

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = "tpuwizard launch --route kaggle --script main.py"
    assert f"`{example}`" in readme
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "main.py").write_text("print('hello from main.py')\n")
    env = cli_env(tmp_path)
    for name in ("KAGGLE_USERNAME", "KAGGLE_KEY", "KAGGLE_CONFIG_DIR", "XDG_CONFIG_HOME"):
        env.pop(name, None)
    done = subprocess.run(
        tpuwizard_cmd(*shlex.split(example)[1:]),
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("[practice] Using the local Kaggle stand-in because no Kaggle ")
    assert "https://www.kaggle.com/settings/api" in first
    assert "hello from main.py" in said and "Done (exit 0)" in said


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--accelerator", "tpuv38"), "retired"),
        (("--with", "jax==0.4.1"), "the kernel's own JAX"),
        (("--with", "-r evil.txt"), "is not a package requirement"),
        (("--keep",), "--keep cannot be used with --route kaggle"),
    ],
)
def test_bad_input_exits_2_before_any_push(tmp_path, project, stand_in, args, words):
    server = stand_in()
    code, events, err = launch(project, cli_env(tmp_path, server), *args)
    assert code == 2 and words in err and events == []
    assert server.pushes == []


def test_a_folder_too_large_is_refused_before_any_push(tmp_path, project, stand_in):
    server = stand_in()
    (project / "data.bin").write_bytes(os.urandom(1 << 21))
    code, _, err = launch(project, cli_env(tmp_path, server))
    assert code == 2 and "1024 KiB" in err and server.pushes == []


# SIGTERM every run; Ctrl+C's SIGINT (the same handler) with TPUWIZARD_DRILL=all.
@pytest.mark.parametrize(
    "stop", [getattr(signal, n) for n in rotating(["SIGTERM", "SIGINT"], 0, ("SIGTERM",))]
)
def test_a_stop_while_the_kernel_waits_says_it_was_left_on_kaggle(
    tmp_path, project, stand_in, stop
):
    server = stand_in("queue=600")  # its session stays QUEUED: a state no later line changes
    proc = subprocess.Popen(
        tpuwizard_cmd("launch", "--route", "kaggle", "--json", "--script", "main.py"),
        cwd=project,
        env=cli_env(tmp_path, server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    events: list[dict] = []

    def read() -> None:
        assert proc.stdout is not None
        events.extend(json.loads(line) for line in proc.stdout)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_until(lambda: named(events, "kernel_state"), 60, "the kernel's first state")
        proc.send_signal(stop)
        assert proc.wait(timeout=60) == 128 + stop
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=60)
    [left] = named(events, "kernel_left_running")
    assert left["state"] == "QUEUED" and left["url"].endswith(left["kernel"])
    # Not cancelled (nothing public can): the stand-in, as Kaggle, still holds its session,
    # and the ledger keeps it open.
    [session] = server.sessions.latest.values()
    assert session.state == "QUEUED" and not session.ended.is_set()
    # Its run folder says so too: stopped by the signal, the kernel left in the account with
    # the command that deletes it.
    [planned] = named(events, "kernel_planned")
    outcome = json.loads((project / "runs" / planned["run_id"] / "outcome.json").read_text())
    assert outcome["stopped_by"] == signal.Signals(stop).name
    assert outcome["exit_code"] == 128 + stop and not outcome["ok"]
    assert outcome["still_existing"] == [left["kernel"]]
    assert outcome["left_in_account"][0]["delete_command"] == f"tpuwizard teardown {left['kernel']}"
    from tpuwizard.core.kaggle.ledger import KernelLedger

    ledger = KernelLedger(Path(clean_env()["TPUWIZARD_HOME"]) / "kaggle-ledger.jsonl")
    assert [r["kernel"] for r in ledger.open_sessions()] == [left["kernel"]]


OFFLINE = """
set -u
ip link set lo up
# The audit's own check: a look-up of Kaggle's name is written down (and fails here).
OFFLINE_AUDIT_LOG="$PWD/control.log" "$PY" -c "import socket
try: socket.getaddrinfo('api.kaggle.com', 443)
except OSError: pass"
export OFFLINE_AUDIT_LOG="$PWD/audit.log"
cd project
"$PY" -m tpuwizard launch --route kaggle --sandbox --json --script main.py > ../events.jsonl \\
    2> ../launch.err
echo "launch exit $?"
"""


def test_a_practice_run_never_leaves_this_machine_even_with_a_token_set(tmp_path, project):
    """Inside `unshare -rn` with only loopback, and an audit hook in every Python process: the
    practice run ends 0 and nothing looked up or connected to anything but this machine."""
    import shutil
    import sys

    from tests.integration.test_practice_launch_offline import AUDIT

    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("unshare or ip is not installed")
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn is not permitted here")
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "sitecustomize.py").write_text(AUDIT)
    path = os.pathsep.join(p for p in (str(tmp_path / "audit"), os.environ.get("PYTHONPATH")) if p)
    env = cli_env(tmp_path, PY=sys.executable, PYTHONPATH=path, KAGGLE_API_TOKEN="KGAT_real")
    (tmp_path / "offline.sh").write_text(OFFLINE)
    done = subprocess.run(
        ["unshare", "-rn", "bash", "offline.sh"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = done.stdout + done.stderr + (tmp_path / "launch.err").read_text()
    assert "launch exit 0" in done.stdout, said
    assert "getaddrinfo api.kaggle.com" in (tmp_path / "control.log").read_text()
    audit = tmp_path / "audit.log"
    assert not audit.exists(), f"calls meant to leave this machine:\n{audit.read_text()}"
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert events[-1]["event"] == "finished" and events[-1]["exit_code"] == 0


def test_with_packages_are_installed_at_the_kernel_s_start_and_the_script_imports_them(
    tmp_path, project
):
    """Practice, with a package from a local wheel folder (nothing downloaded): installed at
    the kernel's start, before the verifier, and the script imports it."""
    from tests.wheels import make_wheel

    make_wheel(tmp_path / "wheels", "tinypkg", "1.0", code="WORD = 'tiny-ok'\n")
    (project / "main.py").write_text("import tinypkg\nprint('tinypkg says', tinypkg.WORD)\n")
    env = cli_env(
        tmp_path,
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(tmp_path / "wheels"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    code, events, err = launch(project, env, "--sandbox", "--with", "tinypkg==1.0")
    lines = [e["text"] for e in named(events, "script_line")]
    assert code == 0, err
    assert lines.index("[tpuwizard] installing tinypkg==1.0") < lines.index("tinypkg says tiny-ok")
    assert any("PASS" in line for line in lines)  # the verifier ran, beside the package


def test_the_pushed_kernel_carries_no_secret_of_the_folder_and_says_what_went(
    tmp_path, project, stand_in
):
    """The report's folder (reliability round 5, F2) pushed through kaggle's own client: the
    kernel's source, as the stand-in received it, holds the script and none of the secrets;
    what went and what stayed is said before the push, and that the kernel stays after it."""
    import base64
    import io
    import tarfile

    for rel, text in {
        ".env": "AWS_SECRET_ACCESS_KEY=SECRETAWS\n",
        ".ssh/id_ed25519": "SECRETSSHKEY\n",
        ".kaggle/kaggle.json": '{"username":"me","key":"SECRETKAGGLEKEY123"}',
    }.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    server = stand_in("kernel_error")  # the kernel ends at once: no JAX run needed
    code, events, err = launch(project, cli_env(tmp_path, server))
    assert code == 1, err
    [push] = server.pushes
    folder = push["text"].split("\nFOLDER = '", 1)[1].split("'", 1)[0]
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(folder)), mode="r:gz") as tar:
        assert tar.getnames() == ["main.py"]
    [planned] = named(events, "kernel_planned")
    assert planned["folder"]["files"] == 1
    assert sorted(planned["folder"]["secrets"]) == [".env", ".kaggle/", ".ssh/"]
    assert "Never sent (keys, credentials, .env files): .kaggle/, .ssh/, .env." in err
    assert "kaggle kernels delete ada/tpuwizard-" in err
