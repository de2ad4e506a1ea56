"""The packages a launch adds to the worker venv, and the rules they must satisfy before create.

They come from ``--with SPEC`` (repeatable, as ``uv run --with``), ``--requirements FILE``, the
wizard's Packages field, and a ``requirements.txt`` beside the script, which is used without
being asked for (and said on screen). tpuwizard installs its one tested ``jax[tpu]`` itself and
never lets an added package change it (core/remote/packages.py installs under a constraint), so
a line naming jax, jaxlib or libtpu is refused here, before anything is created.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from tpuwizard.core import untrusted
from tpuwizard.core.choices import Said
from tpuwizard.core.errors import BadInput, shown
from tpuwizard.core.plan.jax_versions import versions
from tpuwizard.core.remote.bootstrap import TPU_REQUIREMENT

# The course installs these next to jax[tpu] on its TPU VM (lesson "Select a TPU slice and
# provision your Cloud TPU VM", step 4): the wizard's Packages field offers them on one key.
COURSE_PACKAGES = ("flax", "optax", "orbax-checkpoint", "numpy", "matplotlib")
# tpuwizard's own pin: the packages its constraint holds (core/remote/packages.py).
HELD = ("jax", "jaxlib", "libtpu", "libtpu-nightly")
AUTO_FILE = "requirements.txt"  # beside the script: used automatically
# A requirements file is a few lines; a bigger one (or /dev/zero) is a mistake, read no further.
MAX_REQUIREMENTS_BYTES = 1024 * 1024


@dataclass(frozen=True)
class PackageSpec:
    """One requirement for the worker venv and where it came from (for the messages)."""

    text: str
    origin: str  # "--with", or "requirements.txt line 3"
    problem: str | None = None  # a file that could not be read, said as the plan's problem


def canonical_name(name: str) -> str:
    """A distribution name as PEP 503 compares them: lower case, runs of ``-_.`` as ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(text: str) -> str | None:
    """The canonical name a requirement line installs, or None when it is not one: the whole
    line must parse as PEP 508 (name, extras, versions, a URL, a marker), so nothing that uv
    would refuse after create (``foo; touch MARKER``) passes before it."""
    try:
        return canonical_name(Requirement(text.strip()).name)
    except InvalidRequirement:
        return None


def package_names(specs: Iterable[PackageSpec]) -> list[str]:
    """The canonical names of ``specs``, each once, in order (the receipt records these)."""
    names = (requirement_name(s.text) for s in specs)
    return list(dict.fromkeys(n for n in names if n))


def package_problems(specs: Sequence[PackageSpec]) -> list[Said]:
    """Why these packages cannot go into the worker venv; empty when they can."""
    found: list[Said] = []
    for spec in specs:
        name = requirement_name(spec.text)
        if spec.problem is not None:
            found.append(spec.problem)
        elif name is None:
            found.append(
                f"{shown(spec.text)} ({spec.origin}) is not a package requirement: give one "
                "such as optax or flax>=0.8 (a line of its own; options such as -r or "
                "--index-url are not taken)."
            )
        elif (where := _local_reference(spec.text)) is not None:
            found.append(
                f"{shown(spec.text)} ({spec.origin}) points at {shown(where)}, a file or "
                "address of this computer: the TPU VM installs its packages itself, and it is "
                "not there. Give a package name (optax), a version (flax>=0.8), or an https:// "
                "URL the VM can reach."
            )
        elif name in HELD:
            found.append(
                f"{shown(spec.text)} ({spec.origin}) names {name}: tpuwizard installs a JAX of "
                f"its table ({TPU_REQUIREMENT} unless another of {', '.join(versions())} is "
                "chosen as the worker's JAX), with its jaxlib and libtpu, and never lets a "
                "package change it. Remove that line; the other packages install beside it."
            )
    return found


# Where a direct reference (``name @ URL``) can be fetched from by the worker itself.
_REMOTE_SCHEMES = ("http", "https", "ssh", "git")
_VCS = re.compile(r"^(git|hg|svn|bzr)\+")
_THIS_COMPUTER = re.compile(r"^(localhost|127(\.\d{1,3}){3}|0\.0\.0\.0|::1?|\[::1?\])$", re.I)


