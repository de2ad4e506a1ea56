"""No class is split across files by mixins: a class made of parts holds them (composition).

A class in ``tpuwizard`` may inherit from a class defined in another ``tpuwizard`` module only if
that base is an exception (an error's kind, not a share of its behaviour), a ``typing.Protocol``
(an interface that provides nothing), or on ``ALLOWED`` with its reason. Every class of every
module is checked, nested ones too, in a fresh interpreter (importing the wizard loads Textual).
"""

import json
import subprocess
import sys

from tests.conftest import REPO

# Base (module.qualname) -> why subclassing it across modules is not a mixin.
ALLOWED = {
    "tpuwizard.tui.screens.base.WizardScreen": (
        "each wizard step is one Textual Screen; WizardScreen is Textual's way to give them "
        "one layout, key bar and answer (dismiss with a typed value or Back)"
    ),
    "tpuwizard.core.launch.events.launch_events.Event": (
        "every lifecycle event is a frozen dataclass of data; Event gives each its JSON name "
        "and dict; the Kaggle and Colab routes' own events, which no launch emits, are in "
        "events/kaggle.py and events/colab.py"
    ),
}

PROBE = """
import importlib, inspect, json, pkgutil, tpuwizard

def classes(holder, module):
    for value in list(vars(holder).values()):
        if inspect.isclass(value) and value.__module__ == module and value is not holder:
            yield value
            yield from classes(value, module)

edges = []
for info in pkgutil.walk_packages(tpuwizard.__path__, "tpuwizard."):
    if info.name.rsplit(".", 1)[-1] == "__main__":  # it runs the CLI
        continue
    module = importlib.import_module(info.name)
    for cls in classes(module, info.name):
        for base in cls.__bases__:
            if base.__module__.split(".")[0] == "tpuwizard" and base.__module__ != info.name:
                edges.append({
                    "cls": f"{info.name}.{cls.__qualname__}",
                    "base": f"{base.__module__}.{base.__qualname__}",
                    "exception": issubclass(base, BaseException),
                    "protocol": bool(getattr(base, "_is_protocol", False)),
                })
print(json.dumps(edges))
"""


def cross_module_bases() -> list[dict]:
    """Every (class, base) pair in tpuwizard whose base is defined in another tpuwizard module."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, cwd=REPO
    )
    return json.loads(proc.stdout)


def test_no_class_inherits_behaviour_from_another_tpuwizard_module():
    edges = cross_module_bases()
    assert any(e["exception"] for e in edges), "the probe should see e.g. FetchFailed(RemoteError)"
    mixed_in = [
        f"{e['cls']} inherits {e['base']}"
        for e in edges
        if not (e["exception"] or e["protocol"] or e["base"] in ALLOWED)
    ]
    assert mixed_in == [], "hold the other module's part as an attribute instead"


def test_every_allowed_base_is_still_subclassed_across_modules():
    used = {e["base"] for e in cross_module_bases()}
    assert set(ALLOWED) <= used, f"remove {sorted(set(ALLOWED) - used)} from ALLOWED"
