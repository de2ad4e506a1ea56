"""An accelerator type is a name only at the edges (issue 38): where a person or a file or
Google hands tpuwizard a string. There it is parsed (``catalog.parse_accelerator``) into a
``Slice``, and what is handed on is the Slice: a launch plan parses its answer once
(``LaunchPlan.slice``), and the launch's parts, the plan's rules and the workers read that.
A new caller of ``parse_accelerator`` fails here: take the Slice from where it was parsed, or,
if it truly is an edge, add it to EDGES saying which."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from tests.plans import changed, launch_plan
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.plan import catalog

PACKAGE = Path(__file__).resolve().parents[2] / "tpuwizard"

EDGES = {
    # Option parsing: the command line's --accelerator (launch's and up's through asked_slice,
    # into the LaunchAnswers the session's pipeline takes).
    "commands/common.py:asked_slice",
    "commands/evidence.py:_asked_slice",
    "commands/options/fit.py:named_slices",
    "commands/zones.py:_asked",
    # The wizard's answer (Capacity's slice), parsed once per answer where its state holds
    # it: Review, Zones and the GKE export read the state's Slice.
    "tui/state.py:WizardState.slice",
    # Plain mode's answer (the slice chosen), parsed once where its walk takes it.
    "plain/walk.py:PlainWizard.choose_where",
    # A front end's answers reach the session as a Slice, which the plan's Where holds; the
    # preflight's ask is made of a name (as `tpuwizard preflight` and a launch hand it).
    "core/handover/plan.py:make_plan",  # export's options and the wizard's GKE answers, checked
    "core/preflight/ask.py:PreflightAsk.known_slice",
    "core/preflight/ask.py:PreflightAsk.slice",
    # tpuwizard's own table of notebook platforms: the free TPU each offers.
    "core/evidence/notebook.py:NotebookPlatform.default_slice",
    # Names in a launch's events, as the front ends fold them (the events, like their JSON,
    # carry the name): what bills, and the run's summary.
    "core/launch/records/billing_state.py:Billed.slice",
    "core/launch/events/summary.py:RunSummary.known_slice",
    # Records read back from disk: the ledger, receipts; the price cache, keyed by name, which
    # answers a hit without importing the catalog (issue 33) and parses the name on a miss.
    "core/prices/quote.py:_slice",
    "core/prices/quote.py:_offline",
    "core/launch/records/ledger.py:Resource.slice",
    "core/evidence/receipt.py:check_receipt",
    "core/evidence/slice_receipt.py:_canonical",
    "core/evidence/slice_receipt.py:check_slice_receipt",
    # receipt check's --accelerator on a chain.json: refused when unknown, receipts or none.
    "core/evidence/chain.py:check_chain",
    # Google's answers: a node's acceleratorType read back (and a ledger record's, for
    # is_single_vm).
    "core/cloud/compute/slices.py:_vms_of",
    "core/cloud/compute/slice_body.py:is_single_vm",
    # The sandbox stands in for Google: it reads acceleratorType from the requests it is sent.
    "sandbox/billing_catalog.py:_figures",
    "sandbox/compute/google.py:zone_table",
    "sandbox/google.py:api_zone_table",
    "sandbox/google.py:flex_offered",
    "sandbox/google.py:offered",
    "sandbox/google.py:quota_name",
    "sandbox/locations.py:accelerator_types",
    "sandbox/locations.py:runtime_versions",
    "sandbox/model.py:worker_locations",
    "sandbox/tpu/nodes.py:Nodes.validate",
    "sandbox/tpu/queued.py:QueuedResources._advance",
    "sandbox/quota_limits.py:refuse_tpu_api_create",
    "sandbox/quota_limits.py:tpu_api_in_use",
    "sandbox/vms.py:VirtualMachines.boot_workers",
    # The catalog itself: the parser (a bad name's suggestion parses its corrected spelling).
    "core/plan/catalog.py:parse_accelerator",
}


@cache
def callers(name: str) -> frozenset[str]:
    """``path:function`` (``path:Class.method`` for a method) of every call of ``name``."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        owner = {
            id(fn): cls.name
            for cls in ast.walk(tree)
            if isinstance(cls, ast.ClassDef)
            for fn in cls.body
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        for scope in ast.walk(tree):
            if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(scope):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called == name:
                    where = f"{owner[id(scope)]}.{scope.name}" if id(scope) in owner else scope.name
                    found.add(f"{path.relative_to(PACKAGE)}:{where}")
    return frozenset(found)


def test_the_accelerator_is_parsed_only_at_the_edges():
    assert callers("parse_accelerator") == EDGES


def test_the_launch_reads_the_plans_slice_and_never_parses():
    # One launch (lifecycle), its plan's rules, its workers, kept nodes, the resume chain and
    # teardown: a plan, a ledger record or a Slice is what they are handed.
    launch = {c for c in callers("parse_accelerator") if c.startswith("core/launch/")}
    assert launch == {
        "core/launch/records/ledger.py:Resource.slice",
        # Not the launch: the folds of its events that the front ends read (what bills, the
        # run's summary), handed the name an event carries.
        "core/launch/records/billing_state.py:Billed.slice",
        "core/launch/events/summary.py:RunSummary.known_slice",
    }


def plan(accelerator: str) -> LaunchPlan:
    return launch_plan(accelerator, "us-central1-a", "p", "r1", Path("/tmp/r1"))


def test_a_plan_holds_its_slice_and_a_changed_plan_its_own():
    first = plan("v5litepod-16")
    assert first.slice == catalog.parse_accelerator("v5litepod-16") == first.where.slice
    assert first.slice is first.slice  # parsed once, not per reader
    assert first.accelerator == "v5litepod-16"
    assert changed(first, slice=catalog.parse_accelerator("v6e-4")).slice.name == "v6e-4"


def test_an_unknown_name_is_refused_where_it_is_read_so_no_plan_holds_one():
    # A plan's Where holds a Slice: the name is parsed at the edge that read it (the command
    # line, a screen, plain mode, the ledger), which says it is no TPU type.
    with pytest.raises(catalog.UnknownAcceleratorError, match="'v9-8' is not a TPU accelerator"):
        plan("v9-8")
