"""A command's practice sandbox that ends while another command's lasting sandbox serves the same
home (the wizard open, `tpuwizard up` run in another terminal) hands its node over with its port:
the watchdogs it armed call that port with its token, and must still reach the practice cloud."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from google.oauth2.credentials import Credentials

from tests.integration.launch_helpers import env
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.paths import owner_label
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox.serving import start_in_thread
from tpuwizard.session.practice import sandbox as practice

START = "from tpuwizard.session.practice import sandbox; sandbox.start_lasting_sandbox()"
ZONE = "us-west1-c"
REPO = Path(__file__).resolve().parents[2]


def test_a_hand_over_to_a_running_lasting_sandbox_keeps_the_ending_ones_port(home: Path):
    subprocess.run(
        [sys.executable, "-c", START],
        env=env(TPUWIZARD_SANDBOX_LINGER="600"),
        check=True,
        timeout=60,
    )
    lasting = json.loads((home / "sandbox" / practice.LASTING_SERVER_FILE).read_text())
    ending = practice.make_sandbox_server(delay=0)  # this command's own, started before it
    start_in_thread(ending)
    token = ending.token
    assert ending.endpoint != lasting["endpoint"]
    armed_with = TpuCloud(
        practice.PRACTICE_PROJECT, endpoint=ending.endpoint, credentials=Credentials(token=token)
    )
    request = NodeRequest(
        zone=ZONE,
        node_id="kept-in-the-wizard",
        slice=parse_accelerator("v5litepod-1"),
        run_id="20261206-101010-abcd",
        owner=owner_label(),
    )
    armed_with.wait_for_node(ZONE, request.node_id, armed_with.create_node(request), poll=0.05)
    try:
        assert practice.hand_over(ending)
        # The port the watchdog was armed with answers, with the token it was given, and the
        # node is there: the watchdog can delete it at its deadline.
        node = armed_with.get_node(ZONE, request.node_id)
        assert node is not None and node.state == "READY"
        armed_with.delete_node(ZONE, request.node_id)
        assert armed_with.get_node(ZONE, request.node_id) is None
        # The watchdog's own check, as armed: its token file, this port (a wrong token: 401).
        for secret, answer in ((token, '"ok": true'), ("not-" + token, "HTTP Error 401")):
            (home / "metadata-token").write_text(secret)
            check = subprocess.run(
                [
                    sys.executable,
                    "verify/tpu_watchdog.py",
                    "--check-only",
                    "--resource",
                    f"projects/{practice.PRACTICE_PROJECT}/locations/{ZONE}/nodes/x",
                    "--endpoint",
                    ending.endpoint,
                    "--iam-endpoint",
                    ending.endpoint,
                    "--token",
                    f"file:{home / 'metadata-token'}",
                ],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=REPO,
            )
            assert answer in check.stdout, check.stdout + check.stderr
    finally:
        os.kill(int(lasting["pid"]), 9)
