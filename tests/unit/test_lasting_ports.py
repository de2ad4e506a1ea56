"""The request a handing-over command leaves for the lasting practice sandbox: taken once, and
only a port and a token (it is untrusted input in the user's state folder)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tpuwizard.session.practice.lasting_ports import PORT_REQUEST, take_port_request


@pytest.mark.parametrize(
    ("request_body", "taken"),
    [
        ({"port": 43211, "token": "abc"}, (43211, "abc")),
        ({"port": True, "token": "abc"}, None),
        ({"port": "43211", "token": "abc"}, None),
        ({"port": 0, "token": "abc"}, None),
        ({"port": 70000, "token": "abc"}, None),
        ({"port": 43211, "token": ""}, None),
        ({"port": 43211}, None),
        ([43211, "abc"], None),
    ],
)
def test_a_port_request_is_a_port_and_a_token_taken_once(tmp_path: Path, request_body, taken):
    (tmp_path / PORT_REQUEST).write_text(json.dumps(request_body))
    assert take_port_request(tmp_path) == taken
    assert not (tmp_path / PORT_REQUEST).exists()  # used up, taken or not
    assert take_port_request(tmp_path) is None


def test_a_fifo_in_its_place_does_not_hang_the_sandbox(tmp_path: Path):
    os.mkfifo(tmp_path / PORT_REQUEST)
    assert take_port_request(tmp_path) is None
