"""rsync where both ends have it, the tar where the worker has none, on the sandbox's shell."""

from tests.sync_scenario import (
    big_edit_goes_by_rsync,
    needs_rsync,
    path_without_rsync,
    sync_three_times,
    worker_home,
)
from tpuwizard.core.launch.workers.script_pass import folder_synced
from tpuwizard.core.remote import rsync
from tpuwizard.core.remote.sync import LocalFolder, SyncResult, sync_folder
from tpuwizard.core.remote.transports import GcloudTransport, LocalTransport
from tpuwizard.words.event_text import synced_words


def sync_note(synced: list[SyncResult]) -> str:
    """The run's line about the copy, as its FolderSynced event is said."""
    return synced_words(folder_synced(synced))


def test_rsync_sends_only_what_changed_and_deletes_what_was_deleted(tmp_path):
    needs_rsync()
    home = worker_home(tmp_path / "w0")
    sync_three_times(LocalTransport([home]), home, tmp_path / "src", "rsync")


def test_a_worker_without_rsync_gets_the_tar_and_the_note_says_why(tmp_path):
    needs_rsync()  # rsync here, none on the worker's PATH: the worker decides
    home = worker_home(tmp_path / "w0")
    transport = LocalTransport([home], path=path_without_rsync(tmp_path / "bin"))
    sync_three_times(transport, home, tmp_path / "src", "tar")
    (tmp_path / "src" / "train.py").write_text("print(2)\n")
    result = sync_folder(transport, 0, LocalFolder(tmp_path / "src"))
    assert result.why_not_rsync == "no rsync on the worker"
    assert sync_note([result]).endswith("(tar: no rsync on the worker)")


def test_switching_between_rsync_and_tar_keeps_the_worker_right(tmp_path):
    needs_rsync()
    home = worker_home(tmp_path / "w0")
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("1")
    (src / "b.py").write_text("1")
    with_rsync = LocalTransport([home])
    without = LocalTransport([home], path=path_without_rsync(tmp_path / "bin"))
    assert sync_folder(with_rsync, 0, LocalFolder(src), rsync_from_bytes=0).method == "rsync"
    (src / "a.py").write_text("2")
    (src / "b.py").unlink()
    by_tar = sync_folder(without, 0, LocalFolder(src))
    assert (by_tar.method, by_tar.changed, by_tar.deleted) == ("tar", ["a.py"], ["b.py"])
    work = home / ".tpuwizard" / "work"
    assert (work / "a.py").read_text() == "2" and not (work / "b.py").exists()
    (src / "a.py").write_text("3")
    back = sync_folder(with_rsync, 0, LocalFolder(src), rsync_from_bytes=0)
    assert (back.method, back.changed) == ("rsync", ["a.py"]) and (work / "a.py").read_text() == "3"
    note = sync_note([back])
    assert note.startswith("copied 1 changed file(s)") and note.endswith("(rsync)")


def test_the_gcloud_transport_keeps_the_tar():
    gcloud = GcloudTransport("n", "us-central1-a", "p", 1)
    why = rsync.route(gcloud, 0, ".tpuwizard/work", "/usr/bin/rsync")
    assert why == "gcloud cannot carry rsync"


def test_rsync_carries_an_edit_to_a_big_file_and_the_tar_small_edits_and_first_copies(tmp_path):
    needs_rsync()
    home = worker_home(tmp_path / "w0")
    # On this machine rsync copies whole files (no delta without a network between the ends);
    # the delta itself is checked over SSH in tests/integration/test_sync_ssh.py.
    big_edit_goes_by_rsync(LocalTransport([home]), home, tmp_path / "src")


def test_rsync_sends_a_linked_script_as_its_target(tmp_path):
    needs_rsync()
    home = worker_home(tmp_path / "w0")
    src = tmp_path / "src"
    src.mkdir()
    (tmp_path / "v3.py").write_text("print('v3')\n")
    (src / "train.py").symlink_to(tmp_path / "v3.py")
    result = sync_folder(
        LocalTransport([home]), 0, LocalFolder.of_script(src / "train.py"), rsync_from_bytes=0
    )
    sent = home / ".tpuwizard" / "work" / "train.py"
    assert result.method == "rsync" and result.changed == ["train.py"]
    assert not sent.is_symlink() and sent.read_text() == "print('v3')\n"


def test_a_large_first_copy_says_how_far_it_is_at_each_tenth(tmp_path):
    """Issue 49, item 7: a 12 MB folder sent while the TPU bills says its progress, on two
    workers at once, each from a tenth up to all of it; the worker then holds it whole."""
    import os

    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.workers.script_pass import copy_folder
    from tpuwizard.words.event_text import describe

    homes = [worker_home(tmp_path / f"w{n}") for n in range(2)]
    src = tmp_path / "src"
    src.mkdir()
    data = os.urandom(12_000_000)  # incompressible: the tar is as large
    (src / "data.bin").write_bytes(data)
    (src / "main.py").write_text("print(1)\n")
    events: list = []
    copy_folder(LocalTransport(homes), LocalFolder.of_script(src / "main.py"), events.append)
    for worker in (0, 1):
        said = [e for e in events if isinstance(e, ev.FolderProgress) and e.worker == worker]
        shares = [e.sent / e.total for e in said]
        assert shares == sorted(shares) and shares[-1] == 1.0 and 5 <= len(shares) <= 10
        assert (homes[worker] / ".tpuwizard/work/data.bin").read_bytes() == data
    first = next(e for e in events if isinstance(e, ev.FolderProgress))
    assert describe(first)[0].startswith(f"[w{first.worker}] copying the folder: ")
    assert describe(first)[0].endswith(
        "of its 12 MB tar (" + f"{first.sent * 100 // first.total}%)"
    )
    assert isinstance(events[-1], ev.FolderSynced)
    assert "a first copy" in describe(events[-1])[0]


def test_a_small_copy_says_no_progress(tmp_path):
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.workers.script_pass import copy_folder

    home = worker_home(tmp_path / "w0")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print(1)\n")
    events: list = []
    copy_folder(LocalTransport([home]), LocalFolder(tmp_path / "src", "main.py"), events.append)
    assert [type(e) for e in events] == [ev.FolderSynced]
