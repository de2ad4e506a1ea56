"""Start-up stays light: fit never loads jax, grpc, google.cloud or textual; the core no UI."""

import ast
import json
import os
import re
import subprocess
import sys
import tomllib

from tests.conftest import REPO

HEAVY = ("jax", "grpc", "google.cloud", "textual", "questionary", "kaggle", "kagglesdk")

PROBE = """
import json, sys
from tpuwizard.cli import main
try:
    main({args!r})
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def run_probe(args):
    """Run the CLI with ``args`` in a fresh interpreter: (its stderr lines, every module loaded)."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True, check=True
    )
    *said, modules = proc.stderr.strip().splitlines()
    return said, json.loads(modules)


def heavy(modules):
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith("google.cloud"))


def loaded_after(args):
    return heavy(run_probe(args)[1])


def test_fit_json_loads_no_heavy_package():
    assert loaded_after(["fit", "48", "--json"]) == []


# What fit's start did without once measured (issue 38: `fit 48 --json` at most 3x bare Python):
# importlib.metadata (~50 ms: email, zipfile), difflib, and the other commands' modules (each
# command's module is imported when it runs); the kept-node reader when nothing was recorded.
# Since issue 38's last pass: the choices a refused plan names (tpuwizard.core.errors imports them
# when one is refused) and the signal module (core/exit_codes.py holds the three numbers).
# Issue 54: the Kept line's words when no node is kept; the backends' and transports' words
# (their options live with the options of the commands that create, not in commands/common.py).
NOT_FOR_FIT = (
    "importlib.metadata",
    "difflib",
    "tpuwizard.session.kept.lines",
    "tpuwizard.core.choices",
    "signal",
    "tpuwizard.words.kept_end",
    "tpuwizard.core.cloud.backends",
)
OTHER_COMMANDS = ("cloud", "cleanup", "evidence", "handover", "iterate", "preflight", "zones")


