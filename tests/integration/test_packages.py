"""Packages in the worker venv, end to end in the sandbox: tiny wheels made here stand in for PyPI
(the sandbox's workers download nothing), the pinned JAX is held, the receipt records what was
installed, and what is missing or conflicts is said before the script runs."""

from __future__ import annotations

import json
import subprocess
from importlib import metadata
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.iterate_helpers import down, json_events, run, up
from tests.integration.launch_helpers import launch, names, sandbox_is_empty
from tests.wheels import make_wheel, served_index
from tpuwizard.core.plan.jax_versions import DEFAULT
from tpuwizard.core.remote.bootstrap import NO_ROUTE_WHY

SCRIPT = "import tinypkg, otherpkg\nprint('values', tinypkg.VALUE, otherpkg.VALUE)\n"


def wheels(home: Path) -> None:
    """The sandbox's default wheel folder, with two packages and one needing another JAX."""
    folder = home / "sandbox" / "wheels"
    make_wheel(folder, "tinypkg", "0.3.1", "VALUE = 42\n")
    make_wheel(folder, "otherpkg", "1.2", "VALUE = 7\n")
    make_wheel(folder, "needsnewjax", "1.0", requires=("jax>=99",))


def project(tmp_path: Path, requirements: str | None = None) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "main.py").write_text(SCRIPT)
    if requirements is not None:
        (folder / "requirements.txt").write_text(requirements)
    return folder / "main.py"


def test_launch_installs_them_beside_the_pinned_jax_and_the_receipt_records_them(tmp_path, home):
    wheels(home)
    script = project(tmp_path, "tinypkg  # beside the script: used without asking\n")
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-1",
        "--with",
        "otherpkg==1.2",
        "--script",
        str(script),
    )
    assert code == 0, stderr
    assert "Using " in stderr and "requirements.txt beside the script is installed" in stderr
    lines = [e["text"] for e in events if e["event"] == "script_line"]
    assert "values 42 7" in lines
    versions = next(e for e in events if e["event"] == "versions")["versions"]
    assert versions["packages"] == {"otherpkg": "1.2", "tinypkg": "0.3.1"}
    assert f"jax=={versions['jax']}" == versions["requested"]  # the pin held
    receipt = Path(next(e for e in events if e["event"] == "receipt_saved")["path"])
    saved = json.loads(receipt.read_text())
    assert saved["packages"] == {"otherpkg": "1.2", "tinypkg": "0.3.1"}
    # Issue 36: the receipt names this computer's JAX beside the worker's.
    assert saved["laptop_jax"] == metadata.version("jax") and saved["jax"] == versions["jax"]
    assert versions["jax"] == DEFAULT.version  # the table's, with --with's packages beside it
    checked = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(receipt), "--expect", "cpu"),
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr  # the hash covers the versions


def test_a_package_in_no_wheel_folder_comes_from_this_computer_s_index(tmp_path, home):
    """As a real worker downloads it: from the index this computer's pip uses (a local one
    here, as pip config list reports it through PIP_INDEX_URL), the wheel folder first."""
    make_wheel(tmp_path / "index", "idxpkg", "0.2", "VALUE = 5\n")
    script = tmp_path / "main.py"
    script.write_text("import idxpkg\nprint('value', idxpkg.VALUE)\n")
    with served_index(tmp_path / "index") as url:
        code, events, stderr = launch(
            tmp_path,
            "--accelerator",
            "v5litepod-1",
            "--with",
            "idxpkg",
            "--script",
            str(script),
            PIP_INDEX_URL=url,  # the launch's own process reads it with pip config list
        )
    assert code == 0, stderr
    assert "value 5" in [e["text"] for e in events if e["event"] == "script_line"]
    assert sandbox_is_empty(home)


@pytest.mark.rotating("real-tools-e2e")
def test_a_package_downloaded_once_installs_again_from_uv_s_warm_cache(tmp_path, home):
    """Issue 55: once the first launch put idxpkg's index page in uv's cache, the next worker's
    offline attempt fails in other words ("needs to be downloaded from a registry"); it is
    tried online all the same, and the second launch installs as the first did."""
    for version in ("0.1", "0.2"):
        make_wheel(tmp_path / "index", "idxpkg", version, f"VALUE = {version!r}\n")
    script = tmp_path / "main.py"
    script.write_text("import idxpkg\nprint('value', idxpkg.VALUE)\n")
    with served_index(tmp_path / "index") as url:
        for version in ("0.1", "0.2"):
            code, events, stderr = launch(
                tmp_path,
                "--accelerator",
                "v5litepod-1",
                "--with",
                f"idxpkg=={version}",
                "--script",
                str(script),
                PIP_INDEX_URL=url,
                UV_CACHE_DIR=str(tmp_path / "uv-cache"),  # warm from the first launch only
            )
            assert code == 0, stderr
            lines = [e["text"] for e in events if e["event"] == "script_line"]
            assert f"value {version}" in lines, lines
    assert sandbox_is_empty(home)


