"""Plain mode: naming the course's tpu-report.txt as a file to copy back is answered with where
tpuwizard keeps the script's output, right after the answer (the same words as the wizard's)."""

from tests.tui.test_plain import run_plain
from tpuwizard.plain.walk import PlainWizard


def test_plain_names_output_txt_when_tpu_report_txt_is_to_be_copied_back(tmp_path, monkeypatch):
    script = tmp_path / "main.py"
    script.write_text("print('hi')\n")
    planned = []
    # The answers are the subject: the launch is the CLI's and the wizard's test.
    monkeypatch.setattr(PlainWizard, "launch", lambda self, handle: planned.append(handle.plan))
    keys = (
        "\r" * 5  # budget, chips, length, billing; TPU VM on demand
        + "\r" * 8  # size, 48 GiB, slice, zone, name, deadline, watchdog, deeper checks
        + f"{script}\r"
        + "tpu-report.txt\r"
        + "\r"  # the stall guard's default minutes
        + "\r"  # no packages to add
        + "\r"  # the default JAX
        + "\r"  # create
    )
    _code, lines = run_plain(tmp_path, keys, then_close=True)
    assert planned, "\n".join(lines)
    text = "\n".join(lines)
    assert "tpu-report.txt is your script's output tee'd to a file" in text
    assert "output.txt" in text and "only if your script writes it" in text


def test_plain_asks_the_workers_jax_with_the_script_and_refuses_one_outside_the_table(
    tmp_path, monkeypatch
):
    """Issue 36: with a script, plain mode asks which JAX of the table the worker gets; a
    version outside it is refused where it is typed (the table's versions said), then asked
    again."""
    script = tmp_path / "main.py"
    script.write_text("print('hi')\n")
    planned = []
    monkeypatch.setattr(PlainWizard, "launch", lambda self, handle: planned.append(handle.plan))
    keys = (
        "\r" * 5  # budget, chips, length, billing; TPU VM on demand
        + "\r" * 8  # size, 48 GiB, slice, zone, name, deadline, watchdog, deeper checks
        + f"{script}\r"
        + "\r"  # nothing to copy back
        + "\r"  # the stall guard's default minutes
        + "\r"  # no packages to add
        + "0.13\r"  # not in the table: refused, asked again
        + "\x7f" * 4  # erased
        + "0.12.0.1\r"
        + "\r"  # create
    )
    _code, lines = run_plain(tmp_path, keys, then_close=True)
    assert planned and planned[0].workload.jax == "0.12.0.1", "\n".join(lines)
