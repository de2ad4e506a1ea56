"""Every CLI table stays readable at 80 columns and when piped: wrapped or stacked, never cut."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from tpuwizard.cli import main
from tpuwizard.core.plan import fit


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
    from tpuwizard.render import render_status

    monkeypatch.setenv("COLUMNS", "80")
    found = [
        SimpleNamespace(
            resource=SimpleNamespace(
                name=f"tpuwizard-20261129-154550-c2a{i}",
                kind="queued",
                zone="asia-northeast1-b",
                accelerator="v5litepod-16",
            ),
            state=state,
            age_s=3725.0 + i,
            cost_usd=1234.5 if billing else 0.0,
            billing=billing,
        )
        for i, (state, billing) in enumerate([("WAITING_FOR_RESOURCES", False), ("ACTIVE", True)])
    ]
    render_status(found, "estimate", practice=True)
    out = capsys.readouterr().out
    assert "Delete with: tpuwizard teardown --sandbox NAME (or --all)" in out  # as typed there
    assert_readable(
        out,
        [
            "tpuwizard-20261129-154550-c2a0",
            "tpuwizard-20261129-154550-c2a1",
            "WAITING_FOR_RESOURCES",
            "not billing yet",
            "v5litepod-16",
            "asia-northeast1-b",
            "$1,234.50",
            "1h02m",
        ],
    )
