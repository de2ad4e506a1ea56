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


def test_a_script_named_like_the_verifier_is_kept_and_the_export_has_its_own_folder(
    here: Path,
) -> None:
    """F7: export --script s1/tpu_verify.py replaced the user's script with the verifier; now
    the verifier goes into s1/export-xpk/ (issue 55.9), never beside the script."""
    (here / "s1").mkdir()
    (here / "s1" / "tpu_verify.py").write_text(USER)
    result = export("--script", "s1/tpu_verify.py")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert (here / "s1" / "tpu_verify.py").read_text() == USER
    assert sorted(p.name for p in (here / "s1").iterdir()) == ["export-xpk", "tpu_verify.py"]
    assert sorted(p.name for p in (here / "s1" / "export-xpk").iterdir()) == [
        "tpu_verify.py",
        "tpuwizard-run-xpk.sh",
        "tpuwizard_job.sh",
    ]


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_a_hard_link_to_the_script_in_the_exports_folder_is_refused(
    here: Path, force: list
) -> None:
    """F7: export --out train.py made train.py the xpk plan; the same file under the export's
    folder (a hard link) is still the script."""
    (here / "export-xpk").mkdir()
    os.link(here / "train.py", here / "export-xpk" / "tpu_verify.py")
    before = tree(here)
    message = refused(export("--script", "train.py", *force), "is your script")
    assert "Rename your script" in message
    assert tree(here) == before


@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.parametrize("place", ["tpuwizard_job.sh", "tpu_verify.py", "tpuwizard-run-xpk.sh"])
def test_a_link_is_never_written_through_nor_replaced(here: Path, force: list, place: str) -> None:
    """F7: a link s2/tpuwizard_job.sh -> ../victim.txt made export overwrite victim.txt."""
    (here / "victim.txt").write_text("victim\n")
    (here / "s2" / "out").mkdir(parents=True)
    (here / "s2" / "train.py").write_text(USER)
    (here / "s2" / "out" / place).symlink_to("../../victim.txt")
    before = tree(here)
    result = export("--script", "s2/train.py", "--out", "s2/out", *force)
    message = refused(result, "is a symbolic link")
    assert "../../victim.txt" in message and "Remove the link" in message
    assert tree(here) == before  # the victim, the link, and no other file written


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_an_exports_folder_that_is_a_link_is_refused(here: Path, force: list) -> None:
    (here / "elsewhere").mkdir()
    (here / "export-xpk").symlink_to("elsewhere")
    before = tree(here)
    message = refused(export("--script", "train.py", *force), "export-xpk is a symbolic link")
    assert "Remove the link, or choose another --out" in message
    assert tree(here) == before


def test_a_file_of_the_users_is_kept_unless_force(here: Path) -> None:
    (here / "mine").mkdir()
    (here / "mine" / "tpuwizard-run-xpk.sh").write_text("my own notes\n")
    before = tree(here)
    message = refused(export("--script", "train.py", "--out", "mine"), "did not write it")
    assert "choose another --out, or add --force to overwrite it" in message
    assert tree(here) == before
    result = export("--script", "train.py", "--out", "mine", "--force")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert (here / "mine" / "tpuwizard-run-xpk.sh").read_text().startswith("# xpk ")
    assert (here / "train.py").read_text() == USER


def test_a_verifier_or_job_file_of_the_users_in_the_folder_is_kept_unless_force(
    here: Path,
) -> None:
    (here / "export-xpk").mkdir()
    (here / "export-xpk" / "tpuwizard_job.sh").write_text("echo my own job\n")
    before = tree(here)
    message = refused(export("--script", "train.py"), "tpuwizard_job.sh exists")
    assert "choose another --out" in message and "--force" in message
    assert tree(here) == before
    assert export("--script", "train.py", "--force").exit_code == 0  # type: ignore[attr-defined]
    assert written_by_tpuwizard(here / "export-xpk" / "tpuwizard_job.sh")


def test_a_second_export_rewrites_the_files_the_first_wrote(here: Path) -> None:
    files = {"xpk": "tpuwizard-run-xpk.sh", "jobset": "tpuwizard-run.jobset.yaml"}
    for target in ("xpk", "jobset", "skypilot"):
        text = here / "plan" / files.get(target, "tpuwizard-run.sky.yaml")
        first = export("--to", target, "--script", "train.py", "--out", "plan")
        assert first.exit_code == 0, first.output  # type: ignore[attr-defined]
        assert written_by_tpuwizard(text)
        again = export("--to", target, "--script", "train.py", "--out", "plan", "--cluster", "c-2")
        assert again.exit_code == 0, again.output  # type: ignore[attr-defined]
        assert "c-2" in text.read_text() or target == "skypilot"
    assert written_by_tpuwizard(here / "plan" / "tpu_verify.py")
    assert written_by_tpuwizard(here / "plan" / "tpuwizard_job.sh")
    assert sorted(p.name for p in here.iterdir()) == ["plan", "train.py"]
    assert (here / "train.py").read_text() == USER
    assert not [p for p in (here / "plan").iterdir() if p.name.startswith(".tpuwizard-export-")]


