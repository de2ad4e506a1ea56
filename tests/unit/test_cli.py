"""Bad input exits 2 with a message that says what to type instead; --json is pure JSON."""

import json
import re

import pytest
from click.testing import CliRunner

from tpuwizard.cli import main
from tpuwizard.core.errors import BadInput

FIT_KEYS = {
    "name",
    "chips",
    "vms",
    "physical_hosts",
    "hosts",  # deprecated: physical_hosts's old name, for one release
    "hbm_gib_per_chip",
    "total_hbm_gib",
    "usable_gib_per_chip",
    "usable_from",  # catalog (sourced), unconfirmed (nominal x 0.94), usable, receipt
    "fits_sharded",
    "fits_replicated",
    "fits_total",
    "headroom_gib",
    "price_per_hour_usd",
    "single_host",
    "price_at_most_usd",  # the on-demand bound where the route (Flex-start) has no figure
}


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_fit_json_has_exactly_the_documented_keys():
    result = run("fit", "48", "--json", "--slices", "v5litepod-1,v5litepod-4,v5litepod-8,v6e-4")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"state_gib", "bytes_per_param", "slices", "prices"}
    assert data["state_gib"] == 48 and data["bytes_per_param"] is None
    assert all(set(s) == FIT_KEYS for s in data["slices"])
    fitting = [s["name"] for s in data["slices"] if s["fits_total"]]
    assert sorted(fitting) == ["v5litepod-4", "v5litepod-8", "v6e-4"]


def test_fit_json_counts_the_vms_and_the_physical_hosts_under_them():
    result = run("fit", "48", "--json", "--slices", "v5litepod-16")
    assert result.exit_code == 0, result.output
    (s,) = json.loads(result.stdout)["slices"]
    assert (s["vms"], s["physical_hosts"]) == (4, 2)  # the course's 4 hosts are VMs
    assert s["hosts"] == s["physical_hosts"]  # the old name, same value, for one release


def test_fit_from_params_reports_bytes_per_param():
    result = run("fit", "--params", "7B", "--recipe", "adam-fp32", "--json")
    data = json.loads(result.stdout)
    assert data["bytes_per_param"] == 16
    assert data["state_gib"] == pytest.approx(7e9 * 16 / 2**30, rel=1e-6)


def test_fit_human_output_has_a_verdict_and_the_activation_note():
    result = run("fit", "48GiB", "--single-host")
    assert result.exit_code == 0
    # The result is on stdout, so `tpuwizard fit 48 > plan.txt` or `| less` holds it.
    assert "fits sharded on" in result.stdout
    assert "Activations are not included" in result.stdout
    assert "v5litepod-4" in result.stdout and result.stderr == ""


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["fit", "abc"], "48GiB"),
        (["fit", "--", "-5"], "above zero"),
        (["fit", "-5"], "'-5' is a negative size"),
        (["fit", "-0.5GiB", "--single-host"], "'-0.5GiB' is a negative size"),
        (["fit", "1e400"], "too large: not a finite number"),
        (["fit", "--params", "1e400"], "too large: not a finite number"),
        (["up", "--accelerator", "v5litepod-4", "--zone", "z", "--ready-timeout", "0"], "above"),
        (["fit", "0"], "above zero"),
        (["fit", "nan"], "48"),
        (["fit", "7B"], "--params 7B --recipe adam-fp32"),
        (["fit", "350M"], "--params 350M --recipe adam-fp32"),
        (["fit", "7000000000"], "--params 7000000000"),
        (["fit", "48", "--slices", "v5e-4"], "v5litepod-4"),
        (["fit", "--params", "7B", "--recipe", "sgd"], "bf16-adam"),
        (["fit", "--params", "seven"], "7B"),
        (["fit"], "--params"),
        (["fit", "48", "--params", "7B"], "not both"),
        (["fit", "48", "--usable", "1.5"], "--usable"),
        (["fit", "48", "--max-chips", "0"], "--max-chips"),
        (["fit", "48", "--generation", "v9"], "Choose from"),
        (["verify", "--devices", "0"], "--devices"),
        (["verify", "--devices", "99999999999999999999"], "--devices must be 1 to 2048"),
        (["receipt", "check", "/nonexistent/receipt.json"], "No receipt"),
    ],
)
def test_bad_input_exits_2_with_a_hint(args, hint):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert hint in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "mode"), [((), "The wizard needs"), (("--plain",), "Plain mode asks questions")]
)
def test_the_wizard_or_plain_mode_without_a_terminal_is_one_line_and_exit_2(args, mode):
    # Not the whole --help (a pipe asked for questions, not a manual): one line naming the mode
    # and where the commands are listed, and the bad-input code, since nothing could be asked.
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and mode in result.stderr
    assert "tpuwizard --help" in result.stderr


