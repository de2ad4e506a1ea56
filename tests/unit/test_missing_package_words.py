"""A script stopped on ModuleNotFoundError: each front end says how to add the package once, in
its own words (plain mode named a requirements.txt twice), and plain mode's words name the
question it asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpuwizard.core.cloud.diagnose.remote import missing_package_diagnosis
from tpuwizard.words.choice_words import AUDIENCES, all_words


@pytest.mark.parametrize("audience", AUDIENCES)
def test_the_advice_to_add_a_missing_package_is_said_once(audience):
    steps = all_words(missing_package_diagnosis("flax", "flax").next_steps, audience)
    assert len(steps) == 2
    assert sum("requirements.txt" in step for step in steps) == 1, steps


def test_plain_mode_names_its_packages_question():
    (add, _) = all_words(missing_package_diagnosis("flax", "flax").next_steps, "plain")
    assert add == 'Add flax: type flax at the "Packages to add" question.'
    assert '"Packages to add, separated by spaces' in Path("tpuwizard/plain/walk.py").read_text()
