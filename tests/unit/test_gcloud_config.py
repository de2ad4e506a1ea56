import socket
from pathlib import Path

import pytest

from tpuwizard.core.cloud import gcloud_config as gc
from tpuwizard.core.errors import BadInput


@pytest.fixture
def gcloud_dir(tmp_path):
    cfg = tmp_path / "gcloud"
    (cfg / "configurations").mkdir(parents=True)
    (cfg / "active_config").write_text("work\n")
    (cfg / "configurations" / "config_work").write_text(
        "[core]\nproject = from-config\naccount = me@example.com\n\n[compute]\nzone = us-west1-c\n"
    )
    (cfg / "configurations" / "config_default").write_text("[core]\nproject = default-proj\n")
    return cfg


def test_active_configuration_file_gives_project_zone_and_account(gcloud_dir):
    ctx = gc.discover(env={"CLOUDSDK_CONFIG": str(gcloud_dir), "NO_GCE_CHECK": "true"})
    assert (ctx.project, ctx.zone, ctx.account) == ("from-config", "us-west1-c", "me@example.com")
    assert ctx.configuration == "work" and "work" in (ctx.project_source or "")


def test_precedence_flag_then_env_then_config_then_google_cloud_project(gcloud_dir):
    env = {
        "CLOUDSDK_CONFIG": str(gcloud_dir),
        "NO_GCE_CHECK": "true",
        "CLOUDSDK_CORE_PROJECT": "from-env",
        "CLOUDSDK_COMPUTE_ZONE": "us-east5-b",
        "GOOGLE_CLOUD_PROJECT": "from-google",
    }
    assert gc.discover(project="from-flag", env=env).project == "from-flag"
    assert gc.discover(env=env).project == "from-env"
    assert gc.discover(env=env).zone == "us-east5-b"
    assert gc.discover(zone="europe-west4-a", env=env).zone == "europe-west4-a"
    del env["CLOUDSDK_CORE_PROJECT"]
    assert gc.discover(env=env).project == "from-config"
    empty = {
        "CLOUDSDK_CONFIG": str(gcloud_dir / "nowhere"),
        "NO_GCE_CHECK": "true",
        "GOOGLE_CLOUD_PROJECT": "from-google",
    }
    assert gc.discover(env=empty).project == "from-google"


def test_active_config_name_from_the_environment(gcloud_dir):
    ctx = gc.discover(
        env={
            "CLOUDSDK_CONFIG": str(gcloud_dir),
            "NO_GCE_CHECK": "true",
            "CLOUDSDK_ACTIVE_CONFIG_NAME": "default",
        }
    )
    assert ctx.project == "default-proj" and ctx.zone is None


def test_missing_things_come_with_the_command_that_fixes_them(tmp_path, monkeypatch):
    # No metadata-server probe: no connection at all (seen directly, not by timing the call,
    # which a loaded machine slows).
    connects: list[object] = []
    monkeypatch.setattr(socket.socket, "connect", lambda _self, address: connects.append(address))
    ctx = gc.discover(
        env={
            "CLOUDSDK_CONFIG": str(tmp_path / "none"),
            "NO_GCE_CHECK": "true",
            "HOME": str(tmp_path),
        }
    )
    assert connects == []
    assert ctx.credentials is None and not ctx.ready
    commands = [cmd for _, cmd in ctx.problems]
    assert "gcloud auth application-default login" in commands
    assert "gcloud config set project PROJECT_ID" in commands


def test_credentials_are_found_from_files(gcloud_dir, tmp_path):
    env = {"CLOUDSDK_CONFIG": str(gcloud_dir), "NO_GCE_CHECK": "true"}
    assert gc.find_credentials(env) is None
    (gcloud_dir / "application_default_credentials.json").write_text("{}")
    assert "application-default login" in (gc.find_credentials(env) or "")
    key = tmp_path / "sa.json"
    key.write_text("{}")
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(key)
    assert "GOOGLE_APPLICATION_CREDENTIALS" in (gc.find_credentials(env) or "")
    assert (
        gc.find_credentials(
            {"CLOUDSDK_CONFIG": str(tmp_path / "x"), "GCE_METADATA_HOST": "169.254.169.254"}
        )
        is not None
    )


@pytest.mark.parametrize("good", ["my-project-123", "abcdef", "a" * 30])
def test_valid_project_ids(good):
    assert gc.validate_project(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "short",
        "1starts-with-digit",
        "ends-with-",
        "UPPER-case",
        "a" * 31,
        "has_underscore",
        "p; rm -rf ~",
    ],
)
def test_invalid_project_ids_state_the_rule(bad):
    with pytest.raises(BadInput, match="6-30 characters"):
        gc.validate_project(bad)