def test_no_color_is_honoured():
    import os
    import subprocess
    import sys

    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    cmd = [sys.executable, "-m", "tpuwizard", "fit", "48", "--single-host"]
    colored = subprocess.run(cmd, capture_output=True, text=True, env={**base, "FORCE_COLOR": "1"})
    plain = subprocess.run(
        cmd, capture_output=True, text=True, env={**base, "FORCE_COLOR": "1", "NO_COLOR": "1"}
    )
    green, red = "\x1b[32m", "\x1b[31m"
    assert green in colored.stdout and red in colored.stdout  # colour when forced...
    assert green not in plain.stdout and red not in plain.stdout  # ...none with NO_COLOR,
    assert "yes" in plain.stdout and "no" in plain.stdout  # and the words still say it all


def test_an_explicit_unit_keeps_its_table_and_says_nothing_fits():
    result = run("fit", "1e30GiB", "--single-host")
    assert result.exit_code == 0, result.output
    assert "No single slice in tpuwizard's catalog holds" in result.stdout
    assert "v5litepod-4" in result.stdout


def test_status_answers_on_stdout_and_notes_on_stderr(tmp_path):
    import subprocess

    from tests.conftest import clean_env, tpuwizard_cmd

    # A fresh process: an in-process practice sandbox would stay in this one's environment.
    result = subprocess.run(
        tpuwizard_cmd("status", "--sandbox"),
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(TPUWIZARD_HOME=str(tmp_path)),
    )
    assert result.returncode == 0, result.stderr
    assert "nothing of yours is billing" in result.stdout  # the answer: `| grep` finds it
    assert "[practice]" in result.stderr and "[practice]" not in result.stdout  # a note


def test_every_option_of_every_command_says_what_it_does():
    import click

    def undocumented(command: click.Command, path: str) -> list[str]:
        missing = [
            f"{path} {p.opts[0]}"
            for p in command.params
            if isinstance(p, click.Option) and not p.help
        ]
        for name, sub in getattr(command, "commands", {}).items():
            missing += undocumented(sub, f"{path} {name}")
        return missing

    assert undocumented(main, "tpuwizard") == []  # `up --help` once had three bare options


def test_the_command_list_says_each_commands_sentence_whole_at_80_columns():
    result = CliRunner().invoke(main, ["--help"], terminal_width=80)
    assert result.exit_code == 0
    listed = result.output.split("Commands:")[1]
    assert "..." not in listed  # click cut them off at 80 columns
    words = " ".join(listed.split())
    assert "copy results back, and tear it down." in words
    assert all(len(line) <= 80 for line in result.output.splitlines())


def test_a_table_sent_to_a_pipe_has_no_padding_at_line_ends():
    result = run("fit", "48")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "v5litepod-4" in result.stdout and len(lines) > 3
    assert [line for line in lines if line != line.rstrip()] == []


def test_teardown_and_down_help_each_describe_their_own_command_in_plain_words():
    said = {
        name: CliRunner().invoke(main, [name, "--help"], terminal_width=100).output
        for name in ("teardown", "down", "--help")
    }
    assert all("``" not in text for text in said.values()), said  # no reST quotes
    assert " down" not in said["teardown"].split("Options:")[0]  # it once described down
    assert "Delete what tpuwizard created (NAME, or --all)" in said["teardown"]
    assert "Delete the node kept by up" in said["down"]
    assert re.search(r"down +Delete the node kept by up", said["--help"])


@pytest.mark.parametrize(
    ("slices", "accelerator", "said"),
    [
        (None, "v5litepod-1", "v5litepod-1"),  # issue 55: as every other command names one
        ("v6e-1", None, "v6e-1"),
        (None, None, None),
        ("v6e-1", "v5litepod-1", "--slices v6e-1,v5litepod-1 compares them all"),
        (None, "v5litepod-1,v6e-1", "give --slices v5litepod-1,v6e-1"),
    ],
)
def test_fit_takes_accelerator_for_one_slice(slices, accelerator, said):
    from tpuwizard.commands.options.fit import slices_or_accelerator

    if said is not None and " " in said:
        with pytest.raises(BadInput, match=re.escape(said)):
            slices_or_accelerator(slices, accelerator)
    else:
        assert slices_or_accelerator(slices, accelerator) == said


def test_fit_accelerator_lists_that_slice_alone():
    result = run("fit", "15.5", "--accelerator", "v5litepod-1")
    assert result.exit_code == 0, result.output
    assert "fits sharded on v5litepod-1" in result.stdout and "v6e-1" not in result.stdout


def test_launch_help_says_what_the_options_take():
    """Issue 55: --accelerator is optional on both free routes; --via's default as typed."""
    words = " ".join(run("launch", "--help").stdout.split())
    assert "(required, except with --route kaggle or colab)" in words
    assert "--via [auto|resize-request]" in words and "[default: AUTO]" not in words
