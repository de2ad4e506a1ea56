"""What of a script's folder leaves this computer (core/remote/sent_files.py): secrets never,
.tpuwizardignore's patterns as .gitignore's, no negation bringing a secret back, no link
followed out of the folder, nothing that is not a regular file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.planted_secrets import OPENSSH_KEY, PLANTED, named_left_out, plant, sent_names
from tpuwizard.core.remote.secret_rules import SNIFF_BYTES
from tpuwizard.core.remote.sent_files import (
    IGNORE_FILE,
    LeftOut,
    measure,
    walk,
    whole_home_or_root,
)

PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)


def folder_with_secrets(root: Path) -> Path:
    """The report's folder (reliability round 5, F2), with a few more of the same kind."""
    root.mkdir(exist_ok=True)
    (root / "main.py").write_text("print(1)\n")
    (root / "id_map.py").write_text("IDS = {}\n")  # a name like a key's, not a key
    (root / ".gitignore").write_text("runs/\n")
    files = {
        ".env": "AWS_SECRET_ACCESS_KEY=SECRETAWS\n",
        ".env.local": "TOKEN=1\n",
        ".kaggle/kaggle.json": '{"username":"me","key":"SECRETKAGGLEKEY123"}',
        ".ssh/id_ed25519": "SECRETSSHKEY\n",
        "keys/server.pem": "x",
        "id_rsa": "x",
        ".netrc": "machine x login y password z\n",
        ".git-credentials": "https://u:p@example.com\n",
        ".config/gcloud/credentials.db": "x",
        "application_default_credentials.json": "{}",
        "sa-key-1234.json": '{"type": "service_account", "private_key": "' + PEM + '"}',
        "notes/deploy_key": PEM,
        "user.json": '{"client_id": "1", "refresh_token": "abc"}',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "id_rsa.pub").write_text("ssh-ed25519 AAAA me\n")  # a public half: not secret
    return root


def sent(root: Path, script: str | None = "main.py") -> tuple[list[str], LeftOut]:
    left = LeftOut()
    return [f.rel for f in walk(root, script, left)], left


def test_secrets_are_left_out_and_named_and_the_rest_is_sent(tmp_path):
    root = folder_with_secrets(tmp_path / "lesson")
    names, left = sent(root)
    assert names == [".gitignore", "id_map.py", "id_rsa.pub", "main.py"]
    assert sorted(left.secrets) == sorted(
        [
            ".env",
            ".env.local",
            ".kaggle/",
            ".ssh/",
            ".netrc",
            ".git-credentials",
            ".config/gcloud/",
            "id_rsa",
            "keys/server.pem",
            "application_default_credentials.json",
            "sa-key-1234.json",
            "notes/deploy_key",
            "user.json",
        ]
    )


def test_caches_environments_and_runs_are_never_sent(tmp_path):
    root = tmp_path / "lesson"
    for folder in (".git", ".venv", "venv", "__pycache__", "runs/r1", "node_modules"):
        (root / folder).mkdir(parents=True)
        (root / folder / "f").write_text("x")
    (root / "main.py").write_text("print(1)\n")
    names, left = sent(root)
    assert names == ["main.py"] and left.secrets == [] and left.ignored == 0


def test_an_exports_folder_is_never_sent_and_a_look_alike_is(tmp_path, monkeypatch):
    """Issue 55.9: an export's folder (export-xpk/, or any --out) holds the job file export
    wrote: it is for an engine, not the next launch. A job file without export's line is sent."""
    from click.testing import CliRunner

    from tpuwizard.cli import main

    root = tmp_path / "lesson"
    root.mkdir()
    (root / "main.py").write_text("print(1)\n")
    monkeypatch.chdir(root)
    for out in ([], ["--out", "gke/plan"]):
        made = CliRunner().invoke(
            main, ["export", "--accelerator", "v5p-16", "--script", "main.py", *out]
        )
        assert made.exit_code == 0, made.output
    (root / "mine").mkdir()
    (root / "mine" / "tpuwizard_job.sh").write_text("echo my own job\n")
    names, left = sent(root)
    assert names == ["main.py", "mine/tpuwizard_job.sh"] and left.ignored == 0


