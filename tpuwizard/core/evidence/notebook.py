"""The free notebook route: a Colab or Kaggle notebook that carries the verifier.

The notebook writes the shipped verifier to a file with ``%%writefile`` (the cell holds the
verifier's text byte for byte, read from the installed file when the notebook is generated), runs
it in a fresh process so the kernel never locks in a CPU backend, shows the receipt and offers it
for download. ``tpuwizard receipt check`` then tells whether it proves a TPU run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.verifier import VERIFIER_FILENAME, verifier_source
from tpuwizard.core.plan import catalog
from tpuwizard.core.remote.bootstrap import TPU_REQUIREMENT  # the VM's pin, installed here too

RECEIPT_NAME = "receipt.json"
# Where a browser saves the download by default, as the wizard's receipt field shows it: the
# check command names it, so it runs as typed from any folder.
DOWNLOADED_RECEIPT = f"~/Downloads/{RECEIPT_NAME}"
WRITEFILE_LINE = f"%%writefile {VERIFIER_FILENAME}\n"


@dataclass(frozen=True)
class NotebookPlatform:
    key: str
    title: str
    accelerator: str  # the free TPU it offers, as a Cloud TPU type name
    upload: str  # how the written file gets into the platform
    switch_steps: tuple[str, ...]
    run_all: str  # the platform's own menu item that runs every cell
    limits: str
    download: str  # how the user gets receipt.json back

    def default_slice(self) -> catalog.Slice:
        """The free TPU it offers, as a Slice: a name in this table, not one handed in."""
        return catalog.parse_accelerator(self.accelerator)


PLATFORMS: dict[str, NotebookPlatform] = {
    "colab": NotebookPlatform(
        key="colab",
        title="Google Colab",
        accelerator="v5litepod-1",
        upload="Open https://colab.research.google.com and choose **File → Upload notebook**, "
        "then pick the file.",
        switch_steps=(
            "Open **Runtime → Change runtime type**.",
            "Under *Hardware accelerator* choose **TPU** (the free tier offers *v5e-1*: one "
            "TPU v5e chip with 16 GiB of HBM) and press **Save**.",
            "If you already ran a cell, use **Runtime → Restart session** so JAX starts fresh "
            "and cannot keep a CPU backend.",
        ),
        run_all="**Runtime → Run all**",
        limits=(
            "The free tier's TPU is a v5e-1 (16 GiB HBM); sessions are short (around 1.5 hours "
            "have been reported) and TPUs are not always available. Save your receipt before the "
            "session ends."
        ),
        download="The last cell downloads receipt.json through your browser.",
    ),
    "kaggle": NotebookPlatform(
        key="kaggle",
        title="Kaggle",
        accelerator="v5litepod-8",
        upload="On https://www.kaggle.com choose **Create → New Notebook**, then **File → "
        "Import Notebook** and pick the file.",
        switch_steps=(
            "In the notebook editor open **Settings → Accelerator** and choose **TPU VM v5e-8** "
            "(8 TPU v5e chips, 16 GiB of HBM each).",
            "Accept the restart, or use **Run → Restart & clear cell outputs**, so JAX starts "
            "fresh.",
        ),
        run_all="**Run all**",
        limits=(
            "Kaggle's TPU VM v5e-8 has 8 chips; TPU time is limited by a weekly quota that "
            "Kaggle shows in the accelerator menu, and a session stops when it is idle."
        ),
        download=(
            "receipt.json is saved in /kaggle/working: download it from the **Output** panel "
            "on the right (or save a version and download it from the notebook's Output tab)."
        ),
    ),
}


def plain(markdown: str) -> str:
    """The steps' markdown emphasis removed, for terminals."""
    return markdown.replace("**", "").replace("*", "")


def walk_steps(plat: NotebookPlatform) -> list[str]:
    """What the user does once the notebook is written, in order and each once (markdown):
    upload it, switch the runtime to TPU, run every cell, bring the receipt back. The wizard,
    plain mode and ``tpuwizard notebook`` number these; the check command comes after."""
    return [plat.upload, *plat.switch_steps, f"Run every cell: {plat.run_all}. {plat.download}"]


def get_platform(key: str) -> NotebookPlatform:
    if key not in PLATFORMS:
        raise BadInput(f"Unknown notebook platform '{key}'. Choose one of: {', '.join(PLATFORMS)}.")
    return PLATFORMS[key]


