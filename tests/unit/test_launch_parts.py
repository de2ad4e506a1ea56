"""Each launch part receives what it uses (issue 38): a small frozen input of its own, made from
the plan and the runtime in one place (lifecycle/part_inputs.py), and the LaunchContext they all
share; never the wide LaunchPlan or Runtime. A part that needs another setting gets a field on
its input (and part_inputs.py fills it), not the plan or the runtime back."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from pathlib import Path

import pytest

from tests.fakes import MemoryCloud
from tests.unit.test_launch_safety import make_plan, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.launch.lifecycle import ending, fan_out, launch, on_workers, provision
from tpuwizard.core.launch.lifecycle.launch_state import LaunchContext
from tpuwizard.core.launch.lifecycle.runtime import Runtime
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan

WIDE = (LaunchPlan, Runtime)

# Each part, its own input, and the module that reads it.
PARTS = [
    (ending.Ending, ending.EndingInput, ending),
    (provision.Provisioner, provision.ProvisionInput, provision),
    (on_workers.WorkerSteps, on_workers.WorkerInput, on_workers),
    (fan_out.FanOut, fan_out.FanOutInput, fan_out),
]
IDS = [part.__name__ for part, _, _ in PARTS]


def named_types(hint: object) -> set[object]:
    """``hint`` and every type inside it (``X | None``, ``Callable[[X], Y]``, ``tuple[X, ...]``)."""
    if isinstance(hint, list):  # a Callable's parameters
        return set().union(*(named_types(arg) for arg in hint))
    found = {hint}
    for arg in typing.get_args(hint):
        found |= named_types(arg)
    return found


def wide_in(hints: dict[str, object]) -> dict[str, object]:
    return {name: hint for name, hint in hints.items() if named_types(hint) & set(WIDE)}


@pytest.mark.parametrize(("part", "given", "module"), PARTS, ids=IDS)
def test_no_part_takes_the_plan_or_the_runtime(part, given, module):
    hints = typing.get_type_hints(part.__init__)
    hints.pop("return", None)
    assert wide_in(hints) == {}, f"{part.__name__} takes the wide plan or runtime"
    # Every parameter is typed (a bare one could be handed anything), and the first is the
    # part's own input.
    params = list(inspect.signature(part.__init__).parameters)[1:]
    assert params and set(params) <= set(hints)
    assert hints[params[0]] is given


@pytest.mark.parametrize(("part", "given", "module"), PARTS, ids=IDS)
def test_each_input_is_frozen_narrow_and_read_whole(part, given, module):
    assert dataclasses.is_dataclass(given) and given.__dataclass_params__.frozen
    hints = typing.get_type_hints(given)
    assert wide_in(hints) == {}, f"{given.__name__} holds the wide plan or runtime"
    # Exactly what the part uses: a field its module never reads is not its to hold.
    tree = ast.parse(Path(module.__file__).read_text())
    read = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    unread = [f.name for f in dataclasses.fields(given) if f.name not in read]
    assert unread == [], f"{given.__name__} holds what {module.__name__} never reads"


def test_the_shared_context_is_the_three_things_every_part_shares():
    assert [f.name for f in dataclasses.fields(LaunchContext)] == ["emit", "cancel", "state"]
    assert wide_in(typing.get_type_hints(LaunchContext)) == {}
    # What a fan-out uses of the provisioner: its shared context and its create, not its plan.
    assert wide_in(typing.get_type_hints(fan_out.ZoneCreator)) == {}


@pytest.mark.parametrize("module", [m for _, _, m in PARTS], ids=IDS)
def test_the_parts_modules_never_name_the_plan_or_the_runtime(module):
    """Not in a hint, a cast or a local either: the modules of the parts do not reach them."""
    tree = ast.parse(Path(module.__file__).read_text())
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    wide = {cls.__name__ for cls in WIDE}
    assert (names | imported) & wide == set()
    assert "tpuwizard.core.launch.lifecycle.runtime" not in modules


def test_a_launch_hands_each_part_its_own_input(tmp_path):
    plan, rt = make_plan(tmp_path), make_runtime(tmp_path, MemoryCloud())
    made = launch.Launch(plan, rt, lambda e: None, CancelToken())
    parts = {"ending": made.ending, "provisioner": made.provisioner, "workers": made.workers}
    for name, part in parts.items():
        held = [v for v in vars(part).values() if isinstance(v, WIDE)]
        assert held == [], f"the launch's {name} holds the plan or the runtime"
    assert made.provisioner.given.node_name == plan.node_name == "tpu-a"
    assert made.provisioner.given.fan_out is None  # one zone at a time
    assert made.ending.given.ledger is rt.ledger and made.workers.given.expect == "cpu"
    assert made.provisioner.state is made.ending.state is made.workers.state is made.state