def test_zone_and_node_name_rules():
    assert gc.validate_zone("us-central1-a") == "us-central1-a"
    for bad in ("us-central1", "uscentral1a", "us-central1-a; ls", "US-CENTRAL1-A"):
        with pytest.raises(BadInput, match="us-central1-a"):
            gc.validate_zone(bad)
    assert gc.validate_node_name("jax-course-tpu-01") == "jax-course-tpu-01"
    for bad in ("", "-x", "x-", "Upper", "a" * 64, "has space", "$(reboot)"):
        with pytest.raises(BadInput, match="1-63"):
            gc.validate_node_name(bad)


def test_a_percent_sign_in_the_config_does_not_crash(gcloud_dir):
    (gcloud_dir / "configurations" / "config_work").write_text(
        "[core]\nproject = from-config\n\n[proxy]\npassword = 50%off\n"
    )
    ctx = gc.discover(env={"CLOUDSDK_CONFIG": str(gcloud_dir), "NO_GCE_CHECK": "true"})
    assert ctx.project == "from-config"
    assert gc.read_properties(gcloud_dir, "work")["proxy"]["password"] == "50%off"


def test_windows_reads_gcloud_from_appdata(tmp_path):
    env = {"APPDATA": str(tmp_path / "Roaming"), "HOME": str(tmp_path)}
    assert gc.config_dir(env, windows=True) == tmp_path / "Roaming" / "gcloud"
    assert gc.config_dir(env, windows=False) == tmp_path / ".config" / "gcloud"


def test_the_legacy_gcloud_project_is_the_last_resort(tmp_path):
    env = {"CLOUDSDK_CONFIG": str(tmp_path), "NO_GCE_CHECK": "true", "GCLOUD_PROJECT": "legacy-p"}
    assert gc.discover(env=env).project == "legacy-p"
    env["GOOGLE_CLOUD_PROJECT"] = "newer-p"
    assert gc.discover(env=env).project == "newer-p"


@pytest.mark.parametrize("zone", ["us-central1-ai1a", "us-central1-ai1", "us-south1-ai1b"])
def test_ai_zones_are_zone_names(zone):
    assert gc.validate_zone(zone) == zone


def signed_in_config(tmp_path, in_config: bool = True):
    """What the course's `gcloud auth login` leaves: an active account (in the configuration,
    or only in credentials.db) and no Application Default Credentials."""
    import sqlite3

    cfg = tmp_path / "gcloud"
    (cfg / "configurations").mkdir(parents=True)
    account = "account = learner@example.com\n" if in_config else ""
    (cfg / "configurations" / "config_default").write_text(f"[core]\n{account}")
    with sqlite3.connect(cfg / "credentials.db") as db:  # gcloud's own table
        db.execute("CREATE TABLE credentials (account_id TEXT PRIMARY KEY, value BLOB)")
        db.execute("INSERT INTO credentials VALUES ('learner@example.com', '{}')")
    return {"CLOUDSDK_CONFIG": str(cfg), "NO_GCE_CHECK": "true", "HOME": str(tmp_path)}


@pytest.mark.parametrize("in_config", [True, False])
def test_gcloud_auth_login_alone_is_named_with_the_command_to_type(tmp_path, in_config):
    env = signed_in_config(tmp_path, in_config)
    ctx = gc.discover(env=env)
    line = gc.signed_in_without_adc(ctx)
    assert line is not None and "learner@example.com" in line
    assert line.endswith("gcloud auth application-default login") and "\n" not in line
    (missing, fix) = ctx.problems[0]  # what the wizard's Account step shows
    assert "signed in as learner@example.com" in missing and fix == gc.ADC_LOGIN
    # With the Application Default Credentials made, nothing is said.
    (Path(env["CLOUDSDK_CONFIG"]) / "application_default_credentials.json").write_text("{}")
    assert gc.signed_in_without_adc(gc.discover(env=env)) is None


def test_nobody_signed_in_is_not_called_signed_in(tmp_path):
    env = {"CLOUDSDK_CONFIG": str(tmp_path / "none"), "NO_GCE_CHECK": "true"}
    assert gc.signed_in_without_adc(gc.discover(env=env)) is None


def test_google_auth_default_agrees_that_these_credentials_are_missing(tmp_path):
    """find_credentials stands in for google.auth.default() without its network probe: in the
    same configuration the real call raises DefaultCredentialsError (NO_GCE_CHECK keeps it off
    the network), and finds the ADC file once it is there."""
    import os
    import subprocess
    import sys

    env = {**os.environ, **signed_in_config(tmp_path)}
    env.pop("GOOGLE_APPLICATION_CREDENTIALS", None)
    probe = (
        "import google.auth, google.auth.exceptions\n"
        "try:\n    google.auth.default()\n"
        "except google.auth.exceptions.DefaultCredentialsError:\n    print('missing')\n"
        "else:\n    print('found')\n"
    )

    def real() -> str:
        run = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
        return run.stdout.strip()

    assert real() == "missing" and gc.find_credentials(env) is None
    adc = Path(env["CLOUDSDK_CONFIG"]) / "application_default_credentials.json"
    adc.write_text(
        '{"type": "authorized_user", "client_id": "x", "client_secret": "y", "refresh_token": "z"}'
    )
    assert real() == "found" and gc.find_credentials(env) is not None
