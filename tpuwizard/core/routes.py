"""The routes a launch may take, by the names the CLI, the ledger and the screens use.

``vm``, ``spot`` and ``flex`` make a TPU in the user's project (on-demand, spot, Flex-start);
``kaggle`` and ``colab`` run the script on a free TPU elsewhere. A ``StrEnum`` (xpk's
``CapacityType`` is the model): parsed once where a person answers, compared as members in the
core, written as the same words on disk and in ``--json``.
"""

from __future__ import annotations

from enum import StrEnum


class Route(StrEnum):
    VM = "vm"
    SPOT = "spot"
    FLEX = "flex"
    KAGGLE = "kaggle"
    COLAB = "colab"

    @property
    def is_free(self) -> bool:
        """A free route: the script runs on Kaggle's or Colab's TPU, no node in a project."""
        return self in (Route.KAGGLE, Route.COLAB)


# The routes that make a node in the user's project.
CLOUD_ROUTES = (Route.VM, Route.SPOT, Route.FLEX)
