"""One byte that is not UTF-8 in a script's output never loses a Kaggle or Colab run: the
code tpuwizard puts on the kernel or runtime (the Kaggle kernel's runner, Colab's cells) and
the readers on this computer (``colab exec`` followed, any ``colab`` command's words) read
bytes and show such a byte as U+FFFD, and the run's output and files are kept."""

from __future__ import annotations

import base64
import io
import re
import subprocess
import sys
import tarfile
from pathlib import Path

from tpuwizard.core.colab import cells
from tpuwizard.core.colab.program import ColabProgram
from tpuwizard.core.colab.run import follow_exec, prepare_run
from tpuwizard.core.kaggle import kernel
from tpuwizard.core.launch.events.launch_events import ScriptLine

# The script of the report (issue 48 F6): a latin-1 byte on stdout, then a file to fetch.
BADBYTE = """\
import os, sys
print("SCRIPT-START", flush=True)
sys.stdout.buffer.write("caf\\u00e9 latin-1\\n".encode("latin-1"))
sys.stdout.flush()
os.makedirs("out", exist_ok=True)
open("out/result.txt", "w").write("kept")
print("SCRIPT-END", flush=True)
"""
SHOWN = "caf\ufffd latin-1"
PASSING_VERIFIER = "import sys; sys.exit(0)\n"  # the verifier is not what is tested here


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "badbyte.py").write_text(BADBYTE)
    return folder


def test_the_kaggle_kernel_keeps_a_scripts_output_and_files_past_a_latin1_byte(tmp_path):
    spec = kernel.KernelSpec(
        username="ada",
        name="tpuwizard-r1",
        shape="TpuV5E8",
        timeout_s=600,
        script="badbyte.py",
        script_args=(),
        fetch=("out/**",),
        expect="cpu",
    )
    source = kernel.kernel_source(spec, kernel.pack_folder(_project(tmp_path), "badbyte.py").data)
    stub = base64.b64encode(PASSING_VERIFIER.encode()).decode()
    source = re.sub(r"^VERIFIER = .*$", f"VERIFIER = {stub!r}", source, count=1, flags=re.M)
    working = tmp_path / "working"
    working.mkdir()
    (tmp_path / "kernel.py").write_text(source)
    done = subprocess.run(
        [sys.executable, "-u", str(tmp_path / "kernel.py")],
        cwd=working,
        capture_output=True,
        timeout=120,
        check=False,
    )
    said = done.stdout.decode("utf-8")  # what reaches Kaggle's log is UTF-8 throughout
    assert done.returncode == 0, said + done.stderr.decode(errors="replace")
    assert "SCRIPT-START" in said and SHOWN in said and "SCRIPT-END" in said
    assert "[tpuwizard] your script exited 0" in said
    out = working / kernel.OUTPUT_FOLDER
    assert (out / "output.txt").read_text("utf-8").splitlines() == [
        "SCRIPT-START",
        SHOWN,
        "SCRIPT-END",
    ]
    assert (out / "files" / "out" / "result.txt").read_text() == "kept"


def test_the_colab_script_cell_keeps_a_scripts_output_and_files_past_a_latin1_byte(tmp_path):
    content = tmp_path / "content"
    src = content / "tpuwizard-r1" / "src"
    src.mkdir(parents=True)
    (src / "badbyte.py").write_text(BADBYTE)
    (tmp_path / "cell.py").write_text(
        cells.script_cell("tpuwizard-r1", "badbyte.py", (), ("out/**",))
    )
    done = subprocess.run(
        [sys.executable, "-u", str(tmp_path / "cell.py")],
        cwd=content,
        capture_output=True,
        timeout=120,
        check=False,
    )
    said = done.stdout.decode("utf-8")
    assert done.returncode == 0, said + done.stderr.decode(errors="replace")
    assert SHOWN in said and "[tpuwizard] your script exited 0" in said
    out = content / "tpuwizard-r1" / "out"
    assert SHOWN in (out / "output.txt").read_text("utf-8")
    assert (out / "script_exit").read_text() == "0"
    with tarfile.open(fileobj=io.BytesIO((out / "files.tar.gz").read_bytes())) as packed:
        assert packed.getnames() == ["out/result.txt"]


class _ExecPrintsBytes(ColabProgram):
    """``colab exec`` as a process that prints a byte that is not UTF-8 (on either stream)."""

    def __init__(self) -> None:
        super().__init__(["colab"])

    def exec_argv(self, name: str, cell: Path, timeout_s: float, env: dict[str, str]) -> list[str]:
        code = (
            "import sys; sys.stdout.buffer.write(b'caf\\xe9 latin-1\\nafter\\n'); "
            "sys.stderr.buffer.write(b'\\xff\\n')"
        )
        return [sys.executable, "-c", code]

    def call(self, what: str, *args: str, timeout_s: float = 300) -> str:
        return ""


def test_a_followed_colab_exec_shows_a_latin1_byte_and_reads_on(tmp_path):
    script = tmp_path / "project" / "main.py"
    script.parent.mkdir()
    script.write_text("print('hi')\n")
    run = prepare_run(script, (), (), 5, "r1", tmp_path / "runs" / "r1", True)
    events = list(follow_exec(_ExecPrintsBytes(), run, tmp_path / "c.py", 60, "running", 5.0))
    assert events == [ScriptLine(worker=0, text=SHOWN), ScriptLine(worker=0, text="after")]


def test_a_colab_commands_words_with_a_latin1_byte_are_read_not_refused(tmp_path):
    printer = tmp_path / "colab.py"
    printer.write_text("import sys\nsys.stdout.buffer.write(b'[colab] caf\\xe9\\n')\n")
    program = ColabProgram([sys.executable, str(printer)])
    assert program.call("listing the sessions", "sessions") == "[colab] caf\ufffd\n"
