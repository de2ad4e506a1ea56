"""The rules of the Workload part (parts.py): which script, arguments, files to copy back,
packages and worker JAX a run may ask for, before anything is created."""

from __future__ import annotations

from pathlib import Path

from tpuwizard.core.choices import Said
from tpuwizard.core.errors import BadInput, shown
from tpuwizard.core.launch.plan.packages import package_problems
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.core.plan import jax_versions
from tpuwizard.core.remote.sync import folder_problems


def workload_problems(workload: Workload) -> list[Said]:
    """Why ``workload`` cannot run on the workers; empty when it can."""
    found: list[Said] = []
    if workload.script is not None:
        found.extend(script_problems(workload.script))
    elif workload.script_args:
        # Only the command line takes them (after `--`), so its words are the only ones.
        found.append(
            f"Arguments {shown(' '.join(workload.script_args))} are for a script, but no "
            "script is given: add --script FILE, or leave the arguments out."
        )
    found.extend(package_problems(workload.packages))
    found.extend(jax_versions.jax_problems(workload.jax))
    for pattern in workload.fetch:
        try:
            safe_fetch_pattern(pattern)
        except BadInput as err:
            found.append(str(err))
    return found


def missing_script_words(script: Path) -> str:
    """Where a script that is not there was looked for, and the fix: a relative path is read
    from the folder tpuwizard was started in, which need not be the one that holds it."""
    if script.is_dir():
        return f"Script {script} is a folder, not a file: name the Python file in it to run."
    folder = script.absolute().parent
    looked = f"{folder} does not exist" if not folder.is_dir() else f"{folder} has no {script.name}"
    return (
        f"Script {script} is not there: {looked}. Run tpuwizard from the folder that holds "
        "your script (cd to it first), or give the script's full path."
    )


def script_problems(script: Path) -> list[str]:
    """Why ``script`` cannot be run on the workers, before anything is created.

    A link is followed: its target's content goes to the workers under the link's name (the
    user named the link to run it), so only a link to nothing is a problem."""
    found = []
    if script.is_symlink() and not script.exists():
        found.append(
            f"Script {script} is a link to {script.readlink()}, which does not exist: "
            "point it at your script, or name the script itself."
        )
    elif not script.is_file():
        found.append(missing_script_words(script))
    try:
        safe_script_name(script.name)
    except BadInput as err:
        found.append(str(err))
    if not found:  # its folder goes with it, as `tpuwizard run` sends it
        found.extend(folder_problems(script))
    return found


def safe_script_name(name: str) -> str:
    """The name the script gets on the workers: the same rule as every remote path
    (transports.safe_relative), so the upload can never refuse it after the create."""
    if (
        not name
        or name.startswith((".", "-"))  # hidden, or read as an option on the worker
        or not all((c.isascii() and c.isalnum()) or c in "._-" for c in name)
    ):
        raise BadInput(
            f"Script name {shown(name)} must be ASCII letters, digits, '.', '_' and '-' only, "
            "and start with a letter, a digit or '_' (a name starting with '-' reads as an "
            "option): rename the file."
        )
    return name


def safe_fetch_pattern(pattern: str) -> str:
    """A glob of files the script writes, relative to its folder on the worker."""
    parts = pattern.split("/")
    if not pattern.strip() or pattern.startswith("/") or ".." in parts or "\n" in pattern:
        raise BadInput(
            f"Files to copy back ('{pattern}') must be a pattern relative to the script's "
            "folder, such as out/*.json, without '..'."
        )
    return pattern
