"""A receipt read from worker 0's saved log (issue 35): where tpuwizard hands the run to GKE
(`tpuwizard export`), the verifier's ``TPUWIZARD {"kind": "receipt", ...}`` line in
``kubectl logs`` is the proof, and ``receipt check`` reads it with the same rules as a file."""

from __future__ import annotations

import json

import pytest

from tests.unit.test_receipt import sealed
from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import check_receipt, load_receipt


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
