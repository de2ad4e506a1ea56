"""The credential files reliability round 6 (G1) planted in a project folder, and more of their
kind: by name (innocent content) and by content (innocent names). The unit table and the three
routes' end-to-end drills plant the same ones.

Token-shaped strings are put together at run time, so no file of this repository holds one a
secret scanner would take for a leaked token."""

from __future__ import annotations

from pathlib import Path

PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
PGP_KEY = (
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGRsb2NrAQgA\n"
    "-----END PGP PRIVATE KEY BLOCK-----\n"
)
OPENSSH_KEY = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}-----END OPENSSH PRIVATE KEY-----\n"
PUTTY_KEY = "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\nAAAA\n"
GITHUB = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GITHUB_FINE = "github" + "_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
HUGGING_FACE = "hf" + "_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"
SLACK = "xo" + "xb-" + "1234567890-0987654321-AbCdEfGhIjKl"
PYPI = "pypi" + "-AgEIcHlwaS5vcmcCJGE0ZjQ5YjE2LTk4ZjQtNGM2NC1iNjBk"
AWS_ID = "AK" + "IA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
# A service account's key file whose key sits past its first 4 KiB (G1: the old sniff read
# only that far).
SERVICE_ACCOUNT = (
    '{"type": "service_account", "project_id": "p", "notes": "'
    + "x" * 5000
    + '", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
    + PEM_BODY.strip()
    + '\\n-----END PRIVATE KEY-----\\n"}'
)

# Each planted file, what it holds, and how a walk names it when it leaves it out.
BY_NAME: dict[str, tuple[str, str]] = {
    ".pypirc": ("[pypi]\nusername = __token__\n", ".pypirc"),
    ".npmrc": ("registry=https://registry.npmjs.org/\n", ".npmrc"),
    ".docker/config.json": ('{"auths": {}}', ".docker/"),
    ".kube/config": ("apiVersion: v1\n", ".kube/"),
    ".config/gh/hosts.yml": ("github.com:\n  user: ada\n", ".config/gh/"),
    ".cache/huggingface/token": ("secret\n", ".cache/huggingface/token"),
    ".bash_history": ("export TOKEN=secret\n", ".bash_history"),
    ".zsh_history": ("ls\n", ".zsh_history"),
    "backup/credentials": ("[default]\n", "backup/credentials"),
    "key.ppk": ("secret\n", "key.ppk"),
    "terraform.tfstate": ('{"version": 4}', "terraform.tfstate"),
    ".streamlit/secrets.toml": ('password = "x"\n', ".streamlit/secrets.toml"),
    "keys/deploy_key": ("secret\n", "keys/deploy_key"),
    "id_work": ("secret\n", "id_work"),
}
BY_CONTENT: dict[str, tuple[str, str]] = {
    "signing.asc": (PGP_KEY, "signing.asc"),
    "notes/server.txt": ("the key:\n" + "x" * 70_000 + "\n" + OPENSSH_KEY, "notes/server.txt"),
    "putty.txt": (PUTTY_KEY, "putty.txt"),
    "sa.json": (SERVICE_ACCOUNT, "sa.json"),
    "gh.txt": (f"token: {GITHUB}\n", "gh.txt"),
    "gh_fine.cfg": (f"TOKEN={GITHUB_FINE}\n", "gh_fine.cfg"),
    "hub.yaml": (f"token: '{HUGGING_FACE}'\n", "hub.yaml"),
    "bot.ini": (f"[slack]\ntoken = {SLACK}\n", "bot.ini"),
    "upload.cfg": (f"password = {PYPI}\n", "upload.cfg"),
    "aws.txt": (f"id {AWS_ID}\nsecret {AWS_SECRET}\n", "aws.txt"),
}
PLANTED = {**BY_NAME, **BY_CONTENT}
# What is sent beside them: names like a secret's, tokens' halves, a binary file.
SENT_BESIDE: dict[str, str] = {
    "main.py": "",  # the script: see plant()
    "id_map.py": "IDS = {}\n",
    "id_rsa.pub": "ssh-ed25519 AAAA ada\n",
    "deploy_key.pub": "ssh-ed25519 AAAA ada\n",
    "history.py": "LOSSES = []\n",
    "aws_id_only.txt": f"the id alone is no login: {AWS_ID}\n",
    "prefixes.md": "GitHub tokens start ghp_, Hugging Face's hf_, Slack's xoxb-.\n",
}


def plant(folder: Path, script: str = "print('hi')\n") -> Path:
    """``folder`` with every planted secret and what is sent beside them; returns the script."""
    for rel, (text, _) in PLANTED.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    for rel, text in SENT_BESIDE.items():
        (folder / rel).write_text(text if rel != "main.py" else script)
    (folder / "weights.bin").write_bytes(bytes(range(256)) * 64)  # binary data: sent
    return folder / "main.py"


def named_left_out() -> list[str]:
    """How a walk of a planted folder names what it left out, sorted."""
    return sorted(named for _, named in PLANTED.values())


def sent_names() -> list[str]:
    """What a walk of a planted folder sends, sorted."""
    return sorted([*SENT_BESIDE, "weights.bin"])


# A script that says which files arrived beside it, one line each ("ARRIVED <path>"), on every
# route: its folder as the worker, the kernel or the runtime holds it.
LIST_ARRIVED = """\
import os
here = os.path.dirname(os.path.abspath(__file__))
for folder, _, files in os.walk(here):
    for name in files:
        print("ARRIVED", os.path.relpath(os.path.join(folder, name), here), flush=True)
"""
