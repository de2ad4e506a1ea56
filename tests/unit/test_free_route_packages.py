"""The wizard's Notebook step has a Packages field (issue 55.11): Kaggle installs them at the
kernel's start (with a requirements.txt beside the script, as `launch --route kaggle` does), by
Kaggle's rules; Colab's CLI installs none, so packages typed for Colab are refused, saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpuwizard.core.errors import BadInput
from tpuwizard.tui.screens.notebook import free_route_packages


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "main.py"
    path.write_text("print(1)\n")
    return path


@pytest.mark.parametrize(
    ("where", "typed", "beside", "texts"),
    [
        ("kaggle", "optax, flax>=0.8,<0.9", None, ("optax", "flax>=0.8,<0.9")),
        ("kaggle", "", "einops\n", ("einops",)),  # the file beside the script, as launch's
        ("kaggle", "optax", "einops\n", ("optax", "einops")),
        ("kaggle", "", None, ()),
        ("colab", "", "einops\n", ()),  # Colab installs nothing: the file is not refused
    ],
)
def test_kaggle_takes_the_field_and_the_file_beside_the_script(
    script: Path, where: str, typed: str, beside: str | None, texts: tuple[str, ...]
) -> None:
    if beside is not None:
        (script.parent / "requirements.txt").write_text(beside)
    assert tuple(s.text for s in free_route_packages(where, typed, script)) == texts


@pytest.mark.parametrize(
    ("where", "typed", "words"),
    [
        ("colab", "optax", "Colab's CLI installs no packages"),
        ("kaggle", "jax==0.4.1", "on Kaggle your script runs with the kernel's own JAX"),
        ("kaggle", "-e .", "is not a package requirement"),
    ],
)
def test_what_a_free_route_cannot_install_is_refused_saying_why(
    script: Path, where: str, typed: str, words: str
) -> None:
    with pytest.raises(BadInput, match=words):
        free_route_packages(where, typed, script)


def test_the_packages_reach_the_kaggle_kernels_spec(script: Path, tmp_path: Path) -> None:
    from tpuwizard.session.free.kaggle import kaggle_route_for

    packages = free_route_packages("kaggle", "optax", script)
    route = kaggle_route_for(script, True, tmp_path / "runs", packages=packages)
    assert route.run.spec.packages == ("optax",)