def test_fit_json_loads_only_its_own_command(tmp_path, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_HOME", str(tmp_path))  # no ledger: no kept node to say
    modules = run_probe(["fit", "48", "--json"])[1]
    commands = {m.split(".")[2] for m in modules if m.startswith("tpuwizard.commands.")}
    assert commands.isdisjoint(OTHER_COMMANDS)
    assert [m for m in NOT_FOR_FIT if m in modules] == []


def test_fit_json_says_a_kept_node_without_the_billing_state(tmp_path, monkeypatch):
    import time

    from tpuwizard.core.launch.records.ledger import Ledger, Resource

    monkeypatch.setenv("TPUWIZARD_HOME", str(tmp_path))
    resource = Resource(
        "node", "my-project", "us-central1-a", "tpuwizard-ab12", "v5litepod-4", "r1"
    )
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.record("intent", resource)
    ledger.record("created", resource)
    ledger.record("kept", resource, deadline=time.time() + 7200, idle_s=1800.0, kept_at=time.time())
    said, modules = run_probe(["fit", "48", "--json"])
    assert any(line.startswith("Kept: tpuwizard-ab12") for line in said)
    # Nor gcloud's configuration: reading a record back checks its names (core/cloud/names.py).
    # Nor what decides practice or real without a practice ledger (issue 54). Where no line can
    # be held, tempfile and hashlib stay unloaded too: tests/unit/test_ledger_held_lookup.py.
    unneeded = (
        "tpuwizard.core.launch.records.billing_state",
        "tpuwizard.session.kept.nodes",
        "tpuwizard.core.cloud.gcloud_config",
        "tpuwizard.session.practice.sandbox",
    )
    assert [m for m in unneeded if m in modules] == []


def test_the_exit_codes_signal_numbers_are_the_systems():
    import signal

    from tpuwizard.core import exit_codes

    assert (exit_codes.SIGHUP, exit_codes.SIGINT, exit_codes.SIGTERM) == (
        signal.SIGHUP,
        signal.SIGINT,
        signal.SIGTERM,
    )


def test_the_wizard_command_loads_no_command_module():
    # Without a terminal it stops at its one line (exit 2): what it loaded to get there is
    # what the wizard's first screen waits for beyond the wizard itself.
    said, modules = run_probe([])
    assert said and "needs a terminal" in said[-1]
    loaded = [m for m in modules if m.startswith("tpuwizard.commands.")]
    assert loaded == ["tpuwizard.commands.common"]


def test_status_without_records_loads_only_what_it_answers_with(tmp_path, monkeypatch):
    # status's start (issue 31 item 8): with no kept record and no Kaggle or Colab ledger,
    # what would check them is not even imported (the answer is "none" either way); nor is a
    # launch's machinery (the events, the runtime, the program fit), which reading the ledger
    # and surveying the cloud do not use.
    monkeypatch.setenv("TPUWIZARD_HOME", str(tmp_path))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    said, modules = run_probe(["status", "--sandbox"])
    assert any("practice" in line for line in said)  # it ran, in practice
    unneeded = (
        "tpuwizard.session.kept.nodes",
        "tpuwizard.session.free.kaggle_records",
        "tpuwizard.core.kaggle.run",
        "tpuwizard.session.free.colab_records",  # no Colab ledger: Colab's machinery stays unloaded
        "tpuwizard.core.colab.run",
        "tpuwizard.core.launch.events.launch_events",
        "tpuwizard.core.launch.lifecycle.runtime",
        "tpuwizard.core.plan.program_fit",
    )
    assert [m for m in unneeded if m in modules] == []


def test_help_still_lists_every_command():
    out = subprocess.run(
        [sys.executable, "-m", "tpuwizard", "--help"], capture_output=True, text=True, check=True
    ).stdout
    listed = re.findall(r"^  (\w+)  ", out.split("Commands:")[1], re.MULTILINE)
    assert listed == sorted(
        [
            "down",
            "export",
            "fit",
            "launch",
            "notebook",
            "preflight",
            "receipt",
            "run",
            "sandbox",
            "ssh",
            "status",
            "teardown",
            "up",
            "verify",
            "watch",
            "zones",
        ]
    )


def test_a_mistyped_command_is_still_given_its_close_name():
    done = subprocess.run(
        [sys.executable, "-m", "tpuwizard", "stauts"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "No such command 'stauts'. Did you mean 'status'?" in done.stderr


def test_fit_table_loads_no_heavy_package():
    assert loaded_after(["fit", "48"]) == []


def test_the_wizard_module_loads_no_cloud_or_jax_package():
    code = (
        "import sys; import tpuwizard.tui.app; print(sorted(m for m in sys.modules if "
        "m.split('.')[0] in ('jax', 'grpc') or m.startswith('google.cloud')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# The wizard's first frame (issue 38: at most 1.3x a bare Textual app): what it has loaded once its
# first step is drawn, taken where the wizard starts its leftover check (just after that draw).
FIRST_FRAME = """
import json, sys
from tpuwizard.tui.app import WizardApp

class FirstFrame(WizardApp):
    def start_leftover_check(self):
        print(json.dumps({"screen": type(self.screen).__name__, "modules": sorted(sys.modules)}))
        self.exit(0)

FirstFrame().run(headless=True, size=(80, 24))
"""
FIRST_STEP_SCREENS = {"tpuwizard.tui.screens.base", "tpuwizard.tui.screens.route"}


def test_the_wizards_first_frame_loads_only_the_first_step(tmp_path):
    env = {**os.environ, "TPUWIZARD_HOME": str(tmp_path), "CLOUDSDK_CONFIG": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_FRAME],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=120,
    )
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    assert shown["screen"] == "RouteScreen"
    modules = shown["modules"]
    # The cover a terminal too small gets is imported just after a step is drawn, as the leftover
    # check starts: this probe may see it either side of its moment, a terminal sees it after.
    later_steps = [
        m
        for m in modules
        if m.startswith("tpuwizard.tui.screens.")
        and m not in FIRST_STEP_SCREENS
        and m != "tpuwizard.tui.screens.too_small"
    ]
    assert later_steps == []
    unneeded = (
        "click",
        "tpuwizard.cli",
        "tpuwizard.commands",
        "tpuwizard.tui.answers",  # what the later steps are dismissed with
        "tpuwizard.core.choices",  # what a refused plan names
        "tpuwizard.core.launch.records.ledger",  # the leftover check reads it, after the frame
        "tpuwizard.tui.leftover_check",
        "tpuwizard.tui.launch_view",
    )
    assert [m for m in unneeded if m in modules] == []
    assert [m for m in modules if m.split(".")[0] in ("jax", "grpc", "google")] == []


def test_offline_zones_load_no_heavy_package():
    assert loaded_after(["zones", "--offline", "--json"]) == []


def test_core_and_session_import_no_ui():
    code = (
        "import sys, pkgutil, importlib, tpuwizard.core as c, tpuwizard.session as s\n"
        "[importlib.import_module(m.name) for pkg in (c, s) "
        "for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.')]\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('textual', 'questionary', 'rich')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_subpackage_is_listed_for_installation():
    listed = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(p.relative_to(REPO).parent.parts)
        for p in (REPO / "tpuwizard").rglob("__init__.py")
    }
    assert found <= listed, f"add {sorted(found - listed)} to [tool.setuptools] packages"


def test_every_test_file_the_config_and_docs_name_exists():
    texts = [REPO / "pyproject.toml", REPO / "README.md", *(REPO / "docs").rglob("*.md")]
    named = {name for p in texts for name in re.findall(r"tests/[\w/]+\.py", p.read_text())}
    assert named and {n for n in named if not (REPO / n).exists()} == set()


def glue(source: str) -> list[str]:
    """The re-exports in ``source`` that glue a cut file back together: ``import X as X``,
    ``from m import X as X``, and an ``__all__`` naming what the module does not define."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            origin = f"from {node.module} " if isinstance(node, ast.ImportFrom) else ""
            found += [
                f"line {node.lineno}: {origin}import {alias.name} as {alias.asname}"
                for alias in node.names
                if alias.asname == alias.name
            ]
    defined: set[str] = set()
    listed: list[tuple[int, str]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and target.id == "__all__":
                value = node.value
                items = value.elts if isinstance(value, ast.List | ast.Tuple) else []
                listed += [(node.lineno, i.value) for i in items if isinstance(i, ast.Constant)]
            elif isinstance(target, ast.Name):
                defined.add(target.id)
    return found + [
        f"line {line}: __all__ lists {name}, defined elsewhere"
        for line, name in listed
        if name not in defined
    ]


def test_the_glue_finder_sees_each_form():
    source = (
        "import json as json\n"
        "from pkg.part import Thing as Thing\n"
        "from pkg.part import Other, Renamed as Local\n"
        "import pkg.part as part\n"
        "def mine(): pass\n"
        "MINE = 1\n"
        "__all__ = ['mine', 'MINE', 'Other']\n"
    )
    assert glue(source) == [
        "line 1: import json as json",
        "line 2: from pkg.part import Thing as Thing",
        "line 7: __all__ lists Other, defined elsewhere",
    ]


def test_no_module_re_exports_what_another_defines():
    # A concept stays whole at any length; a file cut where no concept ends is not glued back
    # by re-exports: every name is imported from the module that defines it.
    found = {
        str(p.relative_to(REPO)): where
        for p in (REPO / "tpuwizard").rglob("*.py")
        if (where := glue(p.read_text()))
    }
    assert found == {}, "import these names from where they are defined"
