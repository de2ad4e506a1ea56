"""Tiny pure-Python wheels made by hand, for the sandbox's wheel folder (nothing downloaded)."""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import http.server
import re
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

from tpuwizard.sandbox.serving import STOP_POLL_S  # its shutdown() waits that long, not 0.5 s


def make_wheel(
    folder: Path, name: str, version: str, code: str = "", requires: tuple[str, ...] = ()
) -> Path:
    """Write ``name-version-py3-none-any.whl`` into ``folder``: one module ``name`` holding
    ``code``, and a RECORD with every file's hash, as a built wheel has."""
    module = name.replace("-", "_")
    dist = f"{module}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    files = {
        f"{module}/__init__.py": code,
        f"{dist}/METADATA": metadata,
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


@contextlib.contextmanager
def served_index(folder: Path) -> Iterator[str]:
    """A package index on 127.0.0.1 serving the wheels of ``folder`` (PEP 503 pages written for
    those there now); yields its ``/simple`` address, and stops serving on leaving."""
    folder.mkdir(parents=True, exist_ok=True)
    for wheel in sorted(folder.glob("*.whl")):
        name = re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
        listing = folder / "simple" / name
        listing.mkdir(parents=True, exist_ok=True)
        links = "".join(
            f'<a href="../../{w.name}">{w.name}</a>\n'
            for w in sorted(folder.glob(f"{wheel.name.split('-')[0]}-*.whl"))
        )
        (listing / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": STOP_POLL_S}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Each request unlogged: a test's output holds what the launch said."""
