"""What a run puts on the Colab runtime: the script's folder packed as one file (``colab upload``
takes one file), and the two cells ``colab exec`` runs there, the verifier's then the script's.

An exec's exit code does not say whether its code failed (colab_cli's execution.py: an
exception is printed, the command still exits 0), so each cell writes its exit code to a file
the run downloads. Each cell runs its program as a child process and prints the child's lines
itself, so they reach ``colab exec``'s stdout whether or not the kernel forwards a child's
own output.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from tpuwizard.core.evidence.verifier import verifier_source
from tpuwizard.core.kaggle.kernel import PackedFolder
from tpuwizard.core.kaggle.kernel import pack_folder as kaggle_pack

# tpuwizard's own bound: the CLI sends the file base64 in one request (its files.py).
PACKED_LIMIT_BYTES = 20 * 1024 * 1024


def pack_folder(folder: Path, script: str | None = None) -> PackedFolder:
    """The folder as Kaggle's kernel carries it (the same files a TPU route copies), within
    Colab's one-request upload limit."""
    return kaggle_pack(
        folder,
        script,
        PACKED_LIMIT_BYTES,
        "a folder uploaded to Colab in one request; nothing was started",
        "to the Colab runtime",
    )


def bundle_name(session: str) -> str:
    """The packed folder's name on the runtime, in ``/content``."""
    return f"{session}.tar.gz"


def verify_cell(session: str) -> str:
    """Unpack the folder beside the bundle, then run the verifier; its exit code is kept."""
    verifier = base64.b64encode(verifier_source().encode()).decode()
    return (
        f"# tpuwizard run {session}: unpack your script's folder, verify JAX on this runtime.\n"
        f"RUN = {session!r}\nVERIFIER = {verifier!r}\n" + _COMMON + _VERIFY
    )


def script_cell(session: str, script: str, args: tuple[str, ...], fetch: tuple[str, ...]) -> str:
    """Run the script in its folder, keep its output, pack the ``--fetch`` files."""
    settings = json.dumps({"script": script, "args": list(args), "fetch": list(fetch)})
    return (
        f"# tpuwizard run {session}: your script, its output kept, its files packed.\n"
        f"RUN = {session!r}\nSETTINGS = {settings!r}\n" + _COMMON + _SCRIPT
    )


# Runs in /content on the runtime (its working folder in every exec).
_COMMON = r"""
import glob, json, os, subprocess, sys, tarfile
base = os.path.abspath(RUN)
src, out = os.path.join(base, "src"), os.path.join(base, "out")
os.makedirs(src, exist_ok=True)
os.makedirs(out, exist_ok=True)


def tpuwizard_follow(argv, cwd, kept=None):
    proc = subprocess.Popen(argv, cwd=cwd, env=dict(os.environ), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    # Read as bytes: a byte that is not UTF-8 is the program's to print, shown as U+FFFD,
    # never the end of this cell (and with it the script's output and files).
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace")
        sys.stdout.write(line)
        sys.stdout.flush()
        if kept is not None:
            kept.write(line)
    return proc.wait()
"""

_VERIFY = r"""
with tarfile.open(RUN + ".tar.gz", "r:gz") as tar:
    for member in tar.getmembers():
        safe = not member.name.startswith(("/", "..")) and "/../" not in member.name
        if member.isfile() and safe:
            tar.extract(member, src)
verifier = os.path.join(base, "tpu_verify.py")
with open(verifier, "wb") as f:
    f.write(__import__("base64").b64decode(VERIFIER))
expect = os.environ.get("COURSE_EXPECT_PLATFORM", "tpu")
print("[tpuwizard] verifying JAX on this runtime (expected platform: %s)" % expect, flush=True)
code = tpuwizard_follow([sys.executable, "-u", verifier, "--receipt",
                         os.path.join(out, "receipt.json")], base)
with open(os.path.join(out, "verifier_exit"), "w") as f:
    f.write(str(code))
"""

_SCRIPT = r"""
settings = json.loads(SETTINGS)
print("[tpuwizard] running %s" % settings["script"], flush=True)
with open(os.path.join(out, "output.txt"), "w", encoding="utf-8") as kept:
    code = tpuwizard_follow([sys.executable, "-u", settings["script"]] + settings["args"], src,
                            kept)
with tarfile.open(os.path.join(out, "files.tar.gz"), "w:gz") as tar:
    for pattern in settings["fetch"]:
        for path in sorted(glob.glob(os.path.join(src, pattern), recursive=True)):
            if os.path.isfile(path):
                tar.add(path, arcname=os.path.relpath(path, src))
with open(os.path.join(out, "script_exit"), "w") as f:
    f.write(str(code))
print("[tpuwizard] your script exited %d" % code, flush=True)
"""
