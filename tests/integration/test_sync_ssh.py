"""The folder copy through the real OpenSSH server on loopback: rsync over the transport's own
ssh (its key, options, known_hosts file and HostKeyAlias), and the tar when the worker lacks it."""

import subprocess

import pytest

from tests.sync_scenario import (
    big_edit_goes_by_rsync,
    needs_rsync,
    path_without_rsync,
    sync_three_times,
    worker_home,
)
from tpuwizard.core.remote.ssh_keys import ensure_key
from tpuwizard.core.remote.sync import RSYNC_FROM_BYTES, WORK_DIR, LocalFolder, sync_folder
from tpuwizard.core.remote.transports import SshTransport


def transport(sshd, tmp_path, home, path=None) -> SshTransport:
    key, pub = ensure_key(tmp_path / "state")
    sshd.authorized_keys.write_text(pub + "\n")
    return SshTransport(
        ["127.0.0.1"],
        sshd.user,
        key,
        tmp_path / "known_hosts",
        sshd.port,
        homes=[str(home)],
        host_key_aliases=["tpu.n-123-0"],
        path=path,
    )


def test_rsync_over_the_transports_own_ssh(sshd, tmp_path):
    needs_rsync()
    home = worker_home(tmp_path / "w0")
    ssh = transport(sshd, tmp_path, home)
    sync_three_times(ssh, home, tmp_path / "src", "rsync")
    # rsync's ssh filed the host key under the node's alias, as the transport's does; an entry
    # under the address would mean it used other options.
    lines = (tmp_path / "known_hosts").read_text().splitlines()
    assert len(lines) == 1 and filed_under(tmp_path / "known_hosts", "tpu.n-123-0")
    assert not filed_under(tmp_path / "known_hosts", f"[127.0.0.1]:{sshd.port}")


def filed_under(known_hosts, name: str) -> bool:
    """Does the (possibly hashed) known_hosts file hold a key for ``name``?"""
    found = subprocess.run(["ssh-keygen", "-F", name, "-f", str(known_hosts)], capture_output=True)
    return found.returncode == 0


def test_a_worker_without_rsync_gets_the_tar_over_ssh(sshd, tmp_path):
    needs_rsync()
    home = worker_home(tmp_path / "w0")
    ssh = transport(sshd, tmp_path, home, path=path_without_rsync(tmp_path / "bin"))
    sync_three_times(ssh, home, tmp_path / "src", "tar")
    (tmp_path / "src" / "train.py").write_text("print(2)\n")
    again = sync_folder(ssh, 0, LocalFolder(tmp_path / "src"))
    assert (again.method, again.why_not_rsync) == ("tar", "no rsync on the worker")


def test_an_edit_inside_a_big_file_goes_over_ssh_as_rsync_s_delta(sshd, tmp_path):
    needs_rsync()
    home = worker_home(tmp_path / "w0")
    big = big_edit_goes_by_rsync(transport(sshd, tmp_path, home), home, tmp_path / "src")
    assert big.bytes_sent < RSYNC_FROM_BYTES // 8  # the changed blocks, not the 2 MiB file


@pytest.mark.parametrize("way", ["rsync", "tar"])
def test_the_folder_s_secrets_never_reach_the_worker(sshd, tmp_path, way):
    """The report's folder (reliability round 5, F2) copied over real OpenSSH, by rsync and by
    the tar: the worker gets the script and its module, never the secrets beside them, and a
    second copy after an edit sends them no more than the first."""
    needs_rsync()
    home = worker_home(tmp_path / "w0")
    path = path_without_rsync(tmp_path / "bin") if way == "tar" else None
    ssh = transport(sshd, tmp_path, home, path=path)
    src = tmp_path / "src"
    for rel, text in {
        "main.py": "print(1)\n",
        "helper.py": "X = 1\n",
        ".env": "AWS_SECRET_ACCESS_KEY=SECRETAWS\n",
        ".ssh/id_ed25519": "SECRETSSHKEY\n",
        ".kaggle/kaggle.json": '{"key": "SECRETKAGGLEKEY123"}',
        "data/big.bin": "d" * 3000,
        ".tpuwizardignore": "data/\n!.env\n",
    }.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    folder = LocalFolder.of_script(src / "main.py")
    first = sync_folder(ssh, 0, folder, rsync_from_bytes=0)
    (src / "main.py").write_text("print(2)\n" * 50)  # an edit of a file the worker holds
    second = sync_folder(ssh, 0, folder, rsync_from_bytes=0)
    assert second.method == way and second.changed == ["main.py"]
    work = home / WORK_DIR
    held = sorted(p.relative_to(work).as_posix() for p in work.rglob("*") if p.is_file())
    assert held == [".tpuwizard-manifest.json", ".tpuwizardignore", "helper.py", "main.py"]
    assert sorted(first.changed) == [".tpuwizardignore", "helper.py", "main.py"]