def build_notebook(platform_key: str, slice_: catalog.Slice | None = None) -> Any:  # NotebookNode
    """A validated ``nbformat`` v4 notebook for ``platform_key`` (``colab`` or ``kaggle``), for
    ``slice_`` (None: the platform's own TPU)."""
    import nbformat
    from nbformat import v4

    plat = get_platform(platform_key)
    slice_ = slice_ or plat.default_slice()
    steps = "\n".join(f"{i}. {s}" for i, s in enumerate(plat.switch_steps, 1))
    check = check_command(platform_key, accelerator=slice_.name)
    cells = [
        v4.new_markdown_cell(
            f"# Prove your JAX code runs on a {plat.title} TPU\n\n"
            "This notebook was written by tpuwizard. It asks JAX for the TPU explicitly, runs a "
            "small prediction whose answer is known, checks where the result lives and that every "
            "TPU device takes part, and writes a receipt you can check on your own computer.\n\n"
            f"**Before you run anything, switch the runtime to TPU:**\n\n{steps}\n\n"
            f"Then run every cell: {plat.run_all}.\n\n"
            f"**Limits.** {plat.limits}\n\n"
            f"The receipt should show {slice_.devices} device(s) of kind "
            f"`{slice_.generation.device_kind}` ({slice_.name})."
        ),
        _tagged(
            v4.new_code_cell(
                "# Parameters. Leave them as they are on a TPU runtime.\n"
                'EXPECT = "tpu"  # the platform that must run the computation\n'
                "INSTALL_IF_MISSING = True  # install jax[tpu] when JAX or libtpu is missing\n"
                "PRECISION = True  # also measure fp32 / bf16 / int8 error\n"
                "TRACE = True  # also capture a profiler trace into trace/\n"
            ),
            "parameters",
        ),
        v4.new_code_cell(
            f"JAX_REQUIREMENT = {TPU_REQUIREMENT!r}  # the one tpuwizard's TPU VMs install\n"
            + _ENVIRONMENT_CELL
        ),
        v4.new_markdown_cell(
            "## The verifier\n\nThe next cell saves tpuwizard's verifier, unchanged, as "
            f"`{VERIFIER_FILENAME}`; the cell after it runs it in a fresh Python process."
        ),
        v4.new_code_cell(WRITEFILE_LINE + verifier_source()),
        v4.new_code_cell(_RUN_CELL),
        v4.new_markdown_cell("## The receipt"),
        v4.new_code_cell(_SHOW_RECEIPT_CELL),
        v4.new_markdown_cell(
            "## Precision profile\n\nThe same matmul and small MLP in fp32 (the reference), "
            "bf16 and int8, each compared with float64 NumPy: how much each format costs."
        ),
        v4.new_code_cell(_PRECISION_CELL),
        v4.new_markdown_cell(
            "## Profiler trace\n\nA `jax.profiler` trace of the verifier's compute steps, "
            "packed as `trace.zip`. Unzip it and open it with TensorBoard's profile plugin "
            "(`tensorboard --logdir trace`), with xprof (`xprof --logdir trace`), or load its "
            "`perfetto_trace.json.gz` at https://ui.perfetto.dev."
        ),
        v4.new_code_cell(_TRACE_CELL),
        v4.new_code_cell(_DOWNLOAD_CELLS[plat.key]),
        v4.new_markdown_cell(
            f"## Check it on your computer\n\n{plat.download} Then run (with the path where "
            f"your browser saved it, if not its Downloads folder):\n\n```\n{check}\n```\n\n"
            "It recomputes the receipt's hash and checks the backend, the device count and the "
            "device kind. A receipt from a CPU runtime does not pass."
        ),
    ]
    nb = v4.new_notebook(cells=cells)
    nb.metadata.update(
        {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            "tpuwizard": {"platform": plat.key, "accelerator": slice_.name},
        }
    )
    if plat.key == "colab":
        nb.metadata["accelerator"] = "TPU"
    nbformat.validate(nb)
    return nb


def write_notebook(platform_key: str, out: Path, slice_: catalog.Slice | None = None) -> Path:
    import nbformat

    nb = build_notebook(platform_key, slice_)
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(out))
    return out


def check_command(
    platform_key: str, receipt: str = DOWNLOADED_RECEIPT, accelerator: str | None = None
) -> str:
    """The command that checks the downloaded receipt (the browser's downloads folder unless
    ``receipt`` says where)."""
    acc = accelerator or get_platform(platform_key).accelerator
    return f"tpuwizard receipt check {receipt} --expect tpu --accelerator {acc}"


