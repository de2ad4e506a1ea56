"""`tpuwizard fit --program`: the real libtpu compile for TPU topologies, on this CPU machine.

Every byte count is worked out by hand here from the example's shapes. The TPU lays arrays out in
tiles; the examples' arrays are whole tiles (rows a multiple of 8, columns of 128 for float32),
so their bytes are exactly elements x 4, except the Adam step counter: a scalar occupies one
128-lane row, 128 x 4 = 512 bytes, on the TPU (its logical size is 4 bytes).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO, clean_env, tpuwizard_cmd
from tpuwizard.core.plan import program_fit

pytestmark = [
    pytest.mark.rotating("program-fit"),
    pytest.mark.slow,
    pytest.mark.skipif(
        not program_fit.libtpu_installed(),
        reason="libtpu is not installed: pip install -e '.[test,tpu-plan]' (scripts/test.sh does)",
    ),
]

MLP = REPO / "examples" / "mlp_adam.py"
SLICES = "v5litepod-1,v5litepod-4,v5litepod-8"
DEVICES = {"v5litepod-1": 1, "v5litepod-4": 4, "v5litepod-8": 8}

# examples/mlp_adam.py: w1 1024x4096, b1 4096, w2 4096x1024, b2 1024, float32.
PARAMS = (1024 * 4096 + 4096 + 4096 * 1024 + 1024) * 4  # 33,574,912
SCALAR_ON_TPU = 128 * 4  # the int32 step counter, padded to one 128-lane row
BATCH = 2 * 256 * 1024 * 4  # x and y, 256 x 1024 float32 each, split over "data"


def run_fit(home: Path, *args: str, env: dict[str, str] | None = None, check: bool = True):
    proc = subprocess.run(
        tpuwizard_cmd("fit", *args),
        capture_output=True,
        text=True,
        env=clean_env(TPUWIZARD_HOME=str(home), **(env or {})),
        timeout=600,
    )
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def fit_json(home: Path, *args: str, **kw) -> dict:
    return json.loads(run_fit(home, "--json", *args, **kw).stdout)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """One state directory (and so one compile cache) for the whole module."""
    return tmp_path_factory.mktemp("progfit-home")


@pytest.fixture(scope="module")
def replicated(home):
    return fit_json(home, "--program", str(MLP), "--slices", SLICES)


@pytest.fixture(scope="module")
def sharded(home):
    return fit_json(
        home, "--program", str(MLP), "--slices", SLICES, "--function", "tpuwizard_plan_sharded"
    )


def by_name(doc: dict) -> dict[str, dict]:
    return {s["name"]: s for s in doc["slices"]}


@pytest.mark.parametrize("name", list(DEVICES))
def test_replicated_arguments_are_the_whole_state_plus_a_share_of_the_batch(replicated, name):
    n = DEVICES[name]
    row = by_name(replicated)[name]
    assert replicated["method"] == "tpu-compile"
    assert row["devices"] == n
    # params + Adam's m and v, all replicated, the counter, and 1/n of the batch.
    assert row["per_device_bytes"]["arguments"] == 3 * PARAMS + SCALAR_ON_TPU + BATCH // n
    assert row["state_bytes_per_device"] == 3 * PARAMS + 4 + BATCH // n
    b = row["per_device_bytes"]
    assert b["peak"] == b["arguments"] + b["outputs"] + b["temporaries"] - b["aliased"] + b["code"]
    assert row["fits"] is True
    assert row["usable_bytes_per_device"] == 16_909_336_064  # a real v5e chip's bytes_limit
    assert row["step_seconds_at_least"] > 0
    assert row["usd_per_1000_steps_at_least"] == pytest.approx(
        1.20 * n * row["step_seconds_at_least"] * 1000 / 3600, rel=1e-3
    )
    # The old names, kept for one release, say the same.
    assert row["step_seconds"] == row["step_seconds_at_least"]
    assert row["usd_per_1000_steps"] == row["usd_per_1000_steps_at_least"]


@pytest.mark.parametrize("name", list(DEVICES))
def test_data_sharded_arguments_divide_the_state_by_the_device_count(sharded, name):
    n = DEVICES[name]
    row = by_name(sharded)[name]
    assert row["per_device_bytes"]["arguments"] == 3 * PARAMS // n + SCALAR_ON_TPU + BATCH // n


def test_the_copied_state_is_named_with_what_donation_saves(replicated):
    row = by_name(replicated)["v5litepod-4"]
    # The step returns new params, m, v and counter: all of it could be updated in place.
    assert row["donation_saving"] == 3 * PARAMS + 4
    assert row["per_device_bytes"]["aliased"] == 0
    assert "donate_argnums" in replicated["advice"][0]
    assert "96.06 MiB" in replicated["advice"][0]  # (3 x 33,574,912 + 4) / 2**20


def test_sharding_the_replicated_state_over_data_is_counted(replicated):
    variant = by_name(replicated)["v5litepod-8"]["sharded_over_data"]
    assert variant["state_bytes"] == 3 * PARAMS // 8 + 4 + BATCH // 8
    assert "arguments" not in variant  # it fits with room to spare: not compiled twice
    assert "sharded_over_data" not in by_name(replicated)["v5litepod-1"]  # nothing to split


def test_the_second_plan_comes_from_the_cache(home, replicated):
    again = fit_json(home, "--program", str(MLP), "--slices", SLICES)
    assert [s["cached"] for s in again["slices"]] == [True] * 3
    assert [s["per_device_bytes"] for s in again["slices"]] == [
        s["per_device_bytes"] for s in replicated["slices"]
    ]


BIG = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

def step(w, x):
    return w * 0.999, (x @ w[:1024, :1024]).sum()

def tpuwizard_plan(mesh):
    # 12 GiB of float32, replicated on every device; a batch of 8 rows per device.
    w = jax.ShapeDtypeStruct((49152, 65536), jnp.float32, sharding=NamedSharding(mesh, P()))
    x = jax.ShapeDtypeStruct(
        (8 * mesh.size, 1024), jnp.float32, sharding=NamedSharding(mesh, P("data"))
    )
    return step, (w, x)
"""


