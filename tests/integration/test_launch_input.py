"""What a launch's script gets, end to end in the sandbox: refused before create when its name
would be refused on the worker, and its own arguments after `--` unchanged."""

from pathlib import Path

from tests.integration.launch_helpers import launch, ledger_all_gone, sandbox_is_empty


def test_a_script_named_like_an_option_is_refused_before_anything_is_created(tmp_path, home):
    # It once passed, and the TPU was created, bootstrapped and verified before the upload
    # refused the name ("Something unexpected went wrong").
    (tmp_path / "-x.py").write_text("print('hi')\n")
    code, events, stderr = launch(tmp_path, "--accelerator", "v5litepod-1", "--script", "./-x.py")
    assert code == 2, stderr
    assert events == []  # not even "planned": nothing was asked of the cloud
    assert "Script name '-x.py'" in stderr and "rename the file" in stderr
    assert not (home / "sandbox" / "ledger.jsonl").exists()  # no intent: no create was near
    assert sandbox_is_empty(home)


def test_arguments_after_the_separator_reach_the_script_unchanged(tmp_path, home):
    target = tmp_path / "experiments" / "argv.py"
    target.parent.mkdir()
    target.write_text("import sys\nprint('args', sys.argv[1:])\n")
    (tmp_path / "train.py").symlink_to(target)  # a link: its target's content runs
    script_args = ["--lr", "3e-4", "--help", "--script", "x", "two words"]
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", "--script", "train.py", "--", *script_args
    )
    assert code == 0, stderr
    lines = [e["text"] for e in events if e["event"] == "script_line"]
    assert f"args {script_args!r}" in lines, lines
    assert sandbox_is_empty(home) and ledger_all_gone(home)
    assert Path(tmp_path / "train.py").is_symlink()  # nothing here was changed
