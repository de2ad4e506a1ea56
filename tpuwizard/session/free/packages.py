"""Which packages a run on a free route installs, the one rule the wizard's Notebook step and
``launch --route kaggle|colab`` ask: Kaggle's kernel installs them at its start, by Kaggle's
rules; Colab's CLI installs none (the runtime keeps its own)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.core.errors import BadInput
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from pathlib import Path

    from tpuwizard.core.launch.plan.packages import PackageRequest, PackageSpec


class NoPackagesHere(BadInput):
    """Packages were asked for on a free route that installs none; each front end words it
    (the field to clear, the options to leave out)."""

    def __init__(self, route: Route) -> None:
        super().__init__(f"the {route} route installs no packages")
        self.route = route


def takes_packages(route: Route) -> bool:
    """The free route installs packages: Kaggle's kernel at its start; Colab's CLI none."""
    return route == Route.KAGGLE


def free_route_packages(
    route: Route, asked: tuple[PackageSpec, ...], requirements: tuple[Path, ...], script: Path
) -> PackageRequest:
    """What a run of ``script`` on the free ``route`` installs: on Kaggle the packages ``asked``
    for, then each ``requirements`` file, then a requirements.txt beside the script (unless
    named), each checked by Kaggle's rules (:class:`BadInput` says why); on Colab nothing, the
    file beside the script left alone, and :class:`NoPackagesHere` where any was asked for."""
    from tpuwizard.core.kaggle.run import check_packages
    from tpuwizard.core.launch.plan.packages import PackageRequest, gather_packages

    if not takes_packages(route):
        if asked or requirements:
            raise NoPackagesHere(route)
        return PackageRequest(())
    found = gather_packages((), requirements, script)
    request = PackageRequest((*asked, *found.specs), found.auto_file)
    check_packages(request.specs)
    return request
