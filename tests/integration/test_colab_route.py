"""`launch --route colab` end to end against the stand-in `colab` program: practice by default,
the real path (expected `tpu`) with the stand-in on PATH as `colab`, input refused before any
call, and each fault its diagnosis and exit code. Every runtime here is this computer's CPU."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.integration.colab_helpers import (
    calls,
    launch,
    ledger,
    make_project,
    named,
    practice_home,
    stand_in_on_path,
    user_env,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path)


def test_practice_runs_the_script_through_a_named_session_and_brings_everything_back(
    tmp_path, project
):
    env = user_env(tmp_path)
    # The report's secrets (reliability round 5, F2): never uploaded, so never there to fetch.
    (project / ".ssh").mkdir()
    (project / ".ssh" / "id_ed25519").write_text("SECRETSSHKEY\n")
    (project / ".env").write_text("AWS_SECRET_ACCESS_KEY=SECRETAWS\n")
    fetch = ("--fetch", "*.txt", "--fetch", ".env", "--fetch", ".ssh/*")
    code, events, err = launch(
        project, env, "--script", "main.py", *fetch, "--max-run", "5", "--", "--lr", "3"
    )
    assert code == 0, err
    [planned] = named(events, "colab_planned")
    assert planned["practice"] and planned["expect"] == "cpu" and planned["tpu"] == "v5e1"
    # Practice by default here, and said why (no colab program, no sign-in token).
    assert planned["practice_why"].startswith("Google's colab program is not installed here")
    assert err.startswith("[practice] Using the local Colab stand-in because Google's colab")
    assert planned["folder"]["files"] == 1 and planned["folder"]["secrets"] == [".ssh/", ".env"]
    session = planned["session"]
    lines = [e["text"] for e in named(events, "script_line")]
    assert "devices: 1 cpu" in lines and "args: ['--lr', '3']" in lines
    assert any(line.startswith("PASS: all") for line in lines)
    [receipt] = named(events, "receipt_saved")
    assert receipt["ok"]
    [stopped] = named(events, "colab_session_stopped")
    assert stopped["verified"] and events[-2] == stopped and events[-1]["exit_code"] == 0
    run_dir = Path(events[-1]["run_dir"])
    assert run_dir.parent == project / "runs"
    assert (run_dir / "receipt.json").is_file()
    assert "devices: 1 cpu" in (run_dir / "output.txt").read_text()
    assert (run_dir / "files" / "result.txt").read_text() == "done"
    assert sorted(p.name for p in (run_dir / "files").rglob("*")) == ["result.txt"]
    # The same kind of summary and outcome.json a TPU route's launch ends with (issue 49).
    said = " ".join(err.split())
    assert f"Summary of {session} (v5litepod-1 in Colab, practice)" in said
    # One name for the chip on every line (newcomer round 6, D4): its accelerator type, with
    # Colab's own label beside it once ("TPU v5litepod-1 (Colab's v5e1)").
    names = re.findall(r"\bv5e-?1\b|\bv5litepod-1\b", err, flags=re.IGNORECASE)
    assert sorted(set(names)) == ["v5e1", "v5litepod-1"], names
    assert names.count("v5e1") == 1 and "TPU v5litepod-1 (Colab's v5e1)" in said
    assert "Checks: 7 of 7 PASS" in said and "Your script: exit 0." in said
    assert f"Session {session} stopped: colab sessions no longer lists it." in said
    outcome = json.loads((run_dir / "outcome.json").read_text())
    assert outcome["route"] == "colab" and outcome["exit_code"] == 0 and outcome["ok"]
    assert (outcome["checks_passed"], outcome["checks"], outcome["script_exit_code"]) == (7, 7, 0)
    assert outcome["verified_gone"] == [session] and outcome["still_existing"] == []
    made = [c for c in calls(practice_home(tmp_path)) if c[0] != "status"]  # its probes
    assert [c[0] for c in made] == [
        "version", "new", "sessions", "upload", "exec", "download", "download",
        "exec", "download", "download", "download", "stop", "sessions",
    ]  # fmt: skip
    assert made[1] == ["new", "-s", session, "--tpu", "v5e1"]
    verify, script = [c for c in made if c[0] == "exec"]
    for argv in (verify, script):
        assert argv[argv.index("--timeout") + 1] == "300"  # from --max-run 5
        assert "COURSE_EXPECT_PLATFORM=cpu" in argv and "JAX_PLATFORMS=cpu" in argv
    records = [r["op"] for r in _records(tmp_path)]
    assert records == ["intent", "pushed", "deleted"] and ledger(tmp_path).held() == []


def _records(tmp_path: Path) -> list[dict]:
    import json

    text = (tmp_path / "state" / "colab-ledger.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_the_real_path_expects_tpu_so_a_cpu_runtime_fails_and_the_script_never_runs(
    tmp_path, project
):
    env = user_env(tmp_path)
    home = stand_in_on_path(tmp_path, env)
    code, events, err = launch(project, env, "--script", "main.py")
    assert code == 1, err
    [planned] = named(events, "colab_planned")
    assert planned["expect"] == "tpu" and not planned["practice"]
    [failed] = named(events, "failed")
    assert failed["diagnosis"]["kind"] == "colab_verification"
    assert "did not show a TPU" in failed["diagnosis"]["title"]
    assert [c[0] for c in calls(home)].count("exec") == 1  # the verifier's only
    assert named(events, "colab_session_stopped")[0]["verified"]
    assert not calls(practice_home(tmp_path))  # the stand-in of practice was not used


@pytest.mark.parametrize(
    "args, words",
    [
        (("--script", "nope.py"), "no such file"),
        (("--script", "main.py", "--max-run", "0.5"), "1 to 720 minutes on Colab"),
        (("--script", "main.py", "--zone", "us-central1-a"), "--zone cannot be used"),
        (("--script", "main.py", "--accelerator", "v5litepod-8"), "--accelerator cannot"),
        (("--script", "main.py", "--keep"), "--keep cannot be used with --route colab"),
        # Colab's CLI installs no packages (session/free/packages.py's rule)
        (("--script", "main.py", "--with", "optax"), "--with/--requirements cannot be used"),
        (
            (
                "--max-run",
                "5",
            ),
            "needs --script",
        ),
    ],
)
def test_bad_input_exits_2_before_any_call(tmp_path, project, args, words):
    env = user_env(tmp_path)
    code, _, err = launch(project, env, *args)
    assert code == 2 and words in err
    assert (
        calls(practice_home(tmp_path)) == []
        and not (tmp_path / "state" / "colab-ledger.jsonl").exists()
    )


def test_without_the_colab_cli_one_line_says_how_to_install_it_and_offers_the_notebook(
    tmp_path, project
):
    env = user_env(tmp_path)
    token = tmp_path / "home" / ".config" / "colab-cli" / "token.json"  # signed in once before
    token.parent.mkdir(parents=True)
    token.write_text("{}")
    code, events, err = launch(project, env, "--script", "main.py")
    assert code == 2 and events == []
    assert "pip install google-colab-cli" in err and "Python 3.12 or newer" in err
    assert "tpuwizard notebook --platform colab" in err
    assert calls(practice_home(tmp_path)) == []


@pytest.mark.parametrize(
    "faults, kind, exit_code",
    [
        ("no_tpu", "colab_no_tpu", 3),
        ("signed_out", "colab_sign_in", 3),
        ("vanish_on_exec=1", "colab_session_lost", 3),
        ("exec_timeout=0.2", "colab_timeout", 3),
        ("hang_exec=8", "colab_silent", 3),
    ],
)
def test_each_fault_its_diagnosis_and_the_session_never_left_behind(
    tmp_path, project, faults, kind, exit_code
):
    code, events, err = launch(project, user_env(tmp_path, faults), "--script", "main.py")
    assert code == exit_code, err
    [failed] = named(events, "failed")
    assert failed["diagnosis"]["kind"] == kind
    assert failed["diagnosis"]["next_steps"]
    assert ledger(tmp_path).held() == []  # stopped and verified, or never made
    assert "Traceback" not in err
