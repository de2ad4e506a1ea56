import os
import signal

import pytest

from tests.tui.terminal import Terminal
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


@pytest.fixture
def terminals():
    """Start commands on pseudo-terminals (tests/tui/terminal.py); none outlives the test."""
    opened: list[Terminal] = []

    def start(argv: list[str], **kwargs) -> Terminal:
        opened.append(Terminal(argv, **kwargs))
        return opened[-1]

    yield start
    for terminal in opened:  # a test that failed early: no wizard outlives it
        if terminal.proc.poll() is None:
            os.killpg(terminal.proc.pid, signal.SIGKILL)
            terminal.proc.wait()
        if terminal._open.is_set():
            terminal.hang_up()
