"""A script that prints terminal escapes and names a file with them (issue 39, item 10): the
launch's human output shows them as `cat -v` does, and the saved whole output keeps the bytes."""

from __future__ import annotations

import subprocess

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import ZONE, env

SCRIPT = """\
import pathlib
print("\\x1b]0;pwned\\x07title \\x1b[2Jclear \\rforged")
pathlib.Path("a\\x1b[31mred\\nx.txt").write_text("made")
"""
ACTING = ("\x1b", "\x07", "\r")


def test_a_scripts_escapes_and_file_names_show_harmlessly_and_the_output_file_keeps_them(
    tmp_path, home
):
    (tmp_path / "evil.py").write_text(SCRIPT)
    proc = subprocess.run(
        tpuwizard_cmd(
            "launch", "--sandbox", "--accelerator", "v5litepod-1", "--zone", ZONE,
            "--script", "evil.py", "--fetch", "*.txt", "--run-dir", "runs",
        ),
        cwd=tmp_path, capture_output=True, timeout=240, env=env(),
    )  # fmt: skip
    said = (proc.stdout + proc.stderr).decode()
    assert proc.returncode == 0, said
    assert not [c for c in ACTING if c in said], said
    assert "^[]0;pwned^Gtitle ^[[2Jclear ^Mforged" in said
    assert "a^[[31mred^Jx.txt" in said
    (output,) = (tmp_path / "runs").glob("*/output.txt")
    assert b"\x1b]0;pwned\x07title \x1b[2Jclear \rforged" in output.read_bytes()
    (fetched,) = (tmp_path / "runs").glob("*/files/a*x.txt")
    assert fetched.name == "a\x1b[31mred\nx.txt" and fetched.read_text() == "made"