def test_a_package_no_index_can_give_is_said_in_practice_s_words_not_google_s(tmp_path, home):
    """The index (here one that refuses, as every test's) cannot be reached from this computer:
    the words name the wheel folder and the index, never a VM's network fix."""
    wheels(home)
    script = tmp_path / "main.py"
    script.write_text("print('the script ran')\n")
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", "--with", "optax", "--script", str(script)
    )
    assert code == 1, stderr
    failed = next(e for e in events if e["event"] == "failed")
    assert failed["stage"] == "bootstrap" and failed["diagnosis"]["kind"] == "packages_failed"
    explanation = failed["diagnosis"]["explanation"]
    assert "could not be installed from the wheel folder" in explanation
    assert "cannot be reached from this" in explanation
    assert NO_ROUTE_WHY not in explanation and "Cloud NAT" not in json.dumps(events)
    assert "script_line" not in names(events) and sandbox_is_empty(home)


@pytest.mark.parametrize(
    ("asked", "reason"),
    [
        ("flaxx-no-such-pkg", "flaxx-no-such-pkg was not found in the package registry"),
        ("needsnewjax", "jax>=99"),  # in the wheel folder, but not beside the pinned JAX
    ],
)
def test_packages_the_worker_cannot_install_are_refused_before_create(
    tmp_path, home, asked, reason
):
    """Issue 55: resolved on this computer for the worker, from the worker's own sources (the
    wheel folder, then an index that holds nothing more), before any create: exit 2, no
    resource, no ledger record, uv's reason."""
    wheels(home)
    script = tmp_path / "main.py"
    script.write_text("print('the script ran')\n")
    with served_index(tmp_path / "index") as url:
        code, events, stderr = launch(
            tmp_path,
            "--accelerator",
            "v5litepod-1",
            "--with",
            asked,
            "--script",
            str(script),
            PIP_INDEX_URL=url,
        )
    assert code == 2, stderr
    assert "resource_exists" not in names(events) and "create_requested" not in names(events)
    assert f"The packages asked for ({asked}) cannot be installed" in stderr
    assert reason in stderr and "Nothing was created" in stderr
    ledger = home / "sandbox" / "ledger.jsonl"
    assert not ledger.exists() or ledger.read_text().strip() == ""  # no intent, no record
    assert sandbox_is_empty(home)


def folder_state(folder: Path) -> dict[str, tuple[int, int]]:
    """Each file under ``folder`` with its size and modification time."""
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_a_missing_module_names_the_flag_then_run_installs_only_what_is_new(tmp_path, home):
    wheels(home)
    script = project(tmp_path)
    kept = up(tmp_path, "--with", "tinypkg")
    assert json.loads(Path(kept["receipt"]).read_text())["packages"] == {"tinypkg": "0.3.1"}
    try:
        # Issue 55: a package the worker could not install is refused before anything is
        # copied (the launch's check and words): exit 2, the worker's folder as it was.
        (w0,) = (home / "sandbox" / "workers").glob(f"*/*/{kept['name']}/w0")
        before = folder_state(w0)
        with served_index(tmp_path / "index") as url:
            refused = run(tmp_path, "--with", "flaxx-no-such-pkg", str(script), PIP_INDEX_URL=url)
        assert refused.returncode == 2, refused.stderr
        assert "The packages asked for (flaxx-no-such-pkg) cannot be installed" in refused.stderr
        assert "was not found in the package registry" in refused.stderr
        assert f"Nothing was copied to {kept['name']}" in refused.stderr
        assert folder_state(w0) == before

        missing = run(tmp_path, "--json", str(script))
        assert missing.returncode == 1, missing.stderr
        failed = next(e for e in json_events(missing.stdout) if e["event"] == "failed")
        assert failed["diagnosis"]["kind"] == "missing_package"
        assert "--with otherpkg" in json.dumps(failed["diagnosis"]["next_steps"])

        added = run(tmp_path, "--with", "tinypkg", "--with", "otherpkg", str(script), "--with")
        assert added.returncode == 0, added.stderr
        assert "values 42 7" in added.stdout
        assert "+ otherpkg==1.2" in added.stderr and "+ tinypkg" not in added.stderr
        # What the venv now holds of them is said, as a launch's Verify says it (issue 49).
        assert "Added packages: tinypkg 0.3.1, otherpkg 1.2" in added.stderr
    finally:
        down(tmp_path, kept["name"])
