"""The generated notebooks, validated and executed for real by nbclient on a CPU kernel."""

import json
import subprocess
import zipfile

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tests.conftest import tpuwizard_cmd
from tpuwizard.core.evidence.notebook import WRITEFILE_LINE, build_notebook
from tpuwizard.core.evidence.receipt import check_receipt
from tpuwizard.core.evidence.verifier import verifier_path


def with_parameters(nb, expect, precision=False, trace=False):
    for cell in nb.cells:
        if "parameters" in cell.metadata.get("tags", []):
            cell.source = (
                f'EXPECT = "{expect}"\nINSTALL_IF_MISSING = False\n'
                f"PRECISION = {precision}\nTRACE = {trace}\n"
            )
            return nb
    raise AssertionError("the notebook has no parameters cell")


def execute(nb, cwd):
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    ).execute()


def outputs_text(nb):
    return "".join(
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )


@pytest.mark.parametrize("platform", ["colab", "kaggle"])
def test_notebook_validates_and_carries_the_verifier_byte_for_byte(platform):
    nb = build_notebook(platform)
    nbformat.validate(nb)
    verifier_cells = [c for c in nb.cells if c.source.startswith(WRITEFILE_LINE)]
    assert len(verifier_cells) == 1
    assert verifier_cells[0].source[len(WRITEFILE_LINE) :] == verifier_path().read_text()
    text = "\n".join(c.source for c in nb.cells)
    assert "restart" in text.lower() and "v5e" in text
    assert nb.metadata["tpuwizard"]["accelerator"] == (
        "v5litepod-1" if platform == "colab" else "v5litepod-8"
    )


def test_cpu_execution_writes_a_receipt_that_passes_the_check(tmp_path):
    nb = with_parameters(build_notebook("colab"), "cpu")
    execute(nb, tmp_path)
    # %%writefile left the verifier on disk exactly as shipped.
    assert (tmp_path / "tpu_verify.py").read_text() == verifier_path().read_text()
    receipt = json.loads((tmp_path / "receipt.json").read_text())
    assert receipt["ok"] and receipt["observed_backend"] == "cpu"
    assert check_receipt(receipt, "cpu").ok
    proc = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(tmp_path / "receipt.json"), "--expect", "cpu"),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    text = outputs_text(nb)
    assert "PASS: all" in text and "receipt_sha256" in text
    assert "Not running in Colab" in text
    assert "TPUWIZARD {" not in text


def test_precision_and_trace_cells_on_cpu(tmp_path):
    nb = with_parameters(build_notebook("kaggle"), "cpu", precision=True, trace=True)
    execute(nb, tmp_path)
    receipt = json.loads((tmp_path / "receipt.json").read_text())
    assert check_receipt(receipt, "cpu", folder=tmp_path).ok
    assert 0 < receipt["precision"]["bf16"]["max_rel_error"] < 2e-2
    text = outputs_text(nb)
    assert "bf16  max |error|" in text and "(bfloat16 in, bfloat16 out)" in text
    with zipfile.ZipFile(tmp_path / "trace.zip") as packed:
        names = set(packed.namelist())
    assert {f"trace/{f['path']}" for f in receipt["trace"]["files"]} <= names
    assert "Packed as" in text


def test_tpu_expected_on_cpu_fails_at_the_backend_and_leaves_no_receipt(tmp_path):
    nb = with_parameters(build_notebook("kaggle"), "tpu")
    with pytest.raises(CellExecutionError, match="backend boundary"):
        execute(nb, tmp_path)
    assert not (tmp_path / "receipt.json").exists()
    failed = json.loads((tmp_path / "receipt-failed.json").read_text())
    assert failed["ok"] is False and failed["failed_boundary"] == "backend"
    assert not check_receipt(failed, "tpu", "v5litepod-8").ok


def test_cli_writes_the_notebook_and_prints_the_check_command(tmp_path):
    out = tmp_path / "nb" / "colab.ipynb"
    proc = subprocess.run(
        tpuwizard_cmd("notebook", "--platform", "colab", "--out", str(out)),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    nbformat.validate(nbformat.read(str(out), as_version=4))
    assert "--accelerator v5litepod-1" in proc.stderr
    bad = subprocess.run(
        tpuwizard_cmd("notebook", "--accelerator", "v5e-1"),
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and "v5litepod-1" in bad.stderr
    assert not list(tmp_path.glob("*.ipynb"))
