"""`--with` and `--requirements` on launch, up and run: a jax line (or a file that is not there)
is refused with exit 2 and the reason, before anything is made."""

from __future__ import annotations

import pytest

from tests.unit.test_cli_bad_input import LAUNCH, UP, _no_sandbox, here, refused

__all__ = ["_no_sandbox", "here"]  # the fixtures, used by name


@pytest.mark.parametrize("command", [LAUNCH, UP, ["run", "--sandbox"]], ids=["launch", "up", "run"])
def test_with_jax_is_refused_by_every_command_before_anything(home, here, command):
    script = ["train.py"] if command[0] == "run" else []
    stderr = refused(home, *command, "--with", "optax", "--with", "jaxlib==0.4.30", *script)
    assert "'jaxlib==0.4.30' (--with) names jaxlib" in stderr, stderr
    assert "never lets a package change it" in stderr


def test_a_jax_line_in_the_requirements_beside_the_script_is_refused(home, here):
    (here / "requirements.txt").write_text("numpy\njax[tpu]>=0.4\n")
    stderr = refused(home, *LAUNCH, "--script", "train.py")
    assert "a requirements.txt beside the script is installed" in stderr  # said, unasked
    assert "'jax[tpu]>=0.4' (requirements.txt beside the script, line 2) names jax" in stderr


def test_a_requirements_file_that_is_not_there_is_refused(home, here):
    stderr = refused(home, *UP, "--requirements", "missing.txt")
    assert "No requirements file at missing.txt" in stderr


# -- issue 39, item 8: every line parses as PEP 508; requirement files are small regular files --
@pytest.mark.parametrize("command", [LAUNCH, UP, ["run", "--sandbox"]], ids=["launch", "up", "run"])
def test_a_line_uv_would_refuse_is_refused_before_anything(home, here, command):
    script = ["train.py"] if command[0] == "run" else []
    stderr = refused(home, *command, "--with", "foo; touch MARKER", *script)
    assert "'foo; touch MARKER' (--with) is not a package requirement" in stderr, stderr
    assert not (here / "MARKER").exists()


def test_dev_zero_as_requirements_is_refused_without_reading_it_all(home, here):
    stderr = refused(home, *LAUNCH, "--requirements", "/dev/zero")
    assert "Cannot read the requirements file /dev/zero: it is not a regular file" in stderr


def test_a_fifo_as_requirements_is_refused_without_waiting_for_a_writer(home, here):
    import os

    os.mkfifo(here / "reqs.fifo")
    stderr = refused(home, *UP, "--requirements", "reqs.fifo")
    assert "reqs.fifo: it is not a regular file" in stderr


# -- issue 36: --jax names a version of tpuwizard's table, or nothing starts --
def test_up_refuses_a_jax_version_outside_the_table(home, here):
    assert "JAX '1.0' is not in tpuwizard's table" in refused(home, *UP, "--jax", "1.0")


# -- issue 49, item 5: an option of tpuwizard's among the script's arguments is said --
def test_run_says_when_an_option_of_its_own_comes_after_the_script(home, here):
    """`run train.py --with flax` gives the script `--with flax` (by design): one warning line
    says so and writes the command that installs flax; the script's other words stay its own.
    (A jax line before the script is refused afterwards, so nothing is made.)"""
    stderr = refused(
        home, "run", "--sandbox", "--with", "jaxlib==0.4.30", "train.py",
        "--with", "flax", "--lr", "3e-4", "--json",
    )  # fmt: skip
    assert (
        "Warning: after train.py, --with flax and --json are your script's own arguments: "
        "tpuwizard run passes them on and does not use them itself. For tpuwizard, write them "
        "before the script: tpuwizard run --sandbox --with jaxlib==0.4.30 --with flax --json "
        "train.py --lr 3e-4"
    ) in stderr, stderr
    assert "names jaxlib" in stderr  # the refusal still comes, after the warning


def test_launch_says_when_an_option_of_its_own_comes_after_the_double_dash(home, here):
    stderr = refused(
        home, *LAUNCH, "--with", "jaxlib==0.4.30", "--script", "train.py",
        "--", "--lr", "3e-4", "--fetch=*.txt",
    )  # fmt: skip
    assert (
        "Warning: after --, '--fetch=*.txt' is your script's own argument: tpuwizard launch "
        "passes it on and does not use it itself. For tpuwizard, write it before --: tpuwizard "
        f"launch {' '.join(LAUNCH[1:])} --with jaxlib==0.4.30 --script train.py '--fetch=*.txt' "
        "-- --lr 3e-4"
    ) in stderr, stderr


def test_a_scripts_own_words_are_not_warned_about(home, here):
    stderr = refused(home, "run", "--sandbox", "--with", "jaxlib==0.4.30", "train.py", "--lr", "3")
    assert "Warning" not in stderr
