"""The free routes' packages, one rule (session/free/packages.py) the wizard's Notebook step and
``launch --route kaggle|colab`` both ask (issue 55.11, issue 53): Kaggle installs them at the
kernel's start (with a requirements.txt beside the script, as a TPU route's launch does), by
Kaggle's rules; Colab's CLI installs none, so packages asked for Colab are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.packages import PackageSpec, specs_from_field
from tpuwizard.core.routes import Route
from tpuwizard.session.free.packages import NoPackagesHere, free_route_packages, takes_packages


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "main.py"
    path.write_text("print(1)\n")
    return path


@pytest.mark.parametrize(
    ("route", "typed", "named", "beside", "texts"),
    [
        (Route.KAGGLE, "optax, flax>=0.8,<0.9", None, None, ("optax", "flax>=0.8,<0.9")),
        (Route.KAGGLE, "", None, "einops\n", ("einops",)),  # the file beside the script
        (Route.KAGGLE, "optax", None, "einops\n", ("optax", "einops")),
        (Route.KAGGLE, "", None, None, ()),
        (Route.KAGGLE, "optax", "chex\n", None, ("optax", "chex")),  # --requirements after --with
        # The file beside the script named with --requirements: read once
        (Route.KAGGLE, "", "same", "einops\n", ("einops",)),
        (Route.COLAB, "", None, "einops\n", ()),  # Colab installs nothing: the file is not refused
    ],
)
def test_kaggle_takes_what_was_asked_and_the_file_beside_the_script(
    script: Path,
    route: Route,
    typed: str,
    named: str | None,
    beside: str | None,
    texts: tuple[str, ...],
) -> None:
    if beside is not None:
        (script.parent / "requirements.txt").write_text(beside)
    files: tuple[Path, ...] = ()
    if named == "same":
        files = (script.parent / "requirements.txt",)
    elif named is not None:
        files = (script.parent / "more.txt",)
        files[0].write_text(named)
    request = free_route_packages(route, specs_from_field(typed), files, script)
    assert tuple(s.text for s in request.specs) == texts


@pytest.mark.parametrize(
    ("route", "asked", "named", "refused", "words"),
    [
        (Route.COLAB, ("optax",), False, NoPackagesHere, "installs no packages"),
        (Route.COLAB, (), True, NoPackagesHere, "installs no packages"),  # --requirements too
        (Route.KAGGLE, ("jax==0.4.1",), False, BadInput, "the kernel's own JAX"),
        (Route.KAGGLE, ("-e .",), False, BadInput, "is not a package requirement"),
    ],
)
def test_what_a_free_route_cannot_install_is_refused_saying_why(
    script: Path, route: Route, asked: tuple[str, ...], named: bool, refused: type, words: str
) -> None:
    specs = tuple(PackageSpec(text, "--with") for text in asked)
    files: tuple[Path, ...] = ()
    if named:
        more = script.parent / "more.txt"
        more.write_text("optax\n")
        files = (more,)
    with pytest.raises(refused, match=words):
        free_route_packages(route, specs, files, script)


@pytest.mark.parametrize(("route", "takes"), [(Route.KAGGLE, True), (Route.COLAB, False)])
def test_which_free_route_installs_packages(route: Route, takes: bool) -> None:
    # launch --route colab refuses --with/--requirements by this rule.
    assert takes_packages(route) is takes


def test_the_packages_reach_the_kaggle_kernels_spec(script: Path, tmp_path: Path) -> None:
    from tpuwizard.session.free.kaggle import kaggle_route_for

    packages = free_route_packages(Route.KAGGLE, specs_from_field("optax"), (), script).specs
    route = kaggle_route_for(script, True, tmp_path / "runs", packages=packages)
    assert route.run.spec.packages == ("optax",)