def test_tpuwizardignore_takes_gitignore_patterns_with_negations(tmp_path):
    root = tmp_path / "lesson"
    (root / "data").mkdir(parents=True)
    (root / "data" / "big.bin").write_bytes(b"x" * 100)
    (root / "sub").mkdir()
    (root / "main.py").write_text("print(1)\n")
    for name in ("a.csv", "keep.csv", "sub/b.csv", "sub/model.ckpt", "notes.txt"):
        (root / name).write_text("x")
    (root / IGNORE_FILE).write_text(
        "# data stays here\ndata/\n*.csv\n!keep.csv\n/notes.txt\n*.ckpt\n"
    )
    names, left = sent(root)
    assert names == [IGNORE_FILE, "keep.csv", "main.py"]
    assert left.ignored == 5  # data/, a.csv, notes.txt, sub/b.csv, sub/model.ckpt


def test_a_negation_cannot_bring_a_secret_back(tmp_path):
    root = folder_with_secrets(tmp_path / "lesson")
    (root / IGNORE_FILE).write_text("!.env\n!.ssh/\n!.ssh/id_ed25519\n!*.pem\n!id_rsa\n!*.json\n")
    names, left = sent(root)
    assert ".env" not in names and not any(n.startswith((".ssh", "keys/")) for n in names)
    assert "id_rsa" not in names and "sa-key-1234.json" not in names
    assert ".env" in left.secrets and ".ssh/" in left.secrets


def test_links_are_not_followed_out_of_the_folder_but_the_script_is_sent(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not yours to send\n")
    (outside / "train.py").write_text("print('the target')\n")
    root = tmp_path / "lesson"
    root.mkdir()
    (root / "link_file").symlink_to(outside / "secret.txt")
    (root / "dirlink").symlink_to(outside)
    (root / "passwd").symlink_to("/etc/passwd")
    (root / "main.py").symlink_to(outside / "train.py")  # the script itself may be a link
    names, _ = sent(root)
    assert names == ["main.py"]
    (script,) = walk(root, "main.py")
    assert script.size == len("print('the target')\n")
    assert sent(root, None)[0] == []  # no script named: no link at all


def test_fifos_are_skipped_and_a_fifo_for_an_ignore_file_does_not_hang(tmp_path):
    root = tmp_path / "lesson"
    root.mkdir()
    (root / "main.py").write_text("print(1)\n")
    os.mkfifo(root / "fifo")
    os.mkfifo(root / IGNORE_FILE)
    names, _ = sent(root)  # would block forever opening either FIFO to read it
    assert names == ["main.py"]


def test_the_script_is_never_looked_into_for_a_key(tmp_path):
    """A script that prints a key's armour (a lesson on keys) is still the script."""
    root = tmp_path / "lesson"
    root.mkdir()
    (root / "main.py").write_text(f"print({PEM!r})\n")
    (root / "helper.py").write_text(f"ARMOUR = {PEM!r}\n")
    names, left = sent(root)
    assert names == ["main.py"] and left.secrets == ["helper.py"]


def test_tpuwizards_own_state_folder_is_never_sent(tmp_path, monkeypatch):
    root = tmp_path / "lesson"
    (root / "state" / "keys").mkdir(parents=True)
    (root / "state" / "ledger.jsonl").write_text("{}\n")
    (root / "main.py").write_text("print(1)\n")
    monkeypatch.setenv("TPUWIZARD_HOME", str(root / "state"))
    assert sent(root)[0] == ["main.py"]


def test_measure_counts_files_and_bytes_and_stops_past_a_limit(tmp_path):
    root = folder_with_secrets(tmp_path / "lesson")
    (root / "data.bin").write_bytes(b"x" * 5000)
    whole = measure(root, "main.py")
    assert (
        whole.files == 5
        and whole.size
        == sum(
            (root / n).stat().st_size for n in (".gitignore", "id_map.py", "id_rsa.pub", "main.py")
        )
        + 5000
    )
    assert ".env" in whole.secrets and not whole.over and not whole.large
    stopped = measure(root, "main.py", stop_above=1000)
    assert stopped.over and stopped.large and stopped.size > 1000


@pytest.mark.parametrize("name", ["kaggle.json", "prod.env", ".envrc", "cert.p12", "tls.key"])
def test_more_secret_names(tmp_path, name):
    root = tmp_path / "lesson"
    root.mkdir()
    (root / "main.py").write_text("print(1)\n")
    (root / name).write_text("x")
    names, left = sent(root)
    assert names == ["main.py"] and left.secrets == [name]


@pytest.mark.parametrize(("rel", "text", "named"), [(r, t, n) for r, (t, n) in PLANTED.items()])
def test_each_planted_credential_file_is_left_out_and_named(tmp_path, rel, text, named):
    """Reliability round 6, G1: each file alone beside the script, by its name (BY_NAME hold
    nothing secret-looking) or by its content (BY_CONTENT have innocent names)."""
    root = tmp_path / "lesson"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)
    (root / "main.py").write_text("print(1)\n")
    names, left = sent(root)
    assert names == ["main.py"] and left.secrets == [named]


