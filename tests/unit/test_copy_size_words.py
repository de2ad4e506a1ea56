"""The plan line and the copy line name one size (issue 49, the newcomer's round 5): the plan said
"34.4 kB sent" (the files) and the copy "copied ... 51.2 kB" (the tar's bytes). Both now count
the files' own sizes; the copy adds what went over the wire and how."""

from __future__ import annotations

import sys

from tpuwizard.core.launch.workers.script_pass import folder_synced
from tpuwizard.core.remote.sync import LocalFolder, measure_folder, sync_folder
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.words.event_text import synced_words
from tpuwizard.words.sent_text import folder_sentence, size_words


def test_a_first_copy_counts_the_files_as_the_plan_line_does(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.py").write_text("print('hello')\n" * 1200)
    (src / "data.csv").write_text("1,2,3\n" * 3000)
    home = tmp_path / "w0"
    (home / ".tpuwizard" / "venv" / "bin").mkdir(parents=True)
    (home / ".tpuwizard" / "venv" / "bin" / "python").symlink_to(sys.executable)
    planned = measure_folder(src, "main.py")
    synced = sync_folder(LocalTransport([home]), 0, LocalFolder(src, "main.py"), use_rsync=False)
    assert synced.files_bytes == planned.size and synced.bytes_sent > planned.size  # the tar's
    plan = folder_sentence(planned, "to each worker")
    copy = synced_words(folder_synced([synced]))
    files = size_words(planned.size)
    assert plan == f"Your script's folder: 2 files, {files}, sent to each worker."
    assert copy.startswith(
        f"copied 2 changed file(s), {files} ({size_words(synced.bytes_sent)} sent as a tar) "
        "to 1 worker in "
    )
