"""The fault and signal drill: every command stopped by every signal at every point, sandbox.

    .venv/bin/python benchmarks/signal_drill.py [--commands launch,up,...] [--rotation]
        [--backend tpu-api|compute|both]

For launch, launch --keep, up, run and the wizard: SIGINT, SIGTERM, SIGHUP and SIGKILL at each
point of the command's work (tests/integration/signal_drill.py names them), each case in its own
TPUWIZARD_HOME under a temporary folder, `run` on a node its own `up` made. Prints one row a
case: the exit code against the README's (128 + N; 137 for SIGKILL, as a shell shows it), what is
left in the sandbox after the command (goal 0 after a stop signal; 1 for `run`, whose node
stays) and, for SIGKILL, whether `status` listed it and what is left after `teardown --all`
(goal 0). Exits 1 if any case fails. `--rotation` runs the CI test's one signal per point.
Both backends by default (tests/integration/drill_backends.py): the TPU API's node (v5litepod-1)
and Compute Engine's instance (v6e-1); the wizard walks the TPU API only.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' drill helpers

from tests.integration.drill_backends import BACKENDS
from tests.integration.signal_drill import (
    POINTS,
    STOP_SIGNALS,
    Case,
    Outcome,
    all_cases,
    clean_up,
    rotated_cases,
    run_case,
    run_case_on,
    up_node,
)
from tests.integration.signal_drill_wizard import run_wizard_case

COMMANDS = tuple(POINTS)
TPU_API_ONLY = ("wizard", "wizard+kept")  # it walks with its defaults, a v5e: the TPU API's


def one(case: Case, root: Path) -> Outcome:
    if case.command.startswith("wizard"):
        return run_wizard_case(case, root)
    if case.command != "run":
        return run_case(case, root)
    node = up_node(root, backend=case.backend)
    try:
        return run_case_on(case, root, node, more_cases=False)
    finally:
        clean_up(root / "state", root)


def row(o: Outcome) -> str:
    c = o.case
    code = "-" if o.code is None else str(o.code)
    after = "-" if o.left_after_followup is None else str(o.left_after_followup)
    listed = {None: "-", True: "yes", False: "NO"}[o.listed_ok]
    want_left = str(o.left_expected) if c.sig in STOP_SIGNALS else "-"  # SIGKILL: after
    verdict = "PASS" if o.passed else "FAIL"
    return (
        f"{c.backend:8} {c.command:14} {c.point:10} {c.sig.name:8} {code:>4} {c.expected_code:>4} "
        f"{o.left:>4} {want_left:>4} {listed:>6} {after:>5}  {verdict}"
    )


def leftover_processes(marker: str) -> list[str]:
    """Live processes whose command line mentions ``marker`` (the drill's folder)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            alive = "State:\tZ" not in (proc / "status").read_text()
        except (OSError, UnicodeDecodeError):
            continue
        if proc.name.isdigit() and marker in cmdline and alive and proc.name != str(os.getpid()):
            found.append(cmdline)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", default=",".join(COMMANDS), help="comma-separated")
    parser.add_argument("--rotation", action="store_true", help="one signal per point only")
    parser.add_argument("--backend", choices=(*BACKENDS, "both"), default="both")
    args = parser.parse_args()
    commands = tuple(c.strip() for c in args.commands.split(","))
    unknown = set(commands) - set(COMMANDS)
    if unknown:
        parser.error(f"unknown command(s) {sorted(unknown)}; choose from {', '.join(COMMANDS)}")
    backends = tuple(BACKENDS) if args.backend == "both" else (args.backend,)
    cases = [
        case
        for backend in backends
        for case in (rotated_cases if args.rotation else all_cases)(
            tuple(c for c in commands if backend == "tpu-api" or c not in TPU_API_ONLY), backend
        )
    ]
    if not cases:
        parser.error(f"{', '.join(commands)} run(s) on the TPU API only: give --backend tpu-api")
    print(
        f"{'backend':8} {'command':14} {'point':10} {'signal':8} {'exit':>4} {'want':>4} "
        f"{'left':>4} {'want':>4} {'listed':>6} {'after':>5}  verdict",
        flush=True,
    )
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tpuwizard-drill-") as tmp:
        for i, case in enumerate(cases):
            outcomes.append(one(case, Path(tmp) / f"case-{i:03d}"))
            print(row(outcomes[-1]), flush=True)
        leaked = leftover_processes(tmp)
    failed = [o for o in outcomes if not o.passed]
    left = sum(o.left - o.left_expected for o in outcomes if o.case.sig in STOP_SIGNALS)
    print(
        f"\n{len(outcomes)} cases, {len(outcomes) - len(failed)} passed, {len(failed)} failed, "
        f"in {time.perf_counter() - started:.0f} s; resources left after the command "
        f"(stop signals, beyond run's kept node): "
        f"{left}; after the "
        f"follow-up teardown (SIGKILL): {sum(o.left_after_followup or 0 for o in outcomes)}; "
        f"processes of the drill left running: {len(leaked)}"
    )
    for o in failed:
        print(f"FAIL {o.case.label}: {'; '.join(o.problems)}")
    for cmdline in leaked:
        print(f"LEFT RUNNING {cmdline[:200]}")
    return 1 if failed or leaked else 0


if __name__ == "__main__":
    sys.exit(main())