def test_a_planted_folder_sends_only_what_is_no_secret_and_names_every_secret(tmp_path):
    root = tmp_path / "lesson"
    root.mkdir()
    plant(root)
    names, left = sent(root)
    assert names == sent_names()
    assert sorted(left.secrets) == named_left_out()


@pytest.mark.parametrize(
    "text",
    [
        "gh" + "p_tooshort",  # a prefix alone, or too short to be a token
        "hf" + "_abc",
        "AK" + "IAIOSFODNN7EXAMPLE and nothing else",  # an access key id without its secret
        "PRIVATE KEY is a phrase",  # the words without the armour
        '{"private_key_id": "1"}',  # the id of a key, not the key
    ],
)
def test_what_only_looks_like_a_secret_is_sent(tmp_path, text):
    root = tmp_path / "lesson"
    root.mkdir()
    (root / "main.py").write_text("print(1)\n")
    (root / "notes.txt").write_text(text)
    assert sent(root) == (["main.py", "notes.txt"], LeftOut())


def test_a_key_past_the_sniffed_bound_is_not_looked_for_and_binary_files_are_not_read(tmp_path):
    """The bound the module states: a file's first SNIFF_BYTES; a binary file (a NUL in its
    first BINARY_PROBE_BYTES) is data, not a credential file."""
    root = tmp_path / "lesson"
    root.mkdir()
    (root / "main.py").write_text("print(1)\n")
    (root / "near.txt").write_text("x" * (SNIFF_BYTES - 100) + OPENSSH_KEY)
    (root / "far.txt").write_text("x" * SNIFF_BYTES + OPENSSH_KEY)
    (root / "data.bin").write_bytes(b"\0" + OPENSSH_KEY.encode())
    names, left = sent(root)
    assert names == ["data.bin", "far.txt", "main.py"] and left.secrets == ["near.txt"]


def test_a_file_replaced_by_a_fifo_after_the_listing_does_not_hang_the_sniff(tmp_path):
    from tpuwizard.core.remote.secret_rules import holds_a_secret

    os.mkfifo(tmp_path / "fifo")
    assert not holds_a_secret(tmp_path / "fifo", 10, 1, 1)


@pytest.mark.parametrize("where", ["home", "root"])
def test_the_home_folder_and_the_root_are_never_sent_on_any_route(tmp_path, monkeypatch, where):
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path if where == "home" else Path("/")
    said = whole_home_or_root(folder, "train.py", "inside a Kaggle kernel")
    assert said is not None and "sends the script's whole folder inside a Kaggle kernel" in said
    assert ("your home folder" if where == "home" else "the root folder /") in said
    assert whole_home_or_root(tmp_path / "lesson", "train.py", "to the TPU") is None


@pytest.mark.parametrize(
    "token",
    [
        "glpat-" + "AbCdEfGhIjKlMnOpQrSt",
        "npm_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "AI" + "za" + "SyA-1234567890abcdefghijklmnopqrstu",
        "sk-" + "proj-" + "AbCdEfGhIjKlMnOpQrStUv",
        "sk-" + "ant-" + "api03-AbCdEfGhIjKlMnOpQrStUv",
        "sk" + "_live_" + "AbCdEfGhIjKlMnOpQrStUv",
        "gh" + "s_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
        "xo" + "xp-" + "1234567890-abc",
    ],
)
def test_each_known_token_format_marks_a_file_and_only_where_it_starts_a_word(token):
    from tpuwizard.core.remote.secret_rules import secret_in

    assert secret_in(f"KEY = '{token}'\n".encode())
    assert not secret_in(f"KEY = 'x{token}'\n".encode())  # inside a longer word: no token
