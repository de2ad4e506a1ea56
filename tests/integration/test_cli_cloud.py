"""`tpuwizard zones` and `tpuwizard sandbox serve` as a user runs them."""

import json
import os
import signal
import subprocess

import pytest
from google.api_core import exceptions as gx
from google.auth import exceptions as auth_exc

from tests.conftest import clean_env, tpuwizard_cmd
from tpuwizard.core.cloud.tpu.client import TpuCloud


def run(*args, **env):
    return subprocess.run(
        tpuwizard_cmd(*args), capture_output=True, text=True, timeout=120, env=clean_env(**env)
    )


def test_offline_zones_are_labelled_documented():
    proc = run("zones", "--offline", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["source"] == "documented"
    assert "v5litepod-4" in doc["zones"]["us-west1-c"]
    human = run("zones", "--offline", "--accelerator", "v5litepod-4")
    assert "documented, not live" in human.stdout
    assert "not the same as free capacity" in human.stdout


def test_without_credentials_zones_come_from_the_practice_sandbox_as_in_the_wizard(tmp_path):
    # No credentials means a practice session, here as in the wizard and plain mode: its zones
    # are the ones a practice launch can use. --offline still gives the documented catalog.
    proc = run("zones", "--json", CLOUDSDK_CONFIG=str(tmp_path / "none"))
    assert json.loads(proc.stdout)["source"] == "live"
    assert "[practice]" in proc.stderr and "no Google credentials were found" in proc.stderr


def test_live_zones_from_the_sandbox_are_labelled_practice():
    proc = run("zones", "--sandbox", "--accelerator", "v5litepod-4", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["source"] == "live" and doc["runtime_version"] == "v2-alpha-tpuv5-lite"
    assert "us-central1-a" in doc["zones"] and "us-east1-d" not in doc["zones"]
    assert "[practice]" in proc.stderr


def test_a_zone_the_project_may_not_use_is_said_in_words_not_as_google_s_403():
    proc = run("zones", "--sandbox")
    assert proc.returncode == 0, proc.stderr
    said = proc.stdout + proc.stderr
    assert "Not searched: europe-west1-b. Google says your project may not use it" in said
    assert "http://" not in said and "Forbidden" not in said


def test_bad_input_exits_2_before_any_call():
    assert run("zones", "--accelerator", "v5e-4").returncode == 2
    proc = run("zones", "--sandbox", "--project", "Bad_Project")
    assert proc.returncode == 2 and "6-30 characters" in proc.stderr


def test_cloud_errors_exit_3_with_a_diagnosis_and_no_traceback():
    proc = run("zones", "--sandbox", TPUWIZARD_SANDBOX_FAULTS="forbidden=50")
    assert proc.returncode == 3
    assert "Permission denied" in proc.stderr and "roles/tpu.admin" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_sandbox_serve_answers_the_real_client_until_interrupted():
    proc = subprocess.Popen(
        tpuwizard_cmd("sandbox", "serve", "--delay", "0.1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    try:
        exported = dict(proc.stdout.readline().strip().split("=", 1) for _ in range(2))
        endpoint = exported["TPUWIZARD_TPU_ENDPOINT"]
        assert endpoint.startswith("http://127.0.0.1:")
        with pytest.raises((gx.Unauthorized, auth_exc.GoogleAuthError)):  # anonymous: refused
            TpuCloud("practice-project", endpoint=endpoint, retry_deadline=1).list_zones()
        token = exported["TPUWIZARD_SANDBOX_TOKEN"]
        os.environ["TPUWIZARD_SANDBOX_TOKEN"] = token  # as the user exports it
        try:
            cloud = TpuCloud("practice-project", endpoint=endpoint)
        finally:
            del os.environ["TPUWIZARD_SANDBOX_TOKEN"]
        assert "us-central1-a" in cloud.list_zones()
    finally:
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)  # a loaded machine: a stop within a minute
    assert proc.returncode == 0 and "Sandbox stopped" in err


def test_sandbox_serve_rejects_a_bad_port():
    proc = run("sandbox", "serve", "--port", "70000")
    assert proc.returncode == 2 and "--port" in proc.stderr


def test_sandbox_serve_stops_on_ctrl_c_even_when_started_with_it_ignored():
    """A shell or a test runner may start it with SIGINT ignored, which Python then leaves
    ignored; its stop is Ctrl+C, so it asks for SIGINT itself (pytest-xdist's workers hid this)."""
    proc = subprocess.Popen(
        tpuwizard_cmd("sandbox", "serve", "--delay", "0.1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        proc.stdout.readline()  # serving
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0 and "Sandbox stopped" in err