def test_a_non_utf8_argument_leaves_every_file_as_it_was(here: Path) -> None:
    """F7: `-- $'e\\x9bf'` crashed (exit 3) and left tpuwizard_job.sh empty."""
    assert export("--script", "train.py").exit_code == 0  # type: ignore[attr-defined]
    before = tree(here)
    result = export("--to", "jobset", "--script", "train.py", "--out", "js", "--", "e\udc9bf")
    refused(result, "not UTF-8 text")
    assert tree(here) == before


def test_a_disk_that_fails_part_way_leaves_every_file_as_it_was(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert export("--script", "train.py", "--out", "plan").exit_code == 0  # type: ignore[attr-defined]
    before = tree(here)
    real, calls = os.fsync, []

    def full(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:  # the second file's flush: the first is staged already
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(os, "fsync", full)
    result = export("--script", "train.py", "--out", "plan", "--max-restarts", "1")
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
    message = refused(export("--script", "train.py", "--out", "plan"), "Cannot write")
    assert "Written before it: plan/tpuwizard-run-xpk.sh" in message  # the text is renamed first
    assert not [p for p in (here / "plan").iterdir() if p.name.startswith(".tpuwizard-export-")]


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
    assert export("--script", "train.py", "--out", "plan").exit_code == 0  # type: ignore[attr-defined]
    old = tree(here)
    args = ["export", "--accelerator", "v6e-16", "--script", "train.py", "--out", "plan"]
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
    assert stage.startswith("plan/.tpuwizard-export-")
    assert now.pop(stage) == old["plan/tpu_verify.py"]
    changed = [name for name in now if now[name] != old[name]]
    assert changed == ["plan/tpuwizard-run-xpk.sh", "plan/tpuwizard_job.sh"]
    assert all(b"v6e-16" in now[name] for name in changed)
    assert all(now[name] for name in now)
    # The next export clears a stage a killed one left (one a minute old: not another's now).
    assert export("--script", "train.py", "--out", "plan").exit_code == 0  # type: ignore[attr-defined]
    assert (here / stage).exists()  # too recent: it may be another export's, at work
    os.utime(here / stage, (0, 0))
    assert export("--script", "train.py", "--out", "plan").exit_code == 0  # type: ignore[attr-defined]
    assert tree(here) == old


def test_a_fifo_or_a_folder_in_the_way_is_refused_without_waiting(here: Path) -> None:
    (here / "o1").mkdir()
    os.mkfifo(here / "o1" / "tpuwizard-run-xpk.sh")
    (here / "o2" / "tpuwizard-run-xpk.sh").mkdir(parents=True)
    for out, words in [("o1", "is not a regular file"), ("o2", "is a folder")]:
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
    assert sorted(str(p.relative_to(here)) for p in here.rglob("*")) == [
        "o1",
        "o1/tpuwizard-run-xpk.sh",
        "o2",
        "o2/tpuwizard-run-xpk.sh",
        "train.py",
    ]


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
    with pytest.raises(BadInput, match="is where tpuwizard writes the first: fix two"):
        write_files(outputs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]


def test_the_wizards_take_to_gke_keeps_a_file_of_the_users(tmp_path: Path) -> None:
    """Review's F6 writes NAME-xpk.sh into export-xpk/ in the script's folder: a file of the
    user's there is named and kept (the wizard has no --force)."""
    from tpuwizard.core.launch.plan.parts import Workload
    from tpuwizard.tui.screens.gke_export import write_for
    from tpuwizard.tui.state import WizardState

    script = tmp_path / "train.py"
    script.write_text(USER)
    (tmp_path / "export-xpk").mkdir()
    (tmp_path / "export-xpk" / "tpuwizard-run-xpk.sh").write_text("my notes\n")
    state = WizardState(practice=True, zone="us-central1-a", workload=Workload(script=script))
    before = tree(tmp_path)
    with pytest.raises(BadInput) as err:
        write_for(state, "xpk", "v5litepod-16", "1")
    assert "change the Name on Review" in str(err.value) and "--force" not in str(err.value)
    assert tree(tmp_path) == before
