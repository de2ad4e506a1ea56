import pytest

from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread


@pytest.fixture
def sandbox(tmp_path):
    """Start a sandbox with a fault spec; yields a factory returning (server, TpuCloud). Two
    started with the same ``folder`` share their state, as a restarted sandbox does."""
    servers = []

    def start(faults: str | None = None, delay: float = 0.3, folder: str = "sandbox", **kwargs):
        server = make_server(tmp_path / folder, faults=faults, delay=delay, **kwargs)
        start_in_thread(server)
        servers.append(server)
        cloud = TpuCloud("practice-project", endpoint=server.endpoint, retry_deadline=10)
        return server, cloud

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def sshd(tmp_path):
    from tests.integration.sshd import sshd_binary, start_sshd

    if sshd_binary() is None:
        pytest.skip("openssh-server is not installed (scripts/install-sshd.sh installs it)")
    server = start_sshd(tmp_path / "sshd")
    yield server
    server.process.terminate()
    server.process.wait(timeout=60)


@pytest.fixture
def project(tmp_path, home):
    """A script folder; afterwards every node is deleted and the practice cloud (the lasting
    sandbox a kept node lives in) stopped."""
    from tests.integration.iterate_helpers import stop_lasting_sandbox
    from tests.integration.launch_helpers import teardown_all

    folder = tmp_path / "project"
    folder.mkdir()
    yield folder
    teardown_all(tmp_path)
    stop_lasting_sandbox(home)
