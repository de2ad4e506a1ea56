"""``launch --via resize-request`` (the course's Route 2B) where it does not fit: another backend
or route, a multi-host slice, a kept TPU, a deadline under a resize request's 10 minutes, a
fan-out; each is exit 2 before any call, saying what to type. The course's v5e gets the course's
words and v6e-4 offered. ``launch --help`` states the values and the default."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.unit.test_cli_bad_input import _no_sandbox, here, refused  # noqa: F401 (fixtures)
from tpuwizard.cli import main

V6E = ["launch", "--sandbox", "--accelerator", "v6e-4", "--zone", "us-east5-b"]
ROUTE_2B = ["--via", "resize-request"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--backend", "tpu-api", "--route", "flex"], "needs --backend compute (not tpu-api)"),
        (["--route", "flex"], "needs --backend compute (not auto)"),
        (["--backend", "compute", "--route", "spot"], "use --route flex"),
        (["--backend", "compute"], "not the vm route"),
        (["--backend", "compute", "--route", "flex", "--keep"], "Leave out --keep"),
        (["--backend", "compute", "--route", "flex", "--max-run", "5"], "--max-run 10 or more"),
    ],
)
def test_via_resize_request_where_it_does_not_fit_is_exit_2_before_any_call(
    home,
    here,  # noqa: F811
    args,
    words,
):
    assert words in refused(home, *V6E, *ROUTE_2B, *args)


def test_a_fan_out_by_resize_request_is_refused(home, here):  # noqa: F811
    args = ["launch", "--sandbox", "--accelerator", "v6e-4", "--zones", "us-east5-a,us-east5-b"]
    args += ["--fan-out", "--backend", "compute", "--route", "flex"]
    assert "leave out --fan-out" in refused(home, *args, *ROUTE_2B)


def test_a_multi_host_slice_by_resize_request_is_refused_naming_bulk_mode(home, here):  # noqa: F811
    args = ["launch", "--sandbox", "--accelerator", "v6e-16", "--zone", "us-east5-b"]
    stderr = refused(home, *args, *ROUTE_2B, "--backend", "compute", "--route", "flex")
    assert "multi-host slice" in stderr and "bulk mode" in stderr and "leave --via out" in stderr


def test_the_course_s_v5e_is_said_in_the_course_s_words_and_v6e_4_offered(home, here):  # noqa: F811
    args = ["launch", "--sandbox", "--accelerator", "v5litepod-4", "--zone", "us-west1-c"]
    stderr = refused(home, *args, *ROUTE_2B, "--backend", "compute", "--route", "flex")
    assert "Route 2B" in stderr and "ct5lp-hightpu-4t" in stderr
    assert "does not serve as an instance" in stderr
    assert "--accelerator v6e-4 (ct6e-standard-4t)" in stderr and "--backend tpu-api" in stderr


def test_launch_help_states_via_s_values_and_default():
    text = " ".join(CliRunner().invoke(main, ["launch", "--help"]).output.split())
    assert "--via [auto|resize-request]" in text and "[default: auto]" in text
    assert "Route 2B" in text and "resize request" in text
