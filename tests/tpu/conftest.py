"""Without a TPU every test here is skipped, and JAX is never imported to find that out."""

from __future__ import annotations

import pytest

from tests.tpu import FORCE_ENV, tpu_present


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if tpu_present():
        return
    skip = pytest.mark.skip(reason=f"no TPU here (no TPU device files, or {FORCE_ENV} unset)")
    for item in items:
        if "tests/tpu/" in item.nodeid:
            item.add_marker(skip)
