"""The shell between runs and `tpuwizard ssh` start where the script ran (else in the home),
with the script's venv active and its variables set, `.venv` there pointing at the venv, and a
banner naming all three."""

import subprocess
import sys
from pathlib import Path

from tpuwizard.core.remote.bootstrap import VENV
from tpuwizard.core.remote.interactive import SHELL_RC, interactive_command, shell_rc
from tpuwizard.core.remote.sync import WORK_DIR
from tpuwizard.core.remote.transports import GcloudTransport, LocalTransport, SshTransport

SCRIPT_ENV = {"COURSE_EXPECT_PLATFORM": "cpu", "JAX_PLATFORMS": "cpu"}


def test_a_sandbox_shell_starts_in_the_work_folder_when_it_exists(tmp_path: Path) -> None:
    transport = LocalTransport([tmp_path / "w0"])
    (tmp_path / "w0").mkdir()
    argv, cwd, env = interactive_command(transport, 0)
    assert argv == ["bash", "--rcfile", str(tmp_path / "w0" / SHELL_RC), "-i"]
    assert cwd == str(tmp_path / "w0")  # no work folder: the home
    assert env is not None and env["HOME"] == str(tmp_path / "w0")
    (tmp_path / "w0" / WORK_DIR).mkdir(parents=True)
    assert interactive_command(transport, 0)[1] == str(tmp_path / "w0" / WORK_DIR)
    run = tmp_path / "w0" / ".tpuwizard" / "runs" / "r1"
    run.mkdir(parents=True)
    assert interactive_command(transport, 0, ".tpuwizard/runs/r1")[1] == str(run)


def test_an_ssh_shell_writes_its_rc_file_then_opens_bash_with_it(tmp_path: Path) -> None:
    sent: dict[str, bytes] = {}

    class Recording(SshTransport):
        def upload(self, worker: int, data: bytes, remote_path: str, mode: str = "600") -> None:
            sent[remote_path] = data

    transport = Recording(["10.0.0.2"], "me", tmp_path / "key", tmp_path / "known")
    argv, cwd, env = interactive_command(transport, 0, ".tpuwizard/runs/r 1", SCRIPT_ENV)
    assert argv[:2] == ["ssh", "-t"] and cwd is None and env is None
    assert argv[-1] == f"exec bash --rcfile {SHELL_RC} -i"
    rc = sent[SHELL_RC].decode()
    assert "cd \"$HOME\"/'.tpuwizard/runs/r 1'" in rc
    assert "export COURSE_EXPECT_PLATFORM=cpu" in rc and "export JAX_PLATFORMS=cpu" in rc


def test_a_gcloud_shell_asks_ssh_for_a_terminal_and_opens_bash_with_the_rc_file() -> None:
    sent: list[str] = []

    class Recording(GcloudTransport):
        def upload(self, worker: int, data: bytes, remote_path: str, mode: str = "600") -> None:
            sent.append(remote_path)

    transport = Recording("node-1", "us-central1-a", "proj", workers=1)
    argv, cwd, env = interactive_command(transport, 0, env=SCRIPT_ENV)
    assert sent == [SHELL_RC] and cwd is None and env is None
    assert f"--command=exec bash --rcfile {SHELL_RC} -i" in argv and argv[-2:] == ["--", "-t"]


def test_the_shell_has_the_scripts_venv_variables_and_a_dot_venv_link(tmp_path: Path) -> None:
    """The rc file run by bash as the Shell runs it: python is the venv's, the variables are
    set, `.venv/bin/python` works in the folder, and the banner names all three."""
    home = tmp_path / "w0"
    (home / WORK_DIR).mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(home / VENV)], check=True, timeout=120
    )
    transport = LocalTransport([home])
    argv, cwd, env = interactive_command(transport, 0, env=SCRIPT_ENV)
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        input='echo "py=$(command -v python)"\n'
        '.venv/bin/python -c "import sys; print(sys.prefix)"\n'
        'echo "expect=$COURSE_EXPECT_PLATFORM jax=$JAX_PLATFORMS"\nexit\n',
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = done.stdout
    assert f"py={home / VENV}/bin/python" in out
    # .venv/bin/python runs: its prefix is the folder's .venv, which is the venv.
    assert str(home / WORK_DIR / ".venv") in out.splitlines()
    assert (home / WORK_DIR / ".venv").resolve() == (home / VENV).resolve()
    assert "expect=cpu jax=cpu" in out
    banner = next(line for line in out.splitlines() if line.startswith("tpuwizard shell:"))
    assert str(home / WORK_DIR) in banner and str(home / VENV) in banner
    assert "COURSE_EXPECT_PLATFORM=cpu JAX_PLATFORMS=cpu" in banner
    assert (home / WORK_DIR / ".venv").is_symlink()
    assert "COURSE_EXPECT_PLATFORM" in shell_rc(WORK_DIR, SCRIPT_ENV)
