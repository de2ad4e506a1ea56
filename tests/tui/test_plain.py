"""Plain mode driven through prompt_toolkit's pipe input, with a real sandbox launch."""

import os
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from tests.tui.pilot_helpers import sandbox_nodes
from tests.unit.test_kept_lines import LINE, keep
from tpuwizard.plain.walk import PlainWizard


def run_plain(tmp_path, keys: str, then_close: bool = False):
    """``then_close``: the input ends after the keys, so a walk that asks for more fails
    (EOFError) instead of waiting for ever."""
    lines: list[str] = []
    with create_pipe_input() as inp:
        inp.send_text(keys)
        if then_close:
            inp.close()
        code = PlainWizard(
            sandbox=True,
            run_dir=tmp_path / "runs",
            input=inp,
            output=DummyOutput(),
            echo=lines.append,
        ).run()
    return code, lines


def test_plain_walk_launches_verifies_and_tears_down(tmp_path):
    # Every default: route (4 questions + the route), size or parameters, size, slice, zone,
    # name, deadline, watchdog, deeper checks, script, then "yes, create".
    code, lines = run_plain(tmp_path, "\r" * 15)
    assert code == 0, "\n".join(lines)
    text = "\n".join(lines)
    assert "Recommended: TPU VM, on demand." in text and "[practice]" in text
    # The wizard's defaults: the cheapest current-generation slice that holds 48 GiB.
    assert "Creating tpuwizard-" in text and ": v5litepod-4 (4 chips)" in text
    # The check before create says the sandbox's account may delete: armed by default.
    assert "The watchdog can run:" in text
    assert "even if this laptop sleeps" in text and "No watchdog" not in text
    assert "proves the run" in text and "Verified gone" in text
    # The summary comes last, as in the wizard and the CLI.
    summary = text[text.index("Summary of tpuwizard-") :]
    assert "PASS contract" in summary and "Receipt " in summary
    assert "Nothing is billing." in summary and "Exit code 0." in summary
    # Priced from the practice sandbox's Billing Catalog, as the wizard is (issue 33).
    before_create = text[: text.index("Creating tpuwizard-")]
    assert "Prices: the Cloud Billing Catalog's prices (read " in before_create
    assert "Prices: the Cloud Billing Catalog's prices (read " in summary
    assert list((tmp_path / "runs").glob("*/receipt.json"))
    assert sandbox_nodes(Path(os.environ["TPUWIZARD_HOME"])) == {}


def test_plain_notebook_route_writes_the_notebook(tmp_path):
    down = "\x1b[B"
    # budget, chips, length, billing: no -> the notebook is recommended; then Colab.
    code, lines = run_plain(tmp_path, "\r\r\r" + down + "\r" + "\r" + "\r")
    assert code == 0, "\n".join(lines)
    assert (tmp_path / "tpuwizard-colab.ipynb").is_file()
    assert any("receipt check" in line for line in lines)
    assert not any("Kept:" in line for line in lines)  # nothing kept, nothing said


def test_plain_mode_says_the_kept_node_first(tmp_path, home):
    keep(home)
    down = "\x1b[B"
    code, lines = run_plain(tmp_path, "\r\r\r" + down + "\r" + "\r" + "\r")
    assert code == 0, "\n".join(lines)
    kept = [i for i, line in enumerate(lines) if "Kept:" in line]
    assert len(kept) == 1 and lines[kept[0]].startswith(LINE)
    assert kept[0] <= 1  # before any question (after the practice banner)


def test_plain_takes_7b_for_parameters_and_confirms_a_slice_too_small(tmp_path):
    up, back = "\x1b[A", "\x7f" * 2
    keys = (
        "\r" * 5  # the route questions
        + "\r"  # the size, not parameters
        + back
        + "7B\r"  # looks like a parameter count
        + "\r"  # yes, use 7B as parameters
        + "\r"  # 7B
        + up
        + "\r"  # adam-fp32: 16 bytes per parameter
        + up * 5
        + "\r"  # the cheapest slice, too small
        + "\r"  # no, not anyway
        + "\r"  # the suggested slice
        + "\r" * 6  # zone, name, deadline, watchdog, deeper checks, script
        + "n"  # do not create
    )
    code, lines = run_plain(tmp_path, keys)
    text = "\n".join(lines)
    assert code == 0, text
    assert "'7B' looks like a parameter count" in text
    assert "104.3 GiB fits sharded on v5litepod-8" in text
    assert "104.3 GiB does NOT fit v5litepod-1" in text and "GiB per chip short" in text
    assert "Nothing was created." in text
    assert not list((tmp_path / "runs").glob("*"))


