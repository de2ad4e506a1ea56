"""Bad input on the command line: exit 2, a message naming what was wrong, and nothing made.

"Nothing made" is checked on disk: no ledger (an intent is written before every create) and no
sandbox state (the practice cloud is started on the first call to it).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from tpuwizard.cli import main

LAUNCH = ["launch", "--sandbox", "--accelerator", "v5litepod-1", "--zone", "us-central1-a"]
UP = ["up", "--sandbox", "--accelerator", "v5litepod-1", "--zone", "us-central1-a"]


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    """A working folder holding a good script (runs/ would be made here)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    return tmp_path


@pytest.fixture(autouse=True)
def _no_sandbox(monkeypatch) -> None:
    """Were a bad value let through, a sandbox would start (and `sandbox serve` serve forever):
    fail instead of hanging."""

    def made(*args: object, **kwargs: object) -> None:
        raise AssertionError("a sandbox was started")

    monkeypatch.setattr("tpuwizard.sandbox.server.make_server", made)
    monkeypatch.setattr("subprocess.Popen", made)  # the lasting sandbox of `up`


def refused(home: Path, *args: str) -> str:
    """Run the command; assert exit 2, no traceback, nothing made; return its stderr."""
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output and "unexpected" not in result.output
    assert not (home / "ledger.jsonl").exists() and not (home / "sandbox").exists()
    return " ".join(result.stderr.split())  # click folds long messages


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([*LAUNCH, "--ready-timeout", value], "not a number of seconds above 0 and at most 604800")
        for value in ("nan", "inf", "-1", "0", "1e9")
    ]
    + [([*LAUNCH, "--max-run", v], "not a finite number of minutes") for v in ("nan", "inf")]
    + [([*LAUNCH, "--max-run", "-1"], "deadline must be between 0.1 minutes and 7 days")]
    + [
        ([*UP, "--ready-timeout", value], "not a number of seconds above 0 and at most 604800")
        for value in ("nan", "inf", "-5")
    ]
    + [([*UP, "--idle", v], "not a finite number of minutes") for v in ("nan", "-inf")]
    + [([*UP, "--idle", "-1"], "idle time must be between 0.1 minutes and 7 days")]
    + [([*UP, "--max-run", "nan"], "not a finite number of minutes")]
    + [
        (["watch", "--sandbox", "--debounce", v, "train.py"], "seconds from 0 to 10")
        for v in ("nan", "inf", "-1", "11")
    ]
    + [
        (["sandbox", "serve", "--delay", v], "not a number of seconds of 0 or more")
        for v in ("nan", "inf", "-1", "abc")
    ],
)
def test_every_float_option_refuses_nan_inf_and_out_of_range_values(home, here, args, words):
    stderr = refused(home, *args)
    assert words in stderr, stderr


FULL_WIDTH_ONE = "\uff11"  # "１": Python's float() and int() read it as 1
ASCII_ONLY = "type it with the digits 0-9 (it holds characters outside ASCII"
FIT = ["fit", "48", "--sandbox"]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        ([*LAUNCH, "--max-run", FULL_WIDTH_ONE], "--max-run"),
        ([*LAUNCH, "--stall-timeout", FULL_WIDTH_ONE], "--stall-timeout"),
        ([*LAUNCH, "--ready-timeout", "1" + FULL_WIDTH_ONE], "--ready-timeout"),
        ([*LAUNCH, "--join-timeout", FULL_WIDTH_ONE], "--join-timeout"),
        ([*LAUNCH, "--heartbeat-timeout", FULL_WIDTH_ONE], "--heartbeat-timeout"),
        ([*LAUNCH, "--budget", FULL_WIDTH_ONE], "--budget"),
        ([*LAUNCH, "--max-restarts", "\u0661"], "--max-restarts"),  # Arabic-Indic one
        ([*LAUNCH, "--queue-wait", FULL_WIDTH_ONE], "--queue-wait"),
        ([*UP, "--idle", FULL_WIDTH_ONE], "--idle"),
        (["ssh", "--sandbox", "--worker", FULL_WIDTH_ONE], "--worker"),
        (["watch", "--sandbox", "--debounce", FULL_WIDTH_ONE, "train.py"], "--debounce"),
        ([*FIT, "--max-chips", FULL_WIDTH_ONE], "--max-chips"),
        ([*FIT, "--usable", "0." + FULL_WIDTH_ONE], "--usable"),
        (["sandbox", "serve", "--port", FULL_WIDTH_ONE], "--port"),
        (["sandbox", "serve", "--delay", FULL_WIDTH_ONE], "--delay"),
        (["verify", "--devices", FULL_WIDTH_ONE], "--devices"),
        (["export", "--accelerator", "v5litepod-16", "--slices", FULL_WIDTH_ONE], "--slices"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_every_numeric_option_refuses_digits_outside_ascii(home, here, args, option):
    stderr = refused(home, *args)
    assert f"Invalid value for '{option}'" in stderr and ASCII_ONLY in stderr, stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([*FIT[:1], "４８GiB", "--sandbox"], "'４８GiB' is not a size"),
        (["fit", "--params", "７B", "--sandbox"], "'７B' is not a parameter count"),
        ([*LAUNCH, "--checkpoints", "c", "--checkpoint-every", "５m"], "is not a duration"),
    ],
)
def test_sizes_counts_and_durations_refuse_full_width_digits(home, here, args, words):
    assert words in refused(home, *args)


