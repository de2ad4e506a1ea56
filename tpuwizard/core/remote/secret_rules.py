"""Which files of a script's folder are secrets, by their name or by what they hold: the rules
:mod:`tpuwizard.core.remote.sent_files` walks with, so no route (the TPU copy, Kaggle's kernel,
Colab's upload) ever sends one.

By name: SSH's, Kaggle's, GnuPG's, AWS's, Docker's and Kubernetes' folders, gcloud's and the
GitHub CLI's configuration, package registries' (``.pypirc``, ``.npmrc``), Hugging Face's token,
shell histories, ``.env`` files, key files (``*.pem``, ``*.ppk``, ``id_*``, ``*_key``), Terraform
state and ``secrets.*`` files.

By content: the first :data:`SNIFF_BYTES` (1 MiB) of every file, read whole below that, unless
its first :data:`BINARY_PROBE_BYTES` hold a NUL byte (an array, an image, a checkpoint: no
credential file is binary). A file is a secret when it holds a private key's armour (PEM's
``-----BEGIN … PRIVATE KEY``, PGP's ``PRIVATE KEY BLOCK``, PuTTY's), a service account's
``"private_key"``, an OAuth refresh token in JSON, or a token in a known format
(:data:`TOKEN_FORMATS`; AWS's access key id only beside a secret key). A file past 1 MiB is
looked into only that far: a credential file is a few KiB.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from tpuwizard.core.untrusted import open_regular

# Secret folders, anywhere in the tree (each left out whole, named as ``name/``).
SECRET_DIRS = frozenset(
    {
        ".ssh",
        ".kaggle",
        ".gnupg",
        ".aws",
        "legacy_credentials",  # gcloud's, beside its credential databases
        ".docker",  # config.json holds registry logins
        ".kube",  # config holds cluster credentials
        ".huggingface",  # the hub client's older token folder
        ".password-store",
    }
)
# Secret folders by their path's end: gcloud's and the GitHub CLI's configuration.
SECRET_DIR_PATHS = (".config/gcloud", ".config/gh", ".config/hub")
# Secret files by their path's end: Hugging Face's tokens (its cache beside them is not secret).
SECRET_FILE_PATHS = ("huggingface/token", "huggingface/stored_tokens")
# Secret files by name (fnmatch patterns, matched against the file's own name).
SECRET_NAMES = (
    ".env",
    ".env.*",
    ".envrc",
    "*.env",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".pgpass",
    ".pypirc",
    ".npmrc",
    ".yarnrc.yml",
    ".boto",
    ".s3cfg",
    ".dockercfg",
    ".htpasswd",
    "*_history",  # shell and REPL histories: .bash_history, .zsh_history, fish_history
    ".histfile",
    "credentials",  # AWS's shared credentials file, wherever it was copied
    "client_secret*.json",  # an OAuth client's secret, as Google's console downloads it
    "*.pem",
    "*.key",
    "*_key",  # deploy_key, signing_key (their .pub halves are not secret)
    "*.ppk",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.tfstate",
    "*.tfstate.*",
    "secrets.toml",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "kaggle.json",
    # gcloud's credential files (its configuration folder holds them; a copy may be anywhere)
    "application_default_credentials.json",
    "credentials.db",
    "access_tokens.db",
    "adc.json",
)
# SSH's private keys: id_rsa, id_ed25519_sk, any id_<name> ssh-keygen -f was given. A key has
# no extension, so id_map.py (a module) and id_rsa.pub (a public half) are sent.
SSH_KEY = re.compile(r"id_[^.]+")

SNIFF_BYTES = 1024 * 1024
BINARY_PROBE_BYTES = 8192
# Each format as a literal its text starts with (found by bytes.find, which is quick: Python's
# re tries a pattern at every byte, 30 times slower over a MiB) and, where the literal is not
# enough, the pattern the text from there must match. A token's literal must start a word.
WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
KEYS: tuple[tuple[bytes, re.Pattern[bytes] | None], ...] = (
    # A private key's armour: PEM's (OPENSSH, RSA, EC, ENCRYPTED, plain), PGP's, PuTTY's.
    (b"-----BEGIN ", re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY")),
    (b"PRIVATE KEY BLOCK", None),
    (b"PuTTY-User-Key-File-", None),
    (b'"private_key"', re.compile(rb'"private_key"\s*:')),  # a service account's JSON key
)


def _prefixed(tail: bytes, *prefixes: bytes) -> tuple[tuple[bytes, re.Pattern[bytes]], ...]:
    """Each prefix, and the pattern of the prefix followed by ``tail``."""
    return tuple((prefix, re.compile(re.escape(prefix) + tail)) for prefix in prefixes)


# Tokens whose format says what they are (each prefix as its issuer documents it).
TOKEN_FORMATS: dict[str, tuple[tuple[bytes, re.Pattern[bytes]], ...]] = {
    "GitHub": (
        *_prefixed(rb"[A-Za-z0-9]{36}", b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_"),
        *_prefixed(rb"[A-Za-z0-9_]{22,}", b"github_pat_"),
    ),
    "GitLab": _prefixed(rb"[A-Za-z0-9_-]{20,}", b"glpat-"),
    "Hugging Face": _prefixed(rb"[A-Za-z0-9]{30,}", b"hf_"),
    "Slack": _prefixed(rb"[A-Za-z0-9-]{10,}", b"xoxa-", b"xoxb-", b"xoxp-", b"xoxr-", b"xoxs-"),
    "PyPI": _prefixed(rb"[A-Za-z0-9_-]{16,}", b"pypi-AgEI"),
    "npm": _prefixed(rb"[A-Za-z0-9]{36}", b"npm_"),
    "Google API key": _prefixed(rb"[0-9A-Za-z_-]{35}", b"AIza"),
    "OpenAI or Anthropic": _prefixed(rb"[A-Za-z0-9_-]{20,}", b"sk-proj-", b"sk-ant-"),
    "Stripe": _prefixed(rb"[A-Za-z0-9]{20,}", b"sk_live_", b"rk_live_"),
}
# AWS: an access key id is not secret alone; beside a 40-character secret key it is a login.
AWS_KEY_ID = _prefixed(rb"[A-Z0-9]{16}(?![A-Za-z0-9])", b"AKIA", b"ASIA")
AWS_SECRET = re.compile(rb"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
REFRESH_TOKEN = b'"refresh_token"'


def secret_by_name(rel: str, is_dir: bool) -> bool:
    """Whether ``rel`` (relative to the folder, '/'-separated) is a secret by its name."""
    name = rel.rsplit("/", 1)[-1]
    if is_dir:
        return name in SECRET_DIRS or _ends_with(rel, SECRET_DIR_PATHS)
    return (
        SSH_KEY.fullmatch(name) is not None
        or _ends_with(rel, SECRET_FILE_PATHS)
        or any(fnmatch.fnmatchcase(name, p) for p in SECRET_NAMES)
    )


def _ends_with(rel: str, paths: tuple[str, ...]) -> bool:
    return any(rel == p or rel.endswith("/" + p) for p in paths)


def secret_in(data: bytes, json_file: bool = False) -> bool:
    """Whether ``data`` (a file's first :data:`SNIFF_BYTES`) holds a key or a known token."""
    tokens = [format for formats in TOKEN_FORMATS.values() for format in formats]
    return (
        any(_found(data, literal, pattern, word_start=False) for literal, pattern in KEYS)
        or any(_found(data, literal, pattern) for literal, pattern in tokens)
        or (
            any(_found(data, literal, pattern) for literal, pattern in AWS_KEY_ID)
            and AWS_SECRET.search(data) is not None
        )
        or (json_file and REFRESH_TOKEN in data)
    )


def _found(
    data: bytes, literal: bytes, pattern: re.Pattern[bytes] | None, word_start: bool = True
) -> bool:
    """Whether ``literal`` is in ``data`` where ``pattern`` matches from it (starting a word
    where ``word_start``)."""
    at = data.find(literal)
    while at >= 0:
        starts = not word_start or at == 0 or data[at - 1] not in WORD
        if starts and (pattern is None or pattern.match(data, at) is not None):
            return True
        at = data.find(literal, at + 1)
    return False


# What was found in files already looked into, by (path, size, mtime, inode): the wizard walks
# the folder again as the user types, and an unchanged file is not read again.
_SEEN: dict[tuple[str, int, int, int], bool] = {}
_SEEN_AT_MOST = 8192


def holds_a_secret(path: Path, size: int, mtime_ns: int, inode: int) -> bool:
    """Whether a regular file holds a key or a token in its first :data:`SNIFF_BYTES` (a
    binary file is not looked into past its first :data:`BINARY_PROBE_BYTES`)."""
    key = (str(path), size, mtime_ns, inode)
    found = _SEEN.get(key)
    if found is None:
        found = _sniff(path, size)
        if len(_SEEN) >= _SEEN_AT_MOST:
            _SEEN.clear()
        _SEEN[key] = found
    return found


def _sniff(path: Path, size: int) -> bool:
    try:
        fd = open_regular(path)  # never blocks: a FIFO put in the file's place is no file
    except OSError:
        return False  # unreadable, or no longer a file: the copy itself will say so
    try:
        data = os.pread(fd, BINARY_PROBE_BYTES, 0)
        if b"\0" in data:
            return False
        while len(data) < min(size, SNIFF_BYTES):  # a larger file: only its first SNIFF_BYTES
            chunk = os.pread(fd, SNIFF_BYTES - len(data), len(data))
            if not chunk:
                break
            data += chunk
    except OSError:
        return False
    finally:
        os.close(fd)
    return secret_in(data, json_file=path.suffix == ".json")
