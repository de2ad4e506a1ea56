"""The shell between runs and `tpuwizard ssh` start where the script ran, else in the home."""

from pathlib import Path

from tpuwizard.core.remote.interactive import interactive_command
from tpuwizard.core.remote.sync import WORK_DIR
from tpuwizard.core.remote.transports import LocalTransport, SshTransport


def test_a_sandbox_shell_starts_in_the_work_folder_when_it_exists(tmp_path: Path) -> None:
    transport = LocalTransport([tmp_path / "w0"])
    (tmp_path / "w0").mkdir()
    argv, cwd, env = interactive_command(transport, 0)
    assert argv == ["bash", "-i"] and cwd == str(tmp_path / "w0")  # no work folder: the home
    assert env is not None and env["HOME"] == str(tmp_path / "w0")
    (tmp_path / "w0" / WORK_DIR).mkdir(parents=True)
    assert interactive_command(transport, 0)[1] == str(tmp_path / "w0" / WORK_DIR)
    run = tmp_path / "w0" / ".tpuwizard" / "runs" / "r1"
    run.mkdir(parents=True)
    assert interactive_command(transport, 0, ".tpuwizard/runs/r1")[1] == str(run)


def test_an_ssh_shell_changes_to_the_folder_if_it_is_there_then_logs_in(tmp_path: Path) -> None:
    transport = SshTransport(["10.0.0.2"], "me", tmp_path / "key", tmp_path / "known")
    argv, cwd, env = interactive_command(transport, 0, ".tpuwizard/runs/r 1")
    assert argv[:2] == ["ssh", "-t"] and cwd is None and env is None
    assert argv[-1] == "cd '.tpuwizard/runs/r 1' 2>/dev/null; exec bash -l"