def _local_reference(text: str) -> str | None:
    """The URL of a direct reference that names this computer (a ``file:`` URL, a bare path, a
    host such as localhost): the worker installs on itself, where it does not exist. None for a
    plain requirement or a reference the worker can fetch."""
    from urllib.parse import urlsplit

    try:
        url = Requirement(text.strip()).url
    except InvalidRequirement:
        return None
    if url is None:
        return None
    try:
        parts = urlsplit(_VCS.sub("", url.strip()))
        host = parts.hostname or ""
    except ValueError:  # a malformed address (an unclosed '[')
        return url
    if parts.scheme.lower() not in _REMOTE_SCHEMES or not host or _THIS_COMPUTER.match(host):
        return url
    return None


def read_requirements(path: Path, origin: str | None = None) -> list[PackageSpec]:
    """The requirement lines of ``path`` (blank lines and ``#`` comments left out); a file that
    cannot be read raises :class:`BadInput`. Lines are checked by :func:`package_problems`."""
    label = origin or path.name
    try:  # never a FIFO's open nor /dev/zero's endless read (core/untrusted.py)
        text = untrusted.read_text(path, MAX_REQUIREMENTS_BYTES)
    except FileNotFoundError:
        raise BadInput(f"No requirements file at {path}: give the path of one.") from None
    except untrusted.NotASmallFile as err:
        what = (
            f"it is larger than {MAX_REQUIREMENTS_BYTES // 1024} KiB, which no list of "
            "requirements needs"
            if err.too_large
            else f"it is not a regular file ({err.why.split(', not')[0].removeprefix('it is ')})"
        )
        raise BadInput(
            f"Cannot read the requirements file {path}: {what}. Give the path of a text file "
            "with one requirement per line."
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) else "it is not UTF-8 text"
        raise BadInput(f"Cannot read the requirements file {path} ({why}).") from None
    specs = []
    for number, line in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*", "", line).strip()
        if line:
            specs.append(PackageSpec(line, f"{label} line {number}"))
    return specs


def beside_script(script: Path | None) -> Path | None:
    """The ``requirements.txt`` beside ``script``, when there is one."""
    if script is None:
        return None
    found = script.parent / AUTO_FILE
    return found if found.is_file() else None


@dataclass(frozen=True)
class PackageRequest:
    """Everything asked for, and the requirements file beside the script that was picked up."""

    specs: tuple[PackageSpec, ...]
    auto_file: Path | None = None

    def auto_words(self) -> str | None:
        """What a front end says when the file beside the script is used: it was not asked for."""
        if self.auto_file is None:
            return None
        names = [s.text for s in self.specs if s.origin.startswith(f"{AUTO_FILE} beside")]
        listed = ", ".join(names) if names else "no packages"
        return (
            f"Using {self.auto_file} (a {AUTO_FILE} beside the script is installed into the "
            f"worker venv): {listed}."
        )


def gather_packages(
    with_specs: Iterable[str],
    requirement_files: Iterable[Path] = (),
    script: Path | None = None,
) -> PackageRequest:
    """``--with`` specs, then each ``--requirements`` file, then the file beside the script
    (unless it was named already); a file that cannot be read raises :class:`BadInput`."""
    specs = [PackageSpec(text.strip(), "--with") for text in with_specs]
    named = []
    for path in requirement_files:
        specs += read_requirements(path)
        named.append(path.resolve())
    auto = beside_script(script)
    if auto is not None and auto.resolve() in named:
        auto = None
    if auto is not None:
        specs += read_requirements(auto, f"{AUTO_FILE} beside the script,")
    return PackageRequest(tuple(specs), auto)


def specs_from_field(text: str) -> tuple[PackageSpec, ...]:
    """The wizard's Packages field: requirements separated by spaces (a comma after one is
    left out, so "optax, flax" reads as two; one inside, as in flax>=0.8,<0.9, stays)."""
    words = (t.rstrip(",") for t in text.split())
    return tuple(PackageSpec(t, "the Packages field") for t in words if t)