@pytest.mark.parametrize(
    "command",
    [
        ["status", "--sandbox"],
        ["teardown", "--sandbox", "--all", "--yes"],
        LAUNCH,
        UP,
        ["run", "--sandbox"],  # the project comes before SCRIPT: SCRIPT is added below
        ["watch", "--sandbox"],
    ],
    ids=lambda c: c[0],
)
@pytest.mark.parametrize(
    ("project", "shown"),
    [
        ("$(touch x)", "'$(touch x)'"),
        ("my-project\nrm -rf ~", "'my-project\\nrm -rf ~'"),
        ("it's-mine", "'it's-mine'"),
        ("a" * 300, "'" + "a" * 40 + "... (300 characters)'"),
    ],
    ids=["command", "newline", "quote", "300 characters"],
)
def test_a_bad_project_is_refused_by_every_command_before_anything(
    home, here, command, project, shown
):
    script = ["train.py"] if command[0] in ("run", "watch") else []
    stderr = refused(home, *command, "--project", project, *script)
    assert f"{shown} is not a valid project id" in stderr
    assert "6-30 characters of lower-case letters, digits and hyphens" in stderr
    assert not (here / "x").exists()  # nothing ran it


@pytest.mark.parametrize("value", ["abc", "nan", "-1", "inf"])
@pytest.mark.parametrize("command", [LAUNCH, UP], ids=["launch", "up"])
def test_a_bad_sandbox_delay_is_said_before_the_practice_cloud_starts(
    home, here, monkeypatch, command, value
):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_DELAY", value)
    stderr = refused(home, *command)
    assert f"TPUWIZARD_SANDBOX_DELAY='{value}' is not a number of seconds of 0 or more" in stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "abc"])
@pytest.mark.parametrize("command", [LAUNCH, UP], ids=["launch", "up"])
def test_a_bad_sandbox_linger_is_said_before_the_practice_cloud_starts(
    home, here, monkeypatch, command, value
):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_LINGER", value)
    stderr = refused(home, *command)
    assert f"TPUWIZARD_SANDBOX_LINGER='{value}' is not a number of seconds of 0 or more" in stderr
    assert not (home / "sandbox" / "server.json").exists()  # no practice cloud was left running


