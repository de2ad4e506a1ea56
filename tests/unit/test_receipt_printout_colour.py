"""A course printout saved with the terminal's colours (issue 39, item 11): the receipt line's
SGR escapes (colour, bold) are decoration, taken out before the line is read; the hash is
still checked, and any other escape still makes the line unreadable."""

from __future__ import annotations

import json

import pytest

from tests.unit.test_receipt import sealed
from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import check_receipt, load_receipt

GREEN, BOLD, RESET = "\x1b[32m", "\x1b[1m", "\x1b[0m"


@pytest.mark.parametrize(
    "line",
    [
        f"{GREEN}Verified runtime receipt:{RESET} {{json}}",
        f"{BOLD}{GREEN}Verified runtime receipt: {{json}}{RESET}",
        "Verified runtime receipt: \x1b[38;5;208m{json}\x1b[m",
    ],
    ids=["prefix", "whole-line", "256-colour-json"],
)
def test_a_coloured_receipt_line_is_read_and_checked(tmp_path, line):
    receipt = sealed()
    report = tmp_path / "tpu-report.txt"
    report.write_text("noise\n" + line.replace("{json}", json.dumps(receipt, sort_keys=True)))
    assert load_receipt(report) == receipt
    assert check_receipt(load_receipt(report), expect="cpu").ok


def test_colour_never_hides_an_edit_nor_lets_another_escape_through(tmp_path):
    report = tmp_path / "tpu-report.txt"
    edited = dict(sealed(), device_count=4)
    report.write_text(f"{GREEN}Verified runtime receipt: {json.dumps(edited)}{RESET}\n")
    assert not check_receipt(load_receipt(report)).ok
    report.write_text(f"Verified runtime receipt: \x1b]0;x\x07{json.dumps(sealed())}\n")
    with pytest.raises(BadInput, match="holds no receipt: it has neither the course's line"):
        load_receipt(report)
