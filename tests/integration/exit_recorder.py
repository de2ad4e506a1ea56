"""``python -m tests.integration.exit_recorder FILE CMD...``: run CMD and write to FILE the code
a shell would show for it (128 + N when a signal ended it) and its process id, once it ended.
It outlives a hangup of its terminal (its SIGHUP and SIGTERM are caught, and it writes nothing
there); CMD starts with the default action for every signal, as a shell's job does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys


def main() -> None:
    code_file, argv = sys.argv[1], sys.argv[2:]
    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)  # a caught signal is reset to default in CMD
    proc = subprocess.Popen(argv)
    with open(code_file + ".pid", "w") as f:
        f.write(str(proc.pid))
    code = proc.wait()
    with open(code_file + ".part", "w") as f:
        json.dump({"code": 128 - code if code < 0 else code, "pid": proc.pid}, f)
    os.replace(code_file + ".part", code_file)


if __name__ == "__main__":
    main()