@pytest.mark.parametrize("setting", ["TPUWIZARD_SANDBOX_DELAY", "TPUWIZARD_SANDBOX_LINGER"])
@pytest.mark.parametrize("command", [LAUNCH, UP], ids=["launch", "up"])
def test_a_running_sandbox_does_not_hide_a_bad_sandbox_setting(
    home, here, monkeypatch, command, setting
):
    # A practice sandbox already serving (its address exported, as a lasting one's or an
    # earlier start's is): this process starts none, and the bad value is still bad input.
    monkeypatch.setenv("TPUWIZARD_TPU_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv(setting, "nan")
    stderr = refused(home, *command)
    assert f"{setting}='nan' is not a number of seconds of 0 or more" in stderr


def test_a_script_named_like_an_option_is_refused_before_create(home, here):
    (here / "-x.py").write_text("print('hi')\n")
    stderr = refused(home, *LAUNCH, "--script", "./-x.py")
    assert "Script name '-x.py' must be ASCII letters" in stderr and "rename the file" in stderr


def test_run_refuses_a_script_named_like_an_option_before_reaching_the_node(home, here):
    (here / "-x.py").write_text("print('hi')\n")
    assert "rename the file" in refused(home, "run", "--sandbox", "./-x.py")


def test_launch_arguments_without_a_script_are_refused(home, here):
    stderr = refused(home, *LAUNCH, "--", "--lr", "3e-4")
    assert "'--lr 3e-4' are for a script, but no script is given" in stderr


def test_internal_ips_without_the_gcloud_transport_is_refused_before_any_call(home, here):
    assert "add --transport gcloud" in refused(home, *LAUNCH, "--internal-ips")


def test_the_gcloud_transport_without_gcloud_is_refused_before_create(home, here, monkeypatch):
    import tpuwizard.commands.cloud as cloud
    import tpuwizard.commands.iterate as iterate
    from tpuwizard.session.session import Session

    for module in (cloud, iterate):  # a real session, whose cloud is never opened
        monkeypatch.setattr(
            module, "open_session", lambda p, s, *runs: Session(False, "my-project")
        )
    monkeypatch.setenv("PATH", str(here))  # no gcloud here
    for command in (LAUNCH, UP):
        stderr = refused(home, *command, "--transport", "gcloud")
        assert "--transport gcloud needs the gcloud CLI" in stderr


@pytest.mark.parametrize("command", ["run", "watch"])
def test_everything_after_script_reaches_the_script_unchanged(here, monkeypatch, command):
    import tpuwizard.commands.iterate as iterate
    import tpuwizard.commands.watching as watching

    given: list[tuple[str, ...]] = []

    def run_once(
        kept,
        script,
        args,
        fetch,
        folder,
        token,
        as_json,
        wait=False,
        packages=(),
        resume=None,
        guards=None,
        even_if_held=False,
    ):
        given.append(tuple(args))
        assert packages == ()  # a --with after SCRIPT is the script's
        assert resume is None  # ... and so is a --checkpoints
        assert fetch == ("out.txt",)  # tpuwizard's own option, before SCRIPT
        return 0

    def no_new_packages(specs: tuple) -> None:
        assert specs == ()  # a --with after SCRIPT is the script's: nothing to check
        return None

    kept = SimpleNamespace(name="n", check_packages=no_new_packages)
    monkeypatch.setattr(iterate, "open_kept", lambda session, node: kept)
    monkeypatch.setattr(iterate, "_run_once", run_once)

    def watch_loop(kept, script, once, debounce):
        once(None, None)
        return None  # not ended by a signal

    monkeypatch.setattr(watching, "watch_loop", watch_loop)
    monkeypatch.setattr(iterate, "_offer_teardown", lambda session, name, ask=True: None)
    script_args = ["--help", "--fetch", "x", "--node", "n", "--with", "jax", "--checkpoints"]
    script_args += ["/abs", "--", "-v"]
    result = CliRunner().invoke(
        main, [command, "--sandbox", "--fetch", "out.txt", "train.py", *script_args]
    )
    assert result.exit_code == 0, result.output
    assert given == [tuple(script_args)]  # --help too: it is the script's, not tpuwizard's
    assert "Usage:" not in result.output


def test_an_unknown_option_before_script_is_refused_not_taken_for_the_script(home, here):
    assert "No such option '--bogus'" in refused(home, "run", "--sandbox", "--bogus", "train.py")


def test_a_script_in_the_home_folder_is_refused_before_create(here, home, monkeypatch):
    """Its whole folder would be sent, on every route: exit 2 with the fix, nothing made."""
    monkeypatch.setenv("HOME", str(here))
    free = ["launch", "--sandbox", "--script", "train.py", "--route"]
    for args, sent_to in (
        ([*LAUNCH, "--script", "train.py"], "to the TPU"),
        (["run", "--sandbox", "train.py"], "to the TPU"),
        # Reliability round 6, G1: the free routes packed the whole home (every dot-file).
        ([*free, "kaggle"], "inside a Kaggle kernel"),
        ([*free, "colab"], "to the Colab runtime"),
    ):
        err = refused(home, *args)
        assert f"train.py is in your home folder ({here})" in err, err
        assert f"sends the script's whole folder {sent_to}" in err
        assert "Put the script in its own folder" in err
        assert not (here / "runs").exists()


@pytest.mark.parametrize(
    ("folder", "words"),
    [("/tmp/ckpt", "is an absolute path"), ("../ckpt", "climbs out with '..'"), (".", "itself")],
)
def test_run_checkpoints_outside_the_scripts_folder_is_refused_before_the_node(
    home, here, folder, words
):
    # launch's rule (plan_resume.checkpoints_problem), said before the session opens.
    stderr = refused(home, "run", "--sandbox", "--checkpoints", folder, "train.py")
    assert f"--checkpoints '{folder}' " in stderr and words in stderr, stderr
    assert "give a folder inside the script's folder" in stderr


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "soon", "20000"])
@pytest.mark.parametrize("command", ["launch", "run"])
def test_a_bad_stall_timeout_is_refused_before_anything_is_made(home, here, command, value):
    """The stall guard's minutes (issue 47): 0 or more, a number, at most a week."""
    args = [*LAUNCH, "--script", "train.py"] if command == "launch" else ["run", "--sandbox"]
    tail = [] if command == "launch" else ["train.py"]
    stderr = refused(home, *args, "--stall-timeout", value, *tail)
    assert "--stall-timeout" in stderr and "minutes" in stderr, stderr


@pytest.mark.parametrize("command", ["launch", "up"])
def test_an_accelerator_that_is_no_tpu_type_is_refused_where_the_option_is_read(
    home, here, command, monkeypatch
):
    # --accelerator is parsed once, at the command line's edge, into the Slice the session's
    # pipeline takes (issue 46): a name the catalog does not know is exit 2 with its nearest
    # names, before the session is asked anything.
    from tpuwizard.session.session import Session

    def asked(*args: object, **kwargs: object) -> None:
        raise AssertionError("the session's pipeline was asked")

    monkeypatch.setattr(Session, "prepare", asked)
    stderr = refused(home, command, "--sandbox", "--accelerator", "v5e-4", "--zone", "us-east1-c")
    assert "'v5e-4' is not a TPU accelerator type" in stderr and "v5litepod-4" in stderr
