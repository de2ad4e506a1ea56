"""Where ``tpuwizard export`` writes (issue 48, F7): never over the script, through a link, over
a file it did not write (unless --force) or two of its files to one place; all files or none,
each by a temporary file renamed over its name, so a failure or a kill leaves no empty file."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import clean_env
from tpuwizard.cli import main
from tpuwizard.core.errors import BadInput
from tpuwizard.core.handover.files import Output, write_files, written_by_tpuwizard

USER = 'print("USER SCRIPT")\n'


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(USER)
    return tmp_path


def export(*args: str) -> object:
    return CliRunner().invoke(main, ["export", "--accelerator", "v5litepod-16", *args])


def tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: a file's bytes, a link's target."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[name] = path.read_bytes()
    return found


def refused(result: object, words: str) -> str:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    message = " ".join(result.output.split())  # type: ignore[attr-defined]
    assert words in message, message
    assert "Traceback" not in message
    return message


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_a_script_named_like_the_verifier_is_refused_and_kept(here: Path, force: list) -> None:
    """F7: export --script s1/tpu_verify.py replaced the user's script with the verifier."""
    (here / "s1").mkdir()
    (here / "s1" / "tpu_verify.py").write_text(USER)
    before = tree(here)
    message = refused(
        export("--script", "s1/tpu_verify.py", "--out", "s1/x.sh", *force), "is your script"
    )
    assert "Rename your script" in message
    assert tree(here) == before


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_out_naming_the_script_or_a_hard_link_to_it_is_refused(here: Path, force: list) -> None:
    """F7: export --script train.py --out train.py made train.py the xpk plan."""
    os.link(here / "train.py", here / "same.py")
    before = tree(here)
    for out in ("train.py", "./train.py", "same.py"):
        message = refused(export("--script", "train.py", "--out", out, *force), "is your script")
        assert "choose another --out" in message.lower()
    assert tree(here) == before


@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.parametrize("place", ["tpuwizard_job.sh", "tpu_verify.py", "out.sh"])
def test_a_link_is_never_written_through_nor_replaced(here: Path, force: list, place: str) -> None:
    """F7: a link s2/tpuwizard_job.sh -> ../victim.txt made export overwrite victim.txt."""
    (here / "victim.txt").write_text("victim\n")
    (here / "s2").mkdir()
    (here / "s2" / "train.py").write_text(USER)
    (here / "s2" / place).symlink_to("../victim.txt")
    before = tree(here)
    result = export("--script", "s2/train.py", "--out", "s2/out.sh", *force)
    message = refused(result, "is a symbolic link")
    assert "../victim.txt" in message and "Remove the link" in message
    assert tree(here) == before  # the victim, the link, and no other file written


@pytest.mark.parametrize("out", ["tpu_verify.py", "./tpuwizard_job.sh", "sub/../tpu_verify.py"])
def test_out_on_a_file_export_writes_beside_the_script_is_refused(here: Path, out: str) -> None:
    (here / "sub").mkdir()
    before = tree(here)
    message = refused(
        export("--script", "train.py", "--out", out, "--force"), "is where tpuwizard writes"
    )
    assert "choose another --out" in message
    assert tree(here) == before


def test_a_file_of_the_users_is_kept_unless_force(here: Path) -> None:
    (here / "mine.sh").write_text("my own notes\n")
    before = tree(here)
    message = refused(export("--script", "train.py", "--out", "mine.sh"), "did not write it")
    assert "add --force to overwrite it" in message
    assert tree(here) == before
    result = export("--script", "train.py", "--out", "mine.sh", "--force")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert (here / "mine.sh").read_text().startswith("# xpk ")
    assert (here / "train.py").read_text() == USER


def test_a_verifier_or_job_file_of_the_users_beside_the_script_is_kept_unless_force(
    here: Path,
) -> None:
    (here / "tpuwizard_job.sh").write_text("echo my own job\n")
    before = tree(here)
    message = refused(export("--script", "train.py"), "tpuwizard_job.sh exists")
    assert "put your script in a folder of its own" in message and "--force" in message
    assert tree(here) == before
    assert export("--script", "train.py", "--force").exit_code == 0  # type: ignore[attr-defined]
    assert written_by_tpuwizard(here / "tpuwizard_job.sh")


def test_a_second_export_rewrites_the_files_the_first_wrote(here: Path) -> None:
    for target, out in [("xpk", "plan.sh"), ("jobset", "plan.yaml"), ("skypilot", "sky.yaml")]:
        first = export("--to", target, "--script", "train.py", "--out", out)
        assert first.exit_code == 0, first.output  # type: ignore[attr-defined]
        assert written_by_tpuwizard(here / out)
        again = export("--to", target, "--script", "train.py", "--out", out, "--name", "run-2")
        assert again.exit_code == 0, again.output  # type: ignore[attr-defined]
        assert "run-2" in (here / out).read_text()
    assert written_by_tpuwizard(here / "tpu_verify.py")
    assert written_by_tpuwizard(here / "tpuwizard_job.sh")
    assert (here / "train.py").read_text() == USER
    assert not [p for p in here.iterdir() if p.name.startswith(".tpuwizard-export-")]


def test_a_non_utf8_argument_leaves_every_file_as_it_was(here: Path) -> None:
    """F7: `-- $'e\\x9bf'` crashed (exit 3) and left tpuwizard_job.sh empty."""
    assert export("--script", "train.py").exit_code == 0  # type: ignore[attr-defined]
    before = tree(here)
    result = export("--to", "jobset", "--script", "train.py", "--out", "js.yaml", "--", "e\udc9bf")
    refused(result, "not UTF-8 text")
    assert tree(here) == before