def test_plain_asks_again_when_the_watchdog_is_switched_on_without_act_as(tmp_path, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "no_act_as=1")
    keys = (
        "\r" * 5  # the route questions
        + "\r" * 6  # size, 48 GiB, slice, zone, name, deadline
        + "y"  # the watchdog, although the check said it cannot run
        + "\r" * 2  # deeper checks, script
        + "n"  # asked again: no watchdog
        + "n"  # do not create
    )
    code, lines = run_plain(tmp_path, keys)
    text = "\n".join(lines)
    assert code == 0, text
    assert "The watchdog cannot run: you may not attach the service account" in text
    refusal = next(line for line in lines if "so Google would refuse the create" in line)
    assert "answer no to the Watchdog question" in refusal and "--no-watchdog" not in refusal
    assert "No watchdog: deleted only while tpuwizard runs" in text  # it went on without it
    assert "Nothing was created." in text
    assert sandbox_nodes(Path(os.environ["TPUWIZARD_HOME"])) == {}


def test_plain_typed_size_replaces_the_default_instead_of_adding_to_it(tmp_path):
    keys = (
        "\r" * 5  # the route questions
        + "\r"  # the size, not parameters
        + "32\r"  # typed over the default 48: 32 GiB, not 4832
        + "\r"  # the slice chosen for 32 GiB
        + "\r" * 2  # zone, name
        + "90\r"  # the deadline typed over its default
        + "\r" * 3  # watchdog, deeper checks, script
        + "n"  # do not create
    )
    code, lines = run_plain(tmp_path, keys, then_close=True)
    text = "\n".join(lines)
    assert code == 0, text
    assert "32.0 GiB fits sharded on" in text and "4832" not in text
    # 90 typed over the default 120 is 90: 12090 would be refused, and the walk stuck there.
    assert "Nothing was created." in text


def test_plain_route_questions_count_chips_and_name_the_route(tmp_path, monkeypatch):
    offered: dict[str, list[str]] = {}
    original = PlainWizard.select

    def recording_select(self, message, choices, default=None):
        offered[message] = [getattr(c, "title", c) for c in choices]
        return original(self, message, choices, default)

    monkeypatch.setattr(PlainWizard, "select", recording_select)
    up = "\x1b[A"
    lines: list[str] = []
    with create_pipe_input() as inp:
        # budget, then 1 chip (one up from 4), length, billing; the input ends at the route.
        inp.send_text("\r" + up + "\r" + "\r\r")
        inp.close()
        wizard = PlainWizard(
            sandbox=True,
            run_dir=tmp_path / "runs",
            input=inp,
            output=DummyOutput(),
            echo=lines.append,
        )
        with pytest.raises(EOFError):
            wizard.run()
    assert offered["Chips needed?"][:2] == ["1 chip", "4 chips"]
    said = next(line for line in lines if line.startswith("Recommended:"))
    assert said.startswith("Recommended: TPU VM, on demand.")


def test_plain_runs_the_preflight_before_its_create_and_a_fail_creates_nothing(
    tmp_path, home, monkeypatch
):
    from tpuwizard.core.exit_codes import EXIT_CLOUD
    from tpuwizard.core.launch.records.ledger import Ledger

    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "no_billing=1")  # the project has no billing
    code, lines = run_plain(tmp_path, "\r" * 15, then_close=True)
    text = "\n".join(lines)
    assert code == EXIT_CLOUD, text
    (billing,) = [line for line in lines if line.startswith("Preflight: FAIL    Billing")]
    assert "gcloud billing projects link tpuwizard-practice" in billing
    assert "Nothing was created: 1 check(s) before create failed" in text
    assert sandbox_nodes(home) == {}
    assert Ledger(home / "sandbox" / "ledger.jsonl").entries() == []


