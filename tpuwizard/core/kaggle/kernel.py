"""The kernel tpuwizard pushes to Kaggle: one generated Python script that carries the verifier
and the user's script folder (a gzip'd tar, base64 inside the script), so a run owns exactly
one thing on Kaggle, never a private dataset beside it.

Its metadata is private, asks for a TPU shape Kaggle offers now, and never pins a Docker image
(a pinned ``docker_image`` runs on CPU although a TPU was asked for: Kaggle/kaggle-cli#1197).
"""

from __future__ import annotations

import base64
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.verifier import verifier_source
from tpuwizard.core.remote.sent_files import FolderSent, LeftOut, walk, whole_home_or_root

KERNEL_FILE = "tpuwizard_kernel.py"
METADATA_FILE = "kernel-metadata.json"  # the name kaggle's kernels_push reads
# The TPU Kaggle offers now (kaggle 2.2.5 names it the default TPU), by the names a user may type.
TPU_SHAPE = "TpuV5E8"
SHAPE_NAMES = {"tpuv5e8": TPU_SHAPE, "v5litepod-8": TPU_SHAPE, "v5e-8": TPU_SHAPE}
# The Cloud TPU type with the same chips, for the receipt check (8 devices, one host).
CLOUD_TYPE = {TPU_SHAPE: "v5litepod-8"}
# Retired shapes Kaggle's server substitutes, from kaggle 2.2.5's own table (it only warns).
RETIRED_SHAPES = {
    "tpuv38": "runs on the default TPU (TpuV5E8) instead",
    "tpu1vmv38": "runs on the default TPU (TpuV5E8) instead",
    "tpuv232": "runs on CPU instead, with no accelerator at all",
    "tpuv2256": "runs on CPU instead, with no accelerator at all",
}
# tpuwizard's own bound on the packed folder (Kaggle states none for a script's text): the
# whole folder travels inside the kernel's source on every push.
PACKED_LIMIT_BYTES = 1024 * 1024
OUTPUT_FOLDER = "tpuwizard"  # under the kernel's working folder, which Kaggle keeps as output


def machine_shape(name: str | None) -> str:
    """The Kaggle machine shape for ``--accelerator`` (default: the TPU Kaggle offers now)."""
    if name is None:
        return TPU_SHAPE
    key = name.strip().lower()
    if key in RETIRED_SHAPES:
        raise BadInput(
            f"Kaggle retired the shape {name}: a kernel asking for it {RETIRED_SHAPES[key]}. "
            f"Leave out --accelerator to use {TPU_SHAPE} (8 TPU v5e chips)."
        )
    if key not in SHAPE_NAMES:
        raise BadInput(
            f"--accelerator {name} is not a TPU Kaggle offers: leave it out (or give "
            f"v5litepod-8) for {TPU_SHAPE}."
        )
    return SHAPE_NAMES[key]


@dataclass(frozen=True)
class PackedFolder:
    """The script's folder as a gzip'd tar, and what of it went in (said before the push)."""

    data: bytes
    sent: FolderSent


def pack_folder(
    folder: Path,
    script: str | None = None,
    limit_bytes: int = PACKED_LIMIT_BYTES,
    carried: str = "a folder carried inside a Kaggle kernel; nothing was pushed",
    sent_to: str = "inside a Kaggle kernel",
) -> PackedFolder:
    """The folder as a gzip'd tar of the files a TPU route would copy too (never a secret, a
    cache, a venv, runs/, a link but the script ``script``, or what ``.tpuwizardignore``
    names: :mod:`tpuwizard.core.remote.sent_files`), refused before anything is sent when it
    is over ``limit_bytes`` (``carried``: what the limit is for, and what was not done).
    Kaggle's kernel and Colab's upload carry a folder the same way. The home folder and the
    root are refused, as on the TPU routes (``sent_to``: where the folder would go)."""
    refused = whole_home_or_root(folder, script or "your script", sent_to)
    if refused is not None:
        raise BadInput(refused)
    buffer, left, files, size = io.BytesIO(), LeftOut(), 0, 0
    # dereference: the one link among the files (the script) goes as its target's content.
    with tarfile.open(fileobj=buffer, mode="w:gz", dereference=True) as tar:
        for sent in walk(folder, script, left):
            tar.add(sent.path, arcname=sent.rel, recursive=False)
            files, size = files + 1, size + sent.size
            if buffer.tell() > limit_bytes:
                break
    packed = buffer.getvalue()
    if len(packed) > limit_bytes:
        mib = limit_bytes % (1024 * 1024) == 0 and limit_bytes > 1024 * 1024
        shown = f"{limit_bytes // (1024 * 1024)} MiB" if mib else f"{limit_bytes // 1024} KiB"
        raise BadInput(
            f"{folder} packs to more than {shown} (tpuwizard's limit for {carried}). Move data "
            "files out of the script's folder (or into runs/, or name them in a "
            ".tpuwizardignore file there; both are left out) and try again."
        )
    return PackedFolder(packed, FolderSent(files, size, tuple(left.secrets), left.ignored))


@dataclass(frozen=True)
class KernelSpec:
    """What one run pushes: the slug (``<user>/<name>``), its shape and deadline, the script."""

    username: str
    name: str  # tpuwizard-<run id>: the slug's second half, and the kernel's title
    shape: str
    timeout_s: int
    script: str  # the script's path inside its folder
    script_args: tuple[str, ...]
    fetch: tuple[str, ...]
    expect: str  # the platform the verifier must see: tpu on Kaggle, cpu in practice
    # --with / --requirements: installed at the kernel's start (so its internet is on).
    packages: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        return f"{self.username}/{self.name}"


