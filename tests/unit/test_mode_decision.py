"""Session.decide: the one rule for practice or real, and the project that goes with it."""

import json

import pytest

from tpuwizard.core.cloud import gcloud_config
from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV, GOOGLE_ENDPOINT
from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT
from tpuwizard.session.session import Session

SANDBOX = "http://127.0.0.1:9"  # nothing listens: nothing here may call it


def context(credentials: bool, project: str | None = "my-real-project-1", flag: bool = False):
    return gcloud_config.GcloudContext(
        project=project,
        project_source="flag" if flag else "gcloud config 'default'",
        credentials="file adc.json" if credentials else None,
    )


@pytest.mark.parametrize(
    "sandbox, endpoint, credentials, practice, why",
    [
        (True, None, True, True, "asked"),
        (False, SANDBOX, True, True, "endpoint"),  # `sandbox serve`'s export, with credentials
        (False, None, False, True, "no credentials"),
        (False, GOOGLE_ENDPOINT, True, False, "real"),
        (False, None, True, False, "real"),
    ],
)
def test_one_rule(monkeypatch, sandbox, endpoint, credentials, practice, why):
    if endpoint:
        monkeypatch.setenv(ENDPOINT_ENV, endpoint)
    else:
        monkeypatch.delenv(ENDPOINT_ENV, raising=False)
    mode = Session.decide(sandbox, context(credentials))
    assert (mode.practice, mode.why) == (practice, why)
    # Practice never takes gcloud's project (a real one): its own, unless one was named.
    assert mode.project == (PRACTICE_PROJECT if practice else "my-real-project-1")


def test_a_named_project_stands_in_practice(monkeypatch):
    monkeypatch.delenv(ENDPOINT_ENV, raising=False)
    assert Session.decide(True, context(True, "named-project", flag=True)).project == (
        "named-project"
    )


def test_real_mode_is_refused_while_pointed_at_a_sandbox_or_without_credentials(monkeypatch):
    monkeypatch.setenv(ENDPOINT_ENV, SANDBOX)
    refusal = Session.decide(False, context(True)).real_refusal
    assert refusal is not None and ENDPOINT_ENV in refusal and SANDBOX in refusal
    monkeypatch.delenv(ENDPOINT_ENV)
    assert "gcloud auth application-default login" in (
        Session.decide(False, context(False)).real_refusal or ""
    )
    assert Session.decide(True, context(True)).real_refusal is None  # practice by choice only


def test_real_means_google_even_after_a_practice_sandbox_exported_its_address(
    tmp_path, monkeypatch
):
    # The wizard's practice sandbox exports its address; switching to real must not keep it.
    adc = tmp_path / "adc.json"
    dummy = {"client_id": "x", "client_secret": "x", "refresh_token": "x"}
    adc.write_text(json.dumps({"type": "authorized_user", **dummy}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv(ENDPOINT_ENV, SANDBOX)
    session = Session(True, None)
    session.switch(False, "my-real-project-1")
    assert session.cloud.endpoint == GOOGLE_ENDPOINT


@pytest.mark.parametrize("sandbox", [False, True])
def test_a_command_says_first_whether_it_is_real_and_which_project_bills(
    tmp_path, monkeypatch, capsys, sandbox
):
    from tpuwizard.commands.common import open_session

    adc = tmp_path / "adc.json"
    dummy = {"client_id": "x", "client_secret": "x", "refresh_token": "x"}
    adc.write_text(json.dumps({"type": "authorized_user", **dummy}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    open_session("my-real-project-1", sandbox)  # no cloud is called: the session is only made
    (first, *_) = capsys.readouterr().err.splitlines()
    if sandbox:
        assert first.startswith("[practice] Using the local sandbox because practice was asked")
    else:
        assert first.startswith("[real] Using Google Cloud, project my-real-project-1")
        assert "billed to that project's billing account" in first