def test_plain_spot_asks_resume_after_preemption_into_the_same_plan_field(tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    planned = []
    # The walk's answers are the subject: the launch itself is the CLI's and the wizard's test.
    monkeypatch.setattr(PlainWizard, "launch", lambda self, handle: planned.append(handle.plan))
    down, back = "\x1b[B", "\x7f" * 4
    keys = (
        "\r" * 4  # budget, chips, length, billing
        + down
        + "\r"  # TPU VM, spot
        + "\r" * 8  # size, 48 GiB, slice, zone, name, deadline, watchdog, deeper checks
        + f"{script}\r"
        + "\r"  # nothing to copy back
        + "../x\r"  # refused by the plan's own rule: asked again
        + back
        + "ckpt\r"
        + "n"  # Autocheckpoint: offered (a TPU-API v5e spot run that resumes), answered no
        + "-1\r"  # the stall guard's minutes: refused by the plan's own rule, asked again
        + "\x7f" * 2
        + "30\r"
        + "optax jax\r"  # packages: jax is tpuwizard's own, refused as typed and asked again
        + "\x7f" * 4
        + "\r"
        + "\r"  # the default JAX
        + "\r"  # create
    )
    _code, lines = run_plain(tmp_path, keys, then_close=True)
    assert planned, "\n".join(lines)
    (plan,) = planned
    assert plan.route == "spot" and plan.resume.checkpoints == "ckpt" and plan.problems() == []
    assert [spec.text for spec in plan.workload.packages] == ["optax"]
    assert plan.resume.autocheckpoint is False and not plan.autocheckpoint_on
    assert plan.guards.stall_minutes == 30


def test_plain_checks_the_stall_guard_minutes_in_its_own_words():
    from tpuwizard.core.errors import BadInput
    from tpuwizard.plain.prompt import stall_check

    stall_check("0")  # off
    stall_check("90")
    for typed in ("-1", "nan", "soon"):
        with pytest.raises(BadInput) as refused:
            stall_check(typed)
        assert "minutes" in str(refused.value) and "--" not in str(refused.value)
    with pytest.raises(BadInput, match="the Stall guard question"):
        stall_check("-1")


def test_plain_checks_the_checkpoints_folder_in_its_own_words():
    from tpuwizard.core.errors import BadInput
    from tpuwizard.plain.prompt import checkpoints_check

    checkpoints_check("")  # no resume
    checkpoints_check("out/ckpt")
    with pytest.raises(BadInput) as refused:
        checkpoints_check("../x")
    assert "'..'" in str(refused.value) and "Resume after preemption question" in str(refused.value)
    assert "--" not in str(refused.value)


@pytest.mark.parametrize(("answer", "created"), [("\r", False), ("y", True)])
def test_plain_says_the_folder_it_sends_and_asks_with_no_first_above_50_mb(
    tmp_path, monkeypatch, answer, created
):
    """Issue 49, item 7 and issue 48, item 2: before its Create question plain mode says what of
    the script's folder goes and which secrets stay; over 50 MB the question names the size and
    Enter means No."""
    folder = tmp_path / "lesson"
    folder.mkdir()
    (folder / "train.py").write_text("print('hi')\n")
    (folder / ".env").write_text("TOKEN=1\n")
    with open(folder / "data.bin", "wb") as data:
        data.truncate(60_000_000)  # sparse: its size without the disk
    planned = []
    monkeypatch.setattr(PlainWizard, "launch", lambda self, handle: planned.append(handle.plan))
    keys = (
        "\r" * 5  # budget, chips, length, billing, TPU VM on demand
        + "\r" * 8  # size, 48 GiB, slice, zone, name, deadline, watchdog, deeper checks
        + f"{folder / 'train.py'}\r"
        + "\r" * 4  # nothing to copy back, the stall guard's default, no packages, the JAX
        + answer
    )
    code, lines = run_plain(tmp_path, keys, then_close=True)
    text = "\n".join(lines)
    assert "Your script's folder: 2 files, 60 MB, sent to each worker. That is over 50 MB" in text
    assert "Never sent (keys, credentials, .env files): .env." in text
    assert bool(planned) == created, text
    if not created:
        assert code == 0 and "Nothing was created." in text


@pytest.mark.parametrize(
    ("keys", "ends_by"),
    [
        ("\r\r\r\x1b[B\r\r\r", None),  # the notebook written: done, exit 0
        ("\r\r", EOFError),  # the input ended mid-walk: an error
        ("\r\x03", KeyboardInterrupt),  # Ctrl+C at a question
    ],
    ids=["done", "error", "ctrl-c"],
)
def test_plain_mode_closes_its_session_however_the_walk_ends(tmp_path, keys, ends_by):
    """Issue 56: plain mode never closed its session, so in practice nothing handed what it
    kept or left to a lasting sandbox, and a thread left running could start another."""
    with create_pipe_input() as inp:
        inp.send_text(keys)
        inp.close()
        wizard = PlainWizard(
            sandbox=True, run_dir=tmp_path / "runs", input=inp, output=DummyOutput(), echo=print
        )
        if ends_by is None:
            assert wizard.run() == 0
        else:
            with pytest.raises(ends_by):
                wizard.run()
    assert wizard.session is not None
    with pytest.raises(LookupError, match="the session has ended"):
        wizard.session.cloud_for("tpu-api")