def kernel_name(run_id: str) -> str:
    """The kernel's slug name: what `status` later recognises as tpuwizard's."""
    return f"tpuwizard-{run_id}".lower()


def metadata(spec: KernelSpec) -> dict[str, Any]:
    """``kernel-metadata.json``: private, on a TPU, no pinned image; internet only where
    packages are installed at its start."""
    return {
        "id": spec.ref,
        "title": spec.name,
        "code_file": KERNEL_FILE,
        "language": "python",
        "kernel_type": "script",
        "is_private": True,
        "enable_gpu": False,
        "enable_tpu": True,
        "enable_internet": bool(spec.packages),
        "machine_shape": spec.shape,
        "dataset_sources": [],
        "competition_sources": [],
        "kernel_sources": [],
        "model_sources": [],
    }


def kernel_source(spec: KernelSpec, packed: bytes) -> str:
    """The kernel's one script: unpack, verify with the kernel's own JAX, run, keep output."""
    settings = {
        "expect": spec.expect,
        "script": spec.script,
        "args": list(spec.script_args),
        "fetch": list(spec.fetch),
        "packages": list(spec.packages),
        "output": OUTPUT_FOLDER,
    }
    return (
        f"# tpuwizard run {spec.name}: the verifier, then your script, on Kaggle's TPU.\n"
        f"SETTINGS = {json.dumps(settings)!r}\n"
        f"VERIFIER = {base64.b64encode(verifier_source().encode()).decode()!r}\n"
        f"FOLDER = {base64.b64encode(packed).decode()!r}\n" + _RUNNER
    )


def write_kernel_folder(spec: KernelSpec, packed: bytes, folder: Path) -> None:
    """The folder kaggle's ``kernels_push`` reads: the metadata and the one script."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / METADATA_FILE).write_text(json.dumps(metadata(spec), indent=2))
    (folder / KERNEL_FILE).write_text(kernel_source(spec, packed))


# Runs on Kaggle (Python 3.10 or newer); its working folder is what Kaggle keeps as output.
_RUNNER = r"""
import base64, glob, io, json, os, shutil, subprocess, sys, tarfile, tempfile

settings = json.loads(SETTINGS)
out = os.path.join(os.getcwd(), settings["output"])
os.makedirs(os.path.join(out, "files"), exist_ok=True)
work = tempfile.mkdtemp(prefix="tpuwizard-")
src = os.path.join(work, "src")
with tarfile.open(fileobj=io.BytesIO(base64.b64decode(FOLDER)), mode="r:gz") as tar:
    for member in tar.getmembers():
        safe = not member.name.startswith(("/", "..")) and "/../" not in member.name
        if member.isfile() and safe:
            tar.extract(member, src)
verifier = os.path.join(work, "tpu_verify.py")
with open(verifier, "wb") as f:
    f.write(base64.b64decode(VERIFIER))
expect = settings["expect"]
env = dict(os.environ, COURSE_EXPECT_PLATFORM=expect, JAX_PLATFORMS=expect)
if settings["packages"]:
    # Into a folder of the run's own, before the verifier, so both see what the script gets;
    # the kernel's own packages (its JAX among them) stay as they are.
    site = os.path.join(work, "site")
    print("[tpuwizard] installing " + ", ".join(settings["packages"]), flush=True)
    code = subprocess.call(
        [sys.executable, "-m", "pip", "install", "--quiet", "--target", site]
        + settings["packages"]
    )
    if code:
        print("[tpuwizard] pip install failed (exit %d): your script was not run" % code,
              flush=True)
        sys.exit(code)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (site, env.get("PYTHONPATH")) if p)
print("[tpuwizard] verifying JAX on this kernel (expected platform: %s)" % expect, flush=True)
code = subprocess.call(
    [sys.executable, "-u", verifier, "--receipt", os.path.join(out, "receipt.json")], env=env
)
if code:
    print("[tpuwizard] the verifier failed (exit %d): your script was not run" % code, flush=True)
    sys.exit(code)
print("[tpuwizard] running %s" % settings["script"], flush=True)
proc = subprocess.Popen(
    [sys.executable, "-u", settings["script"]] + settings["args"],
    cwd=src, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
)
if hasattr(sys.stdout, "reconfigure"):
    sys.stdout.reconfigure(errors="replace")  # a log that cannot show a character marks it
# Read as bytes: a byte that is not UTF-8 is the script's to print, shown as U+FFFD, never
# the end of this runner (and with it the script's output and files).
with open(os.path.join(out, "output.txt"), "w", encoding="utf-8") as kept:
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace")
        sys.stdout.write(line)
        sys.stdout.flush()
        kept.write(line)
code = proc.wait()
with open(os.path.join(out, "script_exit"), "w") as f:  # the script's own code, for the summary
    f.write(str(code))
for pattern in settings["fetch"]:
    for path in glob.glob(os.path.join(src, pattern), recursive=True):
        if os.path.isfile(path):
            target = os.path.join(out, "files", os.path.relpath(path, src))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(path, target)
print("[tpuwizard] your script exited %d" % code, flush=True)
sys.exit(code)
"""
