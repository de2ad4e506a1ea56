"""Every CLI table stays readable at 80 columns and when piped: wrapped or stacked, never cut."""

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from tpuwizard.cli import main
from tpuwizard.core.plan import catalog, fit


def assert_readable(text: str, words: list[str], width: int = 80) -> None:
    assert "…" not in text, text
    assert all(len(line) <= width for line in text.splitlines()), text
    missing = [w for w in words if w not in text]
    assert not missing, f"cut or missing: {missing}\n{text}"


SLICES = [f.name for f in fit.plan(48, fit.select_slices())]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["fit", "48"], [*SLICES, "$/h", "19.20"]),
        (["fit", "1e30GiB"], [*SLICES, "-1e+30"]),
        (["zones", "--offline"], ["asia-northeast1-b (unconfirmed)", "v6e-256", "us-central1-a"]),
        (["zones", "--offline", "--accelerator", "v5litepod-4"], ["v2-alpha-tpuv5-lite"]),
        (
            ["zones", "--offline", "--accelerator", "v6e-4"],
            ["backends", "us-east5-a", "v2-alpha-tpuv6e  tpu-api, compute"],
        ),
        (
            ["zones", "--offline", "--accelerator", "tpu7x-8"],
            # No figure for tpu7x: the cell says so, and the line under the table says why.
            ["us-central1-c", "compute", "no price *", "* no vm price for tpu7x in the catalog."],
        ),
        (
            ["zones", "--offline", "--accelerator", "v4-8"],
            ["$12.88 *", "* list price, may differ in this region."],
        ),
    ],
)
def test_tables_at_80_columns(args, words, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert_readable(result.stdout, words)


def test_tables_piped_without_a_terminal():
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    for args, words in [(["fit", "48"], SLICES), (["zones", "--offline"], ["us-central1-a"])]:
        done = subprocess.run(
            [sys.executable, "-m", "tpuwizard", *args], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        assert_readable(done.stdout, words)


def test_a_narrow_terminal_stacks_rows_instead_of_cutting_them(monkeypatch):
    monkeypatch.setenv("COLUMNS", "50")
    result = CliRunner().invoke(main, ["fit", "48"])
    assert_readable(result.stdout, [*SLICES, "$/h: 4.80"], width=50)


def test_status_at_80_columns_keeps_names_states_and_money(monkeypatch, capsys):
    from tpuwizard.words.render import render_status

    monkeypatch.setenv("COLUMNS", "80")
    rows = [
        ("WAITING_FOR_RESOURCES", False, "tpu-api", "queued"),
        ("ACTIVE", True, "tpu-api", "queued"),
        ("STOPPED", True, "compute", "node"),  # Google stopped it: its disk bills
    ]
    found = [
        SimpleNamespace(
            resource=SimpleNamespace(
                name=f"tpuwizard-20261129-154550-c2a{i}",
                kind=kind,
                zone="asia-northeast1-b",
                accelerator="v5litepod-16",
                backend=backend,
            ),
            state=state,
            age_s=3725.0 + i,
            cost_usd=1234.5 if billing else 0.0,
            cost_at_most_usd=1234.5 if billing else 0.0,
            billing=billing,
            parts=(),
        )
        for i, (state, billing, backend, kind) in enumerate(rows)
    ]
    render_status(found, "estimate", practice=True)
    out = capsys.readouterr().out
    assert "Delete with: tpuwizard teardown --sandbox NAME (or --all)" in out  # as typed there
    assert_readable(
        out,
        [
            "tpuwizard-20261129-154550-c2a0",
            "tpuwizard-20261129-154550-c2a1",
            "tpuwizard-20261129-154550-c2a2",
            "compute",
            "stopped by Google",
            "WAITING_FOR_RESOURCES",
            "not running yet",  # practice: nothing bills
            "v5litepod-16",
            "asia-northeast1-b",
            "$1,234.50",
            "1h02m",
        ],
    )


@pytest.mark.parametrize(
    ("accelerator", "zone", "backends"),
    [
        ("v6e-4", "us-east5-a", ["tpu-api", "compute"]),
        ("v5litepod-4", "us-west1-c", ["tpu-api"]),  # Compute Engine does not serve v5e
        ("v6e-16", "us-east5-a", ["tpu-api", "compute"]),  # multi-host: a MIG on Compute Engine
        ("tpu7x-8", "us-central1-c", ["compute"]),  # the TPU API does not serve TPU7x
    ],
)
def test_zones_json_says_per_zone_which_backends_offer_the_type(accelerator, zone, backends):
    result = CliRunner().invoke(
        main, ["zones", "--offline", "--accelerator", accelerator, "--json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [b["backend"] for b in doc["backends"][zone]] == backends
    assert {b["source"] for b in doc["backends"][zone]} == {"documented"}
    assert set(doc["zones"]) == set(doc["backends"]) and doc["zones"][zone] == [accelerator]
    assert doc["image_family"] == catalog.parse_accelerator(accelerator).generation.image_family


def test_a_live_zone_table_labels_compute_engine_documented(monkeypatch, capsys):
    from tpuwizard.core.cloud.backend_choice import zone_offers
    from tpuwizard.words.render import render_zones

    monkeypatch.setenv("COLUMNS", "80")
    offers = zone_offers(catalog.parse_accelerator("v6e-4"), ["us-east5-a"], "live")
    table = {o.zone: ["v6e-4"] for o in offers}
    render_zones(
        table,
        "live",
        "v6e-4",
        "v2-alpha-tpuv6e",
        "note",
        {},
        frozenset(),
        offers,
        "live",
        slice_=catalog.parse_accelerator("v6e-4"),
    )
    lines = capsys.readouterr().out.splitlines()
    (east5a,) = [line for line in lines if line.startswith("us-east5-a ")]
    assert east5a.split() == [
        "us-east5-a",
        "v2-alpha-tpuv6e",
        "tpu-api,",
        "compute",
        "(documented)",
        "$10.80",  # the zone's on-demand price per hour
    ]
    # A zone only the catalog's Compute Engine offers has no TPU API runtime version.
    (east5b,) = [line for line in lines if line.startswith("us-east5-b ")]
    assert east5b.split() == ["us-east5-b", "compute", "(documented)", "$10.80"]


def _found(kept: bool, name: str = "tpuwizard-20261129-154550-c2a0", parts: tuple = ()):
    return SimpleNamespace(
        resource=SimpleNamespace(
            name=name,
            kind="node",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            backend="compute" if parts else "tpu-api",
        ),
        state="READY",
        age_s=60.0,
        cost_usd=0.1,
        cost_at_most_usd=0.1,
        billing=True,
        parts=parts,
        kept=kept,
    )


def test_status_names_one_command_for_a_kept_node_as_its_kept_line_does(monkeypatch, capsys):
    """A table of kept nodes says `down`, as the Kept line under it does; a table with other
    things says teardown and that down is the same delete for a kept node."""
    from tpuwizard.words.render import render_status

    monkeypatch.setenv("COLUMNS", "200")
    render_status([_found(kept=True)], "estimate", practice=True)
    out = capsys.readouterr().out
    assert "Delete with: tpuwizard down --sandbox NAME (or --all)" in out
    assert "teardown" not in out
    render_status([_found(kept=True), _found(kept=False, name="b")], "estimate")
    out = " ".join(capsys.readouterr().out.split())
    assert "Delete with: tpuwizard teardown NAME (or --all); for a kept node" in out
    assert "`tpuwizard down NAME` is the same delete" in out


def test_status_says_what_a_route_2b_slice_and_its_parts_are(monkeypatch, capsys):
    from tpuwizard.words.render import render_status

    monkeypatch.setenv("COLUMNS", "200")
    parts = ("MIG", "1 VM", "resize request", "template")
    render_status([_found(kept=False, parts=parts)], "estimate")
    out = " ".join(capsys.readouterr().out.split())
    assert "slice (MIG)" in out and " node " not in out
    assert "managed instance group (MIG) of TPU VMs made from an instance template" in out
    assert "resize request is Route 2B's Flex-start ask" in out
    render_status([_found(kept=False)], "estimate")
    assert "managed instance group" not in capsys.readouterr().out  # a TPU API node: no note


@pytest.mark.parametrize("columns", ["200", "80"])
def test_status_says_how_a_kept_node_ends_in_its_row_as_its_kept_line(monkeypatch, capsys, columns):
    """Issue 55.11: status's table had no deadline for a kept node, only the Kept line under it;
    its row says words/kept_end.py's one sentence, the same as that line's."""
    import time

    from tpuwizard.session.kept.lines import KeptInfo
    from tpuwizard.words.kept_end import kept_info_line
    from tpuwizard.words.render import kept_ends, render_status

    monkeypatch.setenv("COLUMNS", columns)
    now = time.time()
    info = KeptInfo(
        "tpuwizard-20261129-154550-c2a0", "us-central1-a", "v5litepod-4", "READY", now, 0.1,
        1.2, now + 3600, 1800.0, None, practice=True,
    )  # fmt: skip
    ends = kept_ends([info])
    sentence = ends[info.name]
    assert sentence.startswith("It deletes itself after 30 minutes without a run, at the latest")
    assert sentence in kept_info_line(info)  # one sentence, said alike in both places
    render_status([_found(kept=True), _found(kept=False, name="b")], "estimate", ends=ends)
    out = " ".join(capsys.readouterr().out.split())
    assert sentence in out and "ends" in out
    render_status([_found(kept=False, name="b")], "estimate", ends=ends)
    assert "ends" not in capsys.readouterr().out.split()  # no kept node listed: no column