def test_fits_v6e_4_but_not_v5litepod_8_and_donation_would_rescue_it(home, tmp_path):
    program = tmp_path / "big.py"
    program.write_text(BIG)
    doc = fit_json(home, "--program", str(program), "--slices", "v6e-4,v5litepod-8")
    rows = by_name(doc)
    state = 49152 * 65536 * 4
    assert state == 12 * 2**30
    v6e = rows["v6e-4"]
    assert v6e["fits"] is True
    assert v6e["per_device_bytes"]["arguments"] == state + 8 * 1024 * 4
    assert v6e["usable_bytes_per_device"] == int(31.25 * 2**30)  # the catalog's sourced figure
    v5e = rows["v5litepod-8"]
    # The compile ran out of HBM: not an error exit; the bytes it needed: w and its copy.
    assert v5e["fits"] is False
    assert v5e["per_device_bytes"]["peak"] == 2 * state
    assert "RESOURCE_EXHAUSTED" in v5e["note"]
    # The compiler's own limit beside the catalog's usable figure (a real chip's bytes_limit).
    assert v5e["compiler_limit_bytes"] == int(15.75 * 2**30)
    assert v5e["usable_bytes_per_device"] == 16_909_336_064
    assert v5e["donation_saving"] == state
    # It does not fit, so it was compiled with w sharded over "data" too: 1/8 of w each.
    assert v5e["sharded_over_data"]["arguments"] == state // 8 + 8 * 1024 * 4
    assert any("makes it fit on v5litepod-8" in a for a in doc["advice"])
    assert any("donate_argnums" in a and "fit on v5litepod-8" in a for a in doc["advice"])


def test_the_table_names_the_slices_and_says_step_times_are_lower_bounds(home):
    proc = run_fit(home, "--program", str(REPO / "examples" / "placement.py"), "--slices", "v6e-1")
    assert "v6e-1" in proc.stdout and "yes" in proc.stdout  # the table: the result, on stdout
    header = next(line for line in proc.stdout.splitlines() if line.startswith("slice"))
    assert ">=step" in header and ">=$/1k" in header  # the step and $/1k columns: at least
    words = " ".join(proc.stdout.split())
    assert ">=step and >=$/1k: at least these" in words and "lower bound" in words
    assert "Compiling" in proc.stderr and "Compiling" not in proc.stdout  # progress: stderr


def test_the_transformer_example_donates_its_state(home):
    doc = fit_json(
        home, "--program", str(REPO / "examples" / "transformer.py"), "--slices", "v5litepod-4"
    )
    row = doc["slices"][0]
    assert row["fits"] is True
    assert row["per_device_bytes"]["aliased"] > 0
    assert not doc["advice"]


def test_the_cache_key_is_the_lowered_program_not_the_file(home, tmp_path):
    program = tmp_path / "env_width.py"
    program.write_text(
        textwrap.dedent(
            """
            import os, jax, jax.numpy as jnp
            def tpuwizard_plan(mesh):
                width = int(os.environ["WIDTH"])
                return (lambda w: w * 2), (jax.ShapeDtypeStruct((8, width), jnp.float32),)
            """
        )
    )
    args = ("--program", str(program), "--slices", "v5litepod-1")
    first = fit_json(home, *args, env={"WIDTH": "128"})["slices"][0]
    same = fit_json(home, *args, env={"WIDTH": "128"})["slices"][0]
    wider = fit_json(home, *args, env={"WIDTH": "256"})["slices"][0]
    assert (first["cached"], same["cached"], wider["cached"]) == (False, True, False)
    assert (first["per_device_bytes"]["arguments"], wider["per_device_bytes"]["arguments"]) == (
        8 * 128 * 4,
        8 * 256 * 4,
    )


def test_shapes_only_counts_the_exact_state_without_compiling(home):
    doc = fit_json(home, "--program", str(MLP), "--slices", SLICES, "--method", "shapes-only")
    assert doc["method"] == "shapes-only"
    for name, n in DEVICES.items():
        row = by_name(doc)[name]
        assert row["per_device_bytes"]["arguments"] == 3 * PARAMS + 4 + BATCH // n
        assert row["per_device_bytes"]["temporaries"] is None
        assert "no libtpu" in row["note"]


def test_compiles_with_no_network_at_all(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -rn is not permitted here: {probe.stderr.decode().strip()}")
    cmd = [
        "unshare",
        "-rn",
        *tpuwizard_cmd(
            "fit",
            "--json",
            "--program",
            str(REPO / "examples" / "placement.py"),
            "--slices",
            "v5litepod-4",
        ),
    ]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env=clean_env(TPUWIZARD_HOME=str(tmp_path)),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = json.loads(proc.stdout)["slices"][0]
    assert row["fits"] is True and row["cached"] is False
    # w (3,), x (8, 3), y (8,), float32, all replicated: the state is 140 bytes.
    assert row["state_bytes_per_device"] == (3 + 24 + 8) * 4


def test_the_command_itself_loads_no_jax(home):
    code = (
        "import sys, json\nfrom tpuwizard.cli import main\ntry:\n"
        f"    main(['fit', '--json', '--program', {str(REPO / 'examples' / 'placement.py')!r}, "
        "'--slices', 'v5litepod-1'])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'libtpu'))),"
        " file=sys.stderr)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=clean_env(TPUWIZARD_HOME=str(home)),
    )
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []
