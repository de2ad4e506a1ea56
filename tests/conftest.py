import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch):
    """Every test gets its own state directory and never probes the GCE metadata server."""
    monkeypatch.setenv("TPUWIZARD_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    monkeypatch.delenv("COURSE_EXPECT_PLATFORM", raising=False)
    yield
    # A practice node kept or left running lives on in a lasting sandbox, as it would at Google;
    # a test's one ends with the test, and so do its nodes' jobs: none outlives the suite.
    from tests.integration.iterate_helpers import end_practice

    end_practice(tmp_path / "state")


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
