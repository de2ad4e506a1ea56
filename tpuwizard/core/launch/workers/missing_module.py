"""A script that failed on ``ModuleNotFoundError``: which package would provide the module.

The worker venv holds the pinned JAX, NumPy and what was added (``--with``, requirements files);
a module the script imports beyond that is a missing package, not a bug in the script. A module
that is a file or folder beside the script is the script's own and is left to the usual
diagnosis.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from tpuwizard.core.launch.plan.packages import HELD

_MISSING = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'")
# Modules whose package has another name on PyPI (the common ones, and the course's orbax).
PACKAGE_OF_MODULE = {
    "orbax": "orbax-checkpoint",
    "sklearn": "scikit-learn",
    "PIL": "pillow",
    "yaml": "pyyaml",
    "cv2": "opencv-python",
    "tensorflow_datasets": "tensorflow-datasets",
    "google.protobuf": "protobuf",
    "attr": "attrs",
    "dateutil": "python-dateutil",
    "bs4": "beautifulsoup4",
}


class SeesLines(Protocol):
    """What a job's output is shown to as it comes (a missing module's watch, the script's)."""

    def see(self, text: str) -> None: ...


class MissingModuleWatch:
    """Reads the script's lines as they come and remembers the first missing module."""

    def __init__(self, script: Path | None = None) -> None:
        self.folder = script.parent if script is not None else None
        self.module: str | None = None

    def see(self, text: str) -> None:
        if self.module is None:
            match = _MISSING.search(text)
            if match:
                self.module = match.group(1)

    @property
    def package(self) -> str | None:
        """The package to add for the module, or None when adding one would not help."""
        return package_for(self.module, self.folder) if self.module else None


def package_for(module: str, folder: Path | None = None) -> str | None:
    """The PyPI package that provides ``module``; None for the script's own modules (a file or
    folder of that name beside it) and for JAX's, which tpuwizard installs itself."""
    top = module.split(".")[0]
    if folder is not None and ((folder / f"{top}.py").exists() or (folder / top).is_dir()):
        return None
    if top in HELD or top == "jax":
        return None
    for name in (module, top):
        if name in PACKAGE_OF_MODULE:
            return PACKAGE_OF_MODULE[name]
    return top.replace("_", "-")
