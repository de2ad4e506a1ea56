import os

import pytest

from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV


@pytest.fixture(autouse=True)
def _no_credentials(tmp_path, monkeypatch):
    """No Google credentials, so the wizard chooses practice mode; a quick sandbox."""
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("TPUWIZARD_SANDBOX_DELAY", "0.5")
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    yield
    os.environ.pop(ENDPOINT_ENV, None)  # the in-process sandbox exported its address
