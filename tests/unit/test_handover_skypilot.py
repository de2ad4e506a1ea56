"""The SkyPilot task ``tpuwizard export --to skypilot`` writes is valid by SkyPilot 0.14.1's own
schemas (``sky/utils/schemas.py``: the task's, and the resources' it checks separately), stored
in tests/data/skypilot with their source; validated as SkyPilot validates: Draft 7 plus its two
enum keywords (``sky/utils/validator.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tpuwizard.core.handover import skypilot
from tpuwizard.core.handover.plan import make_plan

SCHEMAS = Path(__file__).parents[1] / "data" / "skypilot" / "schemas-0.14.1.json"
# Every plan SkyPilot's TPU path takes: each generation it serves, on-demand and spot.
SERVED = [
    ("v5litepod-16", "spot"),
    ("v5litepod-1", "vm"),
    ("v5p-8", "vm"),
    ("v6e-8", "spot"),
    ("v4-8", "vm"),
]


def _case_insensitive_enum(
    _validator: object, enums: list[str], instance: str, _schema: object
) -> Iterator[jsonschema.ValidationError]:
    if instance.lower() not in [e.lower() for e in enums]:
        yield jsonschema.ValidationError(f"{instance!r} is not one of {enums!r}")


def _case_sensitive_enum(
    _validator: object, enums: list[str], instance: str, _schema: object
) -> Iterator[jsonschema.ValidationError]:
    if instance not in enums:
        yield jsonschema.ValidationError(f"{instance!r} is not one of {enums!r}")


SkyValidator = jsonschema.validators.extend(
    jsonschema.Draft7Validator,
    validators={
        "case_insensitive_enum": _case_insensitive_enum,
        "case_sensitive_enum": _case_sensitive_enum,
    },
)


@pytest.fixture(scope="module")
def schemas() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMAS.read_text("utf-8"))
    for schema in loaded.values():
        jsonschema.Draft7Validator.check_schema(schema)
    return loaded


def _check(task: dict[str, Any], schemas: dict[str, Any]) -> None:
    """As ``sky.Task.from_yaml_config`` does: the task, then its resources."""
    SkyValidator(schemas["task"]).validate(task)
    SkyValidator(schemas["resources"]).validate(task["resources"])


@pytest.mark.parametrize("accelerator, route", SERVED)
def test_the_task_written_is_valid_by_skypilots_own_schemas(
    accelerator: str, route: str, schemas: dict[str, Any]
) -> None:
    plan = make_plan(accelerator, route=route, script="train.py", packages=("optax",))
    text = skypilot.render(plan)
    loaded = yaml.safe_load(text)
    assert loaded == skypilot.task(plan)  # the file holds the task, comments aside
    _check(loaded, schemas)
    assert loaded["resources"].get("use_spot", False) is (route == "spot")


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t["resources"].update(use_spot="yes"),  # a flag as text
        lambda t: t["resources"]["accelerator_args"].update(tpu_vm_name="x"),  # no such key
        lambda t: t["resources"].update(cloud="gcloud"),  # not one of SkyPilot's clouds
        lambda t: t.update(run=["bash", "tpuwizard_job.sh"]),  # run is one string
        lambda t: t.update(nodes=2),  # SkyPilot's key is num_nodes
    ],
)
def test_skypilots_schemas_refuse_a_wrong_task(change: Any, schemas: dict[str, Any]) -> None:
    """The check can fail: each change is one SkyPilot refuses."""
    task = skypilot.task(make_plan("v5litepod-16", route="spot"))
    change(task)
    with pytest.raises(jsonschema.ValidationError):
        _check(task, schemas)