def _tagged(cell: Any, tag: str) -> Any:
    cell.metadata["tags"] = [tag]
    return cell


_ENVIRONMENT_CELL = """\
# What is installed, and jax[tpu] only when it is missing.
import subprocess
import sys
from importlib import metadata


def installed(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


versions = {name: installed(name) for name in ("jax", "jaxlib", "libtpu", "libtpu-nightly")}
print("Python", sys.version.split()[0], versions)
missing = versions["jax"] is None or (
    EXPECT == "tpu" and not (versions["libtpu"] or versions["libtpu-nightly"]))
if missing and INSTALL_IF_MISSING:
    print("Installing", JAX_REQUIREMENT, "...")
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", JAX_REQUIREMENT])
    print("Installed:", {name: installed(name) for name in ("jax", "jaxlib", "libtpu")})
elif missing:
    print("JAX for", EXPECT, "is missing and INSTALL_IF_MISSING is False.")
"""

_RUN_CELL = """\
# Run the verifier in a fresh process and stream what it prints.
import json
import os

env = dict(os.environ, COURSE_EXPECT_PLATFORM=EXPECT, JAX_PLATFORMS=EXPECT)
extras = (["--precision"] if PRECISION else []) + (["--trace"] if TRACE else [])
proc = subprocess.Popen(
    [sys.executable, "-u", "tpu_verify.py", "--expect", EXPECT, "--receipt", "receipt.json",
     *extras],
    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
for line in proc.stdout:
    if not line.startswith("TPUWIZARD "):  # machine-readable lines are for tpuwizard
        print(line, end="")
if proc.wait() != 0:
    with open("receipt.json") as f:
        boundary = json.load(f).get("failed_boundary")
    os.replace("receipt.json", "receipt-failed.json")  # never leave a failure looking like proof
    raise RuntimeError(
        f"The verifier failed at the {boundary} boundary: this runtime did not prove a "
        f"{EXPECT} run. Check the runtime type, restart the session and run all cells again.")
"""

_SHOW_RECEIPT_CELL = """\
with open("receipt.json") as f:
    receipt = json.load(f)
rows = [
    ("backend (expected / observed)",
     f"{receipt['expected_backend']} / {receipt['observed_backend']}"),
    ("devices", f"{receipt['device_count']} x {sorted(set(receipt['device_kinds']))}"),
    ("prediction", receipt["prediction"]),
    ("max |error| vs NumPy", receipt["max_absolute_error"]),
    ("pmap sum of squares", f"{receipt['pmap_sum_of_squares']} "
                            f"(expected {receipt['expected_sum_of_squares']})"),
    ("jax / jaxlib / libtpu", f"{receipt['jax']} / {receipt['jaxlib']} / {receipt['libtpu']}"),
    ("contract held", receipt["contract_ok"]),
    ("receipt_sha256", receipt["receipt_sha256"]),
]
width = max(len(name) for name, _ in rows)
for name, value in rows:
    print(f"{name:<{width}}  {value}")
print("\\nSaved:", os.path.abspath("receipt.json"))
"""

_PRECISION_CELL = """\
precision = receipt.get("precision")
if not precision:
    print("No precision profile: set PRECISION = True in the parameters cell and run all.")
else:
    for variant in ("fp32", "bf16", "int8"):
        e = precision[variant]
        print(f"{variant:<5} max |error| {e['max_abs_error']:.3g}  relative "
              f"{e['max_rel_error']:.2g}  ({e['dtype']} in, {e['result_dtype']} out)")
"""

_TRACE_CELL = """\
import shutil

trace = receipt.get("trace")
if not trace:
    print("No trace: set TRACE = True in the parameters cell and run all.")
else:
    for f in trace["files"]:
        print(f"{f['bytes']:>12,}  trace/{f['path']}")
    print("Packed as", shutil.make_archive("trace", "zip", ".", "trace"))
"""

_DOWNLOAD_CELLS = {
    "colab": """\
try:
    from google.colab import files
except ImportError:
    print("Not running in Colab: receipt.json is at", os.path.abspath("receipt.json"))
else:
    files.download("receipt.json")
    if os.path.exists("trace.zip"):
        files.download("trace.zip")
""",
    "kaggle": """\
print("receipt.json (and trace.zip, if traced) are in", os.path.abspath("."),
      "- download them from the Output panel.")
""",
}