def test_a_disk_that_fails_part_way_leaves_every_file_as_it_was(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert export("--script", "train.py", "--out", "plan.sh").exit_code == 0  # type: ignore[attr-defined]
    before = tree(here)
    real, calls = os.fsync, []

    def full(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:  # the second file's flush: the first is staged already
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(os, "fsync", full)
    result = export("--script", "train.py", "--out", "plan.sh", "--max-restarts", "1")
    message = refused(result, "No space left on device")
    assert "Nothing was written" in message
    assert tree(here) == before  # no stage left behind either


def test_a_rename_that_fails_says_what_was_written_before_it(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real, calls = os.replace, []

    def refuse_second(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(errno.EPERM, os.strerror(errno.EPERM))
        real(src, dst)

    monkeypatch.setattr(os, "replace", refuse_second)
    message = refused(export("--script", "train.py", "--out", "plan.sh"), "Cannot write")
    assert "Written before it: plan.sh" in message  # --out is renamed first
    assert not [p for p in here.iterdir() if p.name.startswith(".tpuwizard-export-")]


KILLED = """
import os, signal, sys
from tpuwizard.cli import main
real, calls = os.replace, []
def replace(src, dst):
    real(src, dst)
    calls.append(dst)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
os.replace = replace
sys.argv = ["tpuwizard", *sys.argv[1:]]
main()
"""


def test_an_export_killed_between_renames_leaves_only_whole_files(here: Path) -> None:
    """A SIGKILL after two of three renames: each name holds a whole file, old or new."""
    assert export("--script", "train.py", "--out", "plan.sh").exit_code == 0  # type: ignore[attr-defined]
    old = tree(here)
    args = ["export", "--accelerator", "v6e-16", "--script", "train.py", "--out", "plan.sh"]
    run = subprocess.run(
        [sys.executable, "-c", KILLED, *args],
        cwd=here,
        capture_output=True,
        timeout=120,
        env=clean_env(TPUWIZARD_HOME=str(here.parent / "home")),
    )
    assert run.returncode == -9, run.stderr
    now = tree(here)
    (stage,) = set(now) - set(old)  # the third file, staged whole and never renamed
    assert stage.startswith(".tpuwizard-export-") and now.pop(stage) == old["tpu_verify.py"]
    changed = [name for name in now if now[name] != old[name]]
    assert changed == ["plan.sh", "tpuwizard_job.sh"]
    assert b"v6e-16" in now["plan.sh"] and b"v6e-16" in now["tpuwizard_job.sh"]
    assert all(now[name] for name in now)
    # The next export clears a stage a killed one left (one a minute old: not another's now).
    assert export("--script", "train.py", "--out", "plan.sh").exit_code == 0  # type: ignore[attr-defined]
    assert (here / stage).exists()  # too recent: it may be another export's, at work
    os.utime(here / stage, (0, 0))
    assert export("--script", "train.py", "--out", "plan.sh").exit_code == 0  # type: ignore[attr-defined]
    assert tree(here) == old


def test_a_fifo_or_a_folder_in_the_way_is_refused_without_waiting(here: Path) -> None:
    os.mkfifo(here / "pipe.sh")
    (here / "folder.sh").mkdir()
    for out, words in [("pipe.sh", "is not a regular file"), ("folder.sh", "is a folder")]:
        args = ["export", "--accelerator", "v6e-16", "--script", "train.py", "--out", out]
        run = subprocess.run(
            [sys.executable, "-m", "tpuwizard", *args, "--force"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=120,  # a FIFO opened for reading would wait here for a writer
            env=clean_env(TPUWIZARD_HOME=str(here.parent / "home")),
        )
        assert run.returncode == 2 and words in run.stderr, run.stderr
    assert sorted(p.name for p in here.iterdir()) == ["folder.sh", "pipe.sh", "train.py"]


def test_written_by_tpuwizard_reads_only_the_head_of_a_regular_file(tmp_path: Path) -> None:
    marked = tmp_path / "a.sh"
    marked.write_text("# title\n#\n# Written by tpuwizard export; nothing was created\n")
    late = tmp_path / "b.sh"
    late.write_text("x\n" * 20 + "# Written by tpuwizard export\n")  # past the head: not ours
    (tmp_path / "link.sh").symlink_to(marked)
    assert written_by_tpuwizard(marked)
    assert not written_by_tpuwizard(late)
    assert not written_by_tpuwizard(tmp_path / "link.sh")
    assert not written_by_tpuwizard(tmp_path / "absent.sh")


def test_two_outputs_on_one_place_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    outputs = [
        Output(tmp_path / "a.txt", "one\n", "the first", "fix one"),
        Output(tmp_path / "sub" / ".." / "a.txt", "two\n", "the second", "fix two", chosen=True),
    ]
    with pytest.raises(BadInput, match="is where tpuwizard writes the first beside your script"):
        write_files(outputs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]


def test_the_wizards_take_to_gke_keeps_a_file_of_the_users(tmp_path: Path) -> None:
    """Review's F6 writes NAME-xpk.sh beside the script: a file of the user's there is named
    and kept (the wizard has no --force)."""
    from tpuwizard.tui.screens.gke_export import write_for
    from tpuwizard.tui.state import WizardState

    script = tmp_path / "train.py"
    script.write_text(USER)
    (tmp_path / "tpuwizard-run-xpk.sh").write_text("my notes\n")
    state = WizardState(practice=True, zone="us-central1-a", route="vm", script=script)
    before = tree(tmp_path)
    with pytest.raises(BadInput) as err:
        write_for(state, "xpk", "v5litepod-16", "1")
    assert "change the Name on Review" in str(err.value) and "--force" not in str(err.value)
    assert tree(tmp_path) == before
