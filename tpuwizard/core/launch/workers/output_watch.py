"""What a script's lines say that its diagnosis needs: a missing module (missing_module.py) and
the TPU's own trouble (HBM ran out, an XLA error code, a TPU another process holds)."""

from __future__ import annotations

from pathlib import Path

from tpuwizard.core.cloud.diagnose.tpu_text import TpuError, TpuErrorWatch
from tpuwizard.core.launch.workers.missing_module import MissingModuleWatch


class ScriptOutputWatch:
    """Reads the script's lines as they come: the first missing module, and what the TPU said.
    Each reader is held whole, as an attribute (no class inherits another module's)."""

    def __init__(self, script: Path | None = None) -> None:
        self.missing = MissingModuleWatch(script)
        self._tpu = TpuErrorWatch()

    def see(self, text: str) -> None:
        self.missing.see(text)
        self._tpu.see(text)

    @property
    def module(self) -> str | None:
        return self.missing.module

    @property
    def package(self) -> str | None:
        return self.missing.package

    @property
    def tpu_error(self) -> TpuError | None:
        return self._tpu.found
