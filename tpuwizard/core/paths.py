"""Where tpuwizard keeps its state (ledger, keys, caches, sandbox) and writes run folders."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

# Whether this process may work from a state folder it can read but not write: only `status`,
# `down` and `teardown` (they list and delete; the ledger holds their records elsewhere, see
# core/launch/records/ledger_file.py). Every other command needs a writable one before it starts.
_READ_ONLY_HOME = {"allowed": False}


def allow_read_only_home() -> None:
    """From now on, this process works from a read-only state folder rather than refusing it."""
    _READ_ONLY_HOME["allowed"] = True


def state_dir() -> Path:
    """The state root: ``$TPUWIZARD_HOME``, else the platform's user state directory."""
    override = os.environ.get("TPUWIZARD_HOME")
    if override:
        path = Path(override).expanduser()
    else:
        import platformdirs  # only when needed: keeps `tpuwizard fit` start-up small

        path = platformdirs.user_state_path("tpuwizard")
    if _READ_ONLY_HOME["allowed"] and _readable_folder(path):
        return path
    make_folder(path, "TPUWIZARD_HOME (tpuwizard's state folder)", mode=0o700)
    return path


def read_only_home() -> Path | None:
    """The state folder, when this process works from it read-only (allowed, and not writable
    now); else None."""
    if not _READ_ONLY_HOME["allowed"]:
        return None
    path = state_dir()
    return None if os.access(path, os.W_OK | os.X_OK) else path


def _readable_folder(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.R_OK | os.X_OK)


def make_folder(path: Path, what: str, mode: int = 0o777) -> Path:
    """Create ``path`` (and its parents) as a writable folder, or raise :class:`BadInput`
    naming ``what`` it is for and why it cannot be: a file there, no permission, a full disk."""
    from tpuwizard.core.errors import BadInput

    try:
        path.mkdir(parents=True, exist_ok=True, mode=mode)
    except FileExistsError:
        raise BadInput(f"{what}: {path} is a file, not a folder.") from None
    except NotADirectoryError:
        raise BadInput(f"{what}: a part of {path} is a file, not a folder.") from None
    except OSError as err:
        raise BadInput(f"{what}: cannot create {path} ({err.strerror}).") from None
    if not path.is_dir():
        raise BadInput(f"{what}: {path} is not a folder.")
    if not os.access(path, os.W_OK | os.X_OK):
        raise BadInput(f"{what}: {path} is not writable by you.")
    return path


def folder_problem(path: Path, what: str) -> str | None:
    """Why ``path`` could not become a writable folder, without creating anything; None if it
    could (for plan checks, which must not touch the disk)."""
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            return None
        probe = probe.parent
    if not probe.is_dir():
        return f"{what}: {probe} is a file, not a folder."
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{what}: {probe} is not writable by you."
    free = free_bytes(probe)
    if free is not None and free < MIN_FREE_BYTES:
        return (
            f"{what}: the disk of {probe} has {free // 1024} KiB free, less than the "
            f"{MIN_FREE_BYTES // 2**20} MiB a run needs for its receipt, output and copied-back "
            "files (found after the TPU is made, it would cost the run): free some space, or "
            "choose a folder on another disk."
        )
    return None


# A run writes its receipt, cost, output and copied-back files: less than this free is a disk
# that is full for practical purposes.
MIN_FREE_BYTES = 16 * 2**20


def free_bytes(path: Path) -> int | None:
    """Bytes an unprivileged user may still write on ``path``'s disk; None if it cannot say."""
    try:
        info = os.statvfs(path)
    except (OSError, AttributeError):  # no statvfs (Windows), or the disk cannot say
        return None
    return info.f_bavail * info.f_frsize


def cache_dir() -> Path:
    folder = state_dir() / "cache"
    if read_only_home() is not None:  # read where it is; what is saved there is lost, not fatal
        return folder
    return make_folder(folder, "tpuwizard's cache folder")


def new_run_id(now: datetime | None = None) -> str:
    """A run id usable as a GCP label value and a node name part: ``20261129-152500-a1b2``."""
    import secrets  # imported where used, as hashlib below: the wizard's first screen needs neither

    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(2)}"


def runs_folder(base: Path | None = None) -> Path:
    """The folder of run folders: ``base`` (``--run-dir``), else ``runs/`` in the working
    directory. The one place that default is made (the session's ``run_folder`` asks here)."""
    return base if base is not None else Path.cwd() / "runs"


def run_dir(run_id: str, base: Path | None = None) -> Path:
    """``runs/<run id>/`` under the working directory (or ``base``), created on first use."""
    return make_folder(runs_folder(base) / run_id, "The run folder (--run-dir)")


# A run folder's layout, one for `launch` and `run`: tpuwizard's own files (receipt.json,
# cost.json, output.txt, trace/, checkpoints/) at the top, and what the script's --fetch patterns
# copy back under files/, so a script's own receipt.json or output.txt never replaces ours.
FETCHED_FOLDER = "files"


def fetched_files(run_folder: Path) -> Path:
    """Where a run's fetched files go: ``runs/<run id>/files/``, for every command."""
    return run_folder / FETCHED_FOLDER


def owner_label() -> str:
    """This install's owner label value: a label-safe hash of a random id kept in the state
    directory (label values cannot hold an e-mail, and the hash says nothing about the user).

    Two people sharing a project have different ids, so neither's ``teardown --all`` touches the
    other's resources. The id is created once, atomically, so two first launches agree on it.
    """
    import hashlib
    import secrets

    path = state_dir() / "install-id"
    if not path.exists() and read_only_home() is not None:
        # Every create makes the id first: a read-only home without one made nothing, so no
        # label is this install's. An id for this process alone matches none (never written).
        unwritten = _UNWRITTEN_ID.setdefault("id", secrets.token_hex(16).encode())
        return hashlib.sha256(unwritten).hexdigest()[:16]
    if not path.exists():
        tmp = path.with_name(f".install-id.{os.getpid()}.{secrets.token_hex(4)}")
        tmp.write_text(secrets.token_hex(16) + "\n")
        try:
            os.link(tmp, path)  # fails if another process won the race: theirs stands
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
    # Its bytes, not its text: any bytes are an id (an edited or binary file must neither fail
    # every command nor change the label, which would disown what was made under it).
    install_id = _read_install_id(path)
    return hashlib.sha256(install_id).hexdigest()[:16]


_UNWRITTEN_ID: dict[str, bytes] = {}  # owner_label's id where a read-only home holds none
_INSTALL_ID_BYTES = 4096  # made as 32 hex digits; more is read no further


def _read_install_id(path: Path) -> bytes:
    """The id's bytes; an id that is empty or cannot be read raises :class:`BadInput` (an
    empty one would be every such install's: others' resources would count as this one's)."""
    from tpuwizard.core.errors import BadInput

    keep = (
        f"Restore {path} from a backup if you have one; else delete it and tpuwizard makes a "
        "new one (what was made under the old id is then no longer recognised as yours: check "
        "the Cloud Console for it)."
    )
    from tpuwizard.core import untrusted

    try:  # a FIFO in its place would hang every command: only a regular file is read
        fd = untrusted.open_regular(path)
        try:
            install_id = os.pread(fd, _INSTALL_ID_BYTES, 0).strip()
        finally:
            os.close(fd)
    except OSError as err:
        raise BadInput(f"Cannot read this install's id, {path} ({err.strerror}). {keep}") from None
    if not install_id:
        raise BadInput(f"This install's id, {path}, is empty. {keep}")
    return install_id
