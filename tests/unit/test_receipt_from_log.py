"""A receipt read from worker 0's saved log (issue 35): where tpuwizard hands the run to GKE
(`tpuwizard export`), the verifier's ``TPUWIZARD {"kind": "receipt", ...}`` line in
``kubectl logs`` is the proof, and ``receipt check`` reads it with the same rules as a file."""

from __future__ import annotations

import json

import pytest

from tests.unit.test_receipt import sealed
from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import check_receipt, load_receipt, read_receipt


def log_line(payload: dict) -> str:
    return "TPUWIZARD " + json.dumps(payload, sort_keys=True)


def test_the_last_receipt_line_of_a_saved_log_is_read_and_checked(tmp_path):
    first, last = sealed(), sealed(hostname="tpu-pod-0")
    log = tmp_path / "log.txt"
    log.write_text(
        "\n".join(
            [
                "installing jax==0.10.2 with uv",
                log_line({"kind": "check", "name": "import", "ok": True}),
                log_line({"kind": "receipt", "receipt": first}),
                "step 0: 1 devices",
                log_line({"kind": "receipt", "receipt": last}),  # a rerun in the same pod
            ]
        )
    )
    assert load_receipt(log) == last
    assert check_receipt(load_receipt(log), expect="cpu").ok


def test_an_edited_logged_receipt_fails_its_hash(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text(log_line({"kind": "receipt", "receipt": dict(sealed(), platform="tpu")}))
    assert not check_receipt(load_receipt(log)).ok


def test_a_key_given_twice_in_the_logged_line_is_refused(tmp_path):
    text = json.dumps({"kind": "receipt", "receipt": sealed()})
    log = tmp_path / "log.txt"
    log.write_text("TPUWIZARD " + text[:-2] + ', "receipt_sha256": "0"}}\n')  # given twice
    with pytest.raises(BadInput, match="twice"):
        load_receipt(log)


def test_a_log_without_a_receipt_line_says_what_is_accepted(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("Pulling image...\n" + log_line({"kind": "check", "name": "import"}) + "\n")
    with pytest.raises(BadInput) as refused:
        load_receipt(log)
    assert "TPUWIZARD {...}" in str(refused.value) and "kubectl logs" in str(refused.value)


# -- issue 48, item 5 (report F8): which line of a log decides, by one rule ---------------------
COURSE = "Verified runtime receipt: "


def test_the_verifiers_later_line_decides_over_a_course_format_line_before_it(tmp_path):
    good, failed = sealed(), sealed(contract_ok=False)
    log = tmp_path / "worker-0.log"
    log.write_text(
        COURSE + json.dumps(good, sort_keys=True) + "\n"
        + log_line({"kind": "receipt", "receipt": failed}) + "\n"
    )  # fmt: skip
    data, notes = read_receipt(log)
    assert data == failed and not check_receipt(data, expect="cpu").ok
    assert "the verifier's receipt on line 2 is judged" in notes
    assert any("course-format receipt line(s) on line 1 are not judged" in n for n in notes)


def test_a_course_format_line_printed_by_the_script_after_the_verifier_does_not_decide(tmp_path):
    failed, forged = sealed(contract_ok=False), sealed()
    log = tmp_path / "worker-0.log"
    log.write_text(
        log_line({"kind": "receipt", "receipt": failed}) + "\nstep 1\n"
        + COURSE + json.dumps(forged, sort_keys=True) + "\n"
    )  # fmt: skip
    assert load_receipt(log) == failed


def test_a_course_printout_without_the_verifiers_lines_is_judged_by_its_last_course_line(tmp_path):
    first, last = sealed(), sealed(hostname="second")
    printout = tmp_path / "tpu-report.txt"
    printout.write_text(f"{COURSE}{json.dumps(first)}\nmore\n{COURSE}{json.dumps(last)}\n")
    data, notes = read_receipt(printout)
    assert data == last
    assert notes == ["the course's receipt line on line 3 is judged (the last of 2)"]


@pytest.mark.parametrize(
    ("last_line", "why"),
    [
        (lambda text: text[:300], "not whole JSON"),  # cut short
        (lambda text: text[:-2] + ', "x": ' + "[" * 100 + "]" * 100 + "}}", "nests deeper than 64"),
        (lambda text: text[:-2] + ', "receipt_sha256": "0"}}', "twice"),
    ],
    ids=["cut", "nested", "key-twice"],
)
def test_an_unreadable_last_receipt_line_is_said_not_skipped_for_an_earlier_one(
    tmp_path, last_line, why
):
    good = log_line({"kind": "receipt", "receipt": sealed()})
    failed = log_line({"kind": "receipt", "receipt": sealed(contract_ok=False)})
    log = tmp_path / "worker-0.log"
    log.write_text(good + "\nstep 1\n" + last_line(failed) + "\n")
    with pytest.raises(BadInput) as refused:
        load_receipt(log)
    said = str(refused.value)
    assert "line 3 carries the verifier's marker but cannot be read" in said, said
    assert why in said and "the receipt on line 1 is not judged in its place" in said


def test_an_unreadable_line_before_the_last_receipt_does_not_matter(tmp_path):
    last = sealed(hostname="again")
    log = tmp_path / "worker-0.log"
    log.write_text(
        log_line({"kind": "receipt", "receipt": sealed()})[:200] + "\n"
        + log_line({"kind": "receipt", "receipt": last}) + "\n"
        + "TPUWIZARD says hello\n"  # a script's own words: no JSON after the marker
        + log_line({"kind": "check", "name": "after"}) + "\n"
    )  # fmt: skip
    assert load_receipt(log) == last


def test_receipt_check_says_which_line_of_a_log_it_judged(tmp_path):
    """End to end, in a fresh interpreter: the verdict comes from the verifier's last line."""
    import subprocess

    from tests.conftest import tpuwizard_cmd

    log = tmp_path / "worker-0.log"
    log.write_text(
        COURSE + json.dumps(sealed(), sort_keys=True) + "\n"
        + log_line({"kind": "receipt", "receipt": sealed(contract_ok=False)}) + "\n"
    )  # fmt: skip
    checked = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(log), "--expect", "cpu"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 1 and f"{log}: REJECTED" in checked.stdout, checked.stdout
    assert "ok   the verifier's receipt on line 2 is judged" in checked.stdout
    log.write_text(log_line({"kind": "receipt", "receipt": sealed()}) + '\nTPUWIZARD {"kind":\n')
    cut = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(log), "--expect", "cpu"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cut.returncode == 2 and "line 2 carries the verifier's marker" in cut.stderr, cut.stderr
