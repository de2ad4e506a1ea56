"""What of a script's folder leaves this computer: one selection for every route.

The TPU routes' copy to the workers (:mod:`tpuwizard.core.remote.sync`, by tar or rsync) and the
free routes' packed folder (Kaggle's kernel, Colab's upload) all send the files this module
walks, so they agree by construction. Left out, in this order:

1. Secrets, always, by name or by content (:mod:`tpuwizard.core.remote.secret_rules`: key
   files and credential folders, registry and cloud logins, shell histories, ``.env`` files, and
   any file that holds a private key or a token in a known format). A ``.tpuwizardignore``
   negation (``!.env``) cannot bring one back: they are left out before the ignore file is
   read, and each is named to the user.
2. What is never the experiment: version control, environments, caches, run outputs
   (:data:`NEVER_SENT_DIRS`), an export's folder (it holds the job file ``tpuwizard export``
   wrote), and tpuwizard's own state folder when ``TPUWIZARD_HOME`` is inside.
3. What the folder's own ``.tpuwizardignore`` names, with ``.gitignore``'s patterns (pathspec's
   GitIgnoreSpec): only the one at the folder's top is read.
4. What is not a regular file (a FIFO, a socket, a device), and every symbolic link but the
   script itself (sent as its target's content, since the user named it): a link could point
   anywhere on this computer, and a linked folder is never walked into.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tpuwizard.core.export_marks import is_export_folder
from tpuwizard.core.remote.secret_rules import holds_a_secret, secret_by_name

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

IGNORE_FILE = ".tpuwizardignore"
# Above this the wizard asks on Review before the copy, and the CLI says the size and goes on
# (docs/guides/routes.md says the figure): at a laptop's 20 Mbit/s uplink, 50 MB is about 20 s
# of a billing TPU before the script starts.
LARGE_FOLDER_BYTES = 50 * 1000 * 1000
# Folders that are never the experiment: version control, environments, caches, run outputs.
NEVER_SENT_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tpuwizard",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".ipynb_checkpoints",
        "node_modules",
        "runs",
    }
)


@dataclass(frozen=True)
class SentFile:
    """One file that is sent: its path relative to the folder (with '/'), where it is, its
    size and mtime as they were walked."""

    rel: str
    path: Path
    size: int
    mtime_ns: int


@dataclass
class LeftOut:
    """What a walk left out that a user should hear of: the secrets by name (a folder as
    ``name/``), and how many files and folders ``.tpuwizardignore`` named."""

    secrets: list[str] = field(default_factory=list)
    ignored: int = 0


def ignore_spec(root: Path) -> GitIgnoreSpec | None:
    """The folder's ``.tpuwizardignore`` as a GitIgnoreSpec, or None when there is none.

    A file that is not a regular file, or larger than 1 MiB, is not read (a FIFO in its place
    would hang the walk)."""
    path = root / IGNORE_FILE
    try:
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > 1024 * 1024:
        return None
    import pathspec

    lines = path.read_text(errors="replace").splitlines()
    return pathspec.GitIgnoreSpec.from_lines(lines)


def whole_home_or_root(folder: Path, script: str, sent_to: str) -> str | None:
    """Why ``folder`` (the folder of the script named ``script``) is never sent, on any route:
    it is the root folder or the home folder, where every file (keys, logins, histories no rule
    can foresee) would go. ``sent_to`` says where it would go ("to the TPU")."""
    root = folder.resolve()
    if root != Path(root.anchor) and root != Path.home().resolve():
        return None
    where = "the root folder /" if root == Path(root.anchor) else f"your home folder ({root})"
    return (
        f"{script} is in {where}: tpuwizard sends the script's whole folder {sent_to}, "
        f"so it would send everything there. Put the script in its own folder "
        f"(mkdir ~/tpu-lesson && mv {script} ~/tpu-lesson/) and give that path."
    )


def state_inside(root: Path) -> Path | None:
    """``TPUWIZARD_HOME`` as a path under ``root`` (as os.walk names it), when it is one."""
    override = os.environ.get("TPUWIZARD_HOME")
    if not override:
        return None  # the default state folder is under the home folder, which is refused
    state = Path(override).expanduser().resolve()
    return state if state.is_relative_to(root) and state != root else None


def walk(root: Path, script: str | None = None, left: LeftOut | None = None) -> Iterator[SentFile]:
    """The files of ``root`` that are sent, in a stable order (sorted, folder by folder).

    ``script``: the script's name in ``root``, sent even when it is a link. ``left`` collects
    what was left out as the walk goes (a walk stopped early has seen only its part)."""
    left = left if left is not None else LeftOut()
    spec = ignore_spec(root)
    own_state = state_inside(root)
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        base = here.relative_to(root).as_posix()
        prefix = "" if base == "." else base + "/"
        kept_dirs = []
        for d in sorted(dirs):
            rel = prefix + d
            if secret_by_name(rel, is_dir=True):
                left.secrets.append(rel + "/")
            elif d in NEVER_SENT_DIRS or here / d == own_state or (here / d).is_symlink():
                continue
            elif is_export_folder(here / d):
                continue  # what tpuwizard export wrote for an engine (core/handover/place.py)
            elif spec is not None and spec.match_file(rel + "/"):
                left.ignored += 1
            else:
                kept_dirs.append(d)
        dirs[:] = kept_dirs  # os.walk goes only into these
        for name in sorted(files):
            sent = _sent_file(root, here / name, prefix + name, script, spec, left)
            if sent is not None:
                yield sent


def _sent_file(
    root: Path, path: Path, rel: str, script: str | None, spec: GitIgnoreSpec | None, left: LeftOut
) -> SentFile | None:
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode) and rel == script:
            info = path.stat()  # the script may be a link: its target's content is sent
    except OSError:
        return None  # gone since the listing
    if not stat.S_ISREG(info.st_mode):
        return None  # a link (but the script), a FIFO, a socket, a device
    # The script itself is not looked into: the user named it to be run.
    if secret_by_name(rel, is_dir=False) or (
        rel != script and holds_a_secret(path, info.st_size, info.st_mtime_ns, info.st_ino)
    ):
        left.secrets.append(rel)
        return None
    if spec is not None and rel != script and spec.match_file(rel):
        left.ignored += 1
        return None
    return SentFile(rel, path, info.st_size, info.st_mtime_ns)


@dataclass(frozen=True)
class FolderSent:
    """What of a script's folder is sent, as every front end says it: how many files, how many
    bytes, the secrets left out by name, how many entries ``.tpuwizardignore`` left out.
    ``over`` is set when the walk stopped at a limit: ``size`` is then only what it had
    counted, and the folder holds more."""

    files: int
    size: int
    secrets: tuple[str, ...] = ()
    ignored: int = 0
    over: bool = False

    @property
    def large(self) -> bool:
        return self.over or self.size > LARGE_FOLDER_BYTES


def tally(files: Iterable[SentFile], left: LeftOut, stop_above: int | None = None) -> FolderSent:
    """:class:`FolderSent` for ``files`` (a walk that fills ``left``), stopped once more than
    ``stop_above`` bytes were counted (the secrets and ignored counts are then those seen so
    far)."""
    count, size = 0, 0
    for sent in files:
        count, size = count + 1, size + sent.size
        if stop_above is not None and size > stop_above:
            return FolderSent(count, size, tuple(left.secrets), left.ignored, over=True)
    return FolderSent(count, size, tuple(left.secrets), left.ignored)


def measure(root: Path, script: str | None = None, stop_above: int | None = None) -> FolderSent:
    """:class:`FolderSent` for ``root``, its walk stopped past ``stop_above`` bytes."""
    left = LeftOut()
    return tally(walk(root, script, left), left, stop_above)
