"""The preflight against the sandbox, for each refusal it models (docs/preflight-sandbox.md):
the core's checks in-process over real HTTP, then the CLI: `preflight` and its exit code, the
`auto` backend fed by Compute Engine's quota, and a FAIL stopping `launch` and `up` before any
create (exit 3, nothing created)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import env, sandbox_is_empty
from tpuwizard.core.cloud.backends import Backend, Transport
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.model import Verdict, passed
from tpuwizard.core.preflight.rest import Endpoints, Rest
from tpuwizard.core.preflight.run import run_preflight
from tpuwizard.core.routes import Route

PROJECT = "practice-project"


def checks_against(sandbox, faults: str | None, **ask_fields: Any):
    server, cloud = sandbox(faults)
    fields: dict[str, Any] = {"accelerator": "v5litepod-4", "zone": "us-central1-a", "route": "vm"}
    fields.update(ask_fields)
    fields.setdefault("backend", "tpu-api")
    # The table's words parsed as the CLI parses them: the ask holds members.
    fields["route"], fields["backend"] = Route(fields["route"]), Backend(fields["backend"])
    if "transport" in fields:
        fields["transport"] = Transport(fields["transport"])
    ask = PreflightAsk(PROJECT, **fields)
    if ask.backend == Backend.COMPUTE:
        from tpuwizard.core.cloud.compute.client import ComputeCloud

        lister = ComputeCloud(PROJECT, endpoint=server.endpoint, retry_deadline=5)
    else:
        lister = cloud
    reach = Reach(
        Rest(cloud.credentials),
        Endpoints.all_at(server.endpoint),
        lambda: lister.accelerator_types(ask.zone or ""),
        practice=True,
    )
    return {c.name: c for c in run_preflight(ask, reach, passed("Credentials", "practice"))}


def test_a_project_with_nothing_in_the_way_passes_every_check(sandbox):
    checks = checks_against(sandbox, None)
    assert {n: c.verdict for n, c in checks.items() if c.verdict is not Verdict.PASS} == {}


def test_flex_start_in_practice_reads_the_preemptible_quota_the_sandbox_defines(sandbox):
    """Issue 55.7: practice's Flex preflight said UNKNOWN Quota (an id the sandbox lacked)."""
    checks = checks_against(sandbox, None, route="flex", zone="us-west4-a")
    assert {n: c.verdict for n, c in checks.items() if c.verdict is not Verdict.PASS} == {}
    assert "TPUV5sPreemptibleLitepodPerProjectPerRegionForTPUAPI" in checks["Quota"].detail


@pytest.mark.parametrize(
    ("faults", "ask_fields", "name", "words", "fix"),
    [
        ("api_disabled=50", {}, "APIs enabled", "tpu.googleapis.com", "gcloud services enable"),
        ("no_billing=1", {}, "Billing", "no billing account", "gcloud billing projects link"),
        (
            "quota_limit=TPUV5sLitepodServingPerProjectPerRegionForTPUAPI:2",
            {},
            "Quota",
            "allows 2 in us-central1",
            "--quota-id=TPUV5sLitepodServingPerProjectPerRegionForTPUAPI",
        ),
        (
            "quota_limit=PREEMPTIBLE-TPU-V6E-per-project-region@us-east5:0",
            {"accelerator": "v6e-4", "zone": "us-east5-a", "route": "spot", "backend": "compute"},
            "Quota",
            # No source gives v6e's usage (not in compute.v1.json's metrics): never said as 0.
            "PREEMPTIBLE-TPU-V6E-per-project-region allows 0 in us-east5 (usage not known)",
            "gcloud quotas preferences create --service=compute.googleapis.com",
        ),
        ("oslogin=2fa", {}, "OS Login", "enable-oslogin-2fa", "--transport gcloud"),
        ("oslogin=2fa", {"transport": "gcloud"}, "OS Login", "use --transport gcloud", None),
        (
            "oslogin=1;oslogin_denied=1",
            {"transport": "gcloud"},
            "OS Login",
            "compute.instances.osLogin",
            "roles/compute.osLogin",
        ),
        ("no_external_ip=1", {}, "External IPs", "forbids", "--internal-ips"),
        (
            None,
            {
                "accelerator": "v6e-4",
                "zone": "us-east5-a",
                "backend": "compute",
                "internal_ips": True,
            },
            "Internal IPs",
            "no Cloud NAT in us-east5",
            "gcloud compute routers nats create",
        ),
        (
            "cloud_nat=1;iap_denied=1",
            {"internal_ips": True, "transport": "gcloud"},
            "Internal IPs",
            "IAP-secured Tunnel User",
            "--role=roles/iap.tunnelResourceAccessor",
        ),
    ],
)
def test_each_modelled_refusal_fails_with_its_fix(sandbox, faults, ask_fields, name, words, fix):
    check = checks_against(sandbox, faults, **ask_fields)[name]
    assert check.verdict is Verdict.FAIL, check.line()
    assert words in check.detail
    if fix:
        assert check.fix is not None and fix in check.fix


def test_what_lets_a_refused_check_pass(sandbox):
    """The same checks pass once the fix is in: the route's other bucket, gcloud's transport,
    Cloud NAT in the region."""
    limited = "quota_limit=TPUV5sLitepodServingPerProjectPerRegionForTPUAPI:2"
    assert (
        checks_against(sandbox, limited, accelerator="v5litepod-1")["Quota"].verdict is Verdict.PASS
    )
    on = checks_against(sandbox, "oslogin=1", transport="gcloud")["OS Login"]
    assert on.verdict is Verdict.PASS
    for faults in ("oslogin=1", "oslogin=policy"):  # tpuwizard's SSH: it imports its key
        imports = checks_against(sandbox, faults)["OS Login"]
        assert imports.verdict is Verdict.PASS and "tpuwizard imports its key" in imports.detail
    nat = checks_against(
        sandbox,
        "cloud_nat=us-east5",
        accelerator="v6e-4",
        zone="us-east5-a",
        backend="compute",
        internal_ips=True,
    )
    assert nat["Internal IPs"].verdict is Verdict.PASS


def test_a_check_whose_own_api_is_off_is_unknown_with_the_enable_command(sandbox):
    checks = checks_against(
        sandbox, "disabled_services=cloudquotas.googleapis.com,orgpolicy.googleapis.com"
    )
    for name, service in (("Quota", "cloudquotas"), ("External IPs", "orgpolicy")):
        assert checks[name].verdict is Verdict.UNKNOWN, checks[name].line()
        assert (
            checks[name].fix
            == f"gcloud services enable {service}.googleapis.com --project {PROJECT}"
        )


def test_an_unreadable_policy_is_unknown_never_a_fail(sandbox):
    checks = checks_against(sandbox, "orgpolicy_unreadable=1")
    assert checks["External IPs"].verdict is Verdict.UNKNOWN
    assert checks["OS Login"].verdict is Verdict.UNKNOWN


# -- the CLI ---------------------------------------------------------------------------------
def run(cwd: Path, *args: str, faults: str = "", timeout: float = 120):
    return subprocess.run(
        tpuwizard_cmd(*args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(TPUWIZARD_SANDBOX_FAULTS=faults),
    )


def test_preflight_json_and_exit_3_on_a_fail(tmp_path):
    ok = run(
        tmp_path,
        "preflight",
        "--sandbox",
        "--json",
        "--accelerator",
        "v5litepod-4",
        "--zone",
        "us-central1-a",
    )
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["ok"] is True and doc["backend"] == "tpu-api"
    failing = run(
        tmp_path,
        "preflight",
        "--sandbox",
        "--accelerator",
        "v5litepod-4",
        "--zone",
        "us-central1-a",
        faults="no_billing=1",
    )
    assert failing.returncode == 3
    assert any(line.startswith("FAIL    Billing:") for line in failing.stdout.splitlines())


def test_auto_takes_compute_engine_when_its_quota_covers_the_slice_else_the_tpu_api(tmp_path):
    args = (
        "preflight",
        "--sandbox",
        "--json",
        "--accelerator",
        "v6e-4",
        "--zone",
        "us-east5-a",
        "--route",
        "spot",
    )
    covered = json.loads(run(tmp_path, *args).stdout)
    assert covered["backend"] == "compute"
    assert "covers 4 chips" in covered["backend_reason"]
    short = json.loads(
        run(tmp_path, *args, faults="quota_limit=PREEMPTIBLE-TPU-V6E-per-project-region:2").stdout
    )
    assert short["backend"] == "tpu-api"
    assert "has room for 2 chips" in short["backend_reason"]


def _nothing_created(home: Path) -> bool:
    ledger = home / "sandbox" / "ledger.jsonl"
    state = home / "sandbox" / "state.json"
    instances = json.loads(state.read_text()).get("instances") if state.exists() else None
    return (
        sandbox_is_empty(home)
        and not instances
        and (not ledger.exists() or not ledger.read_text().strip())
    )


def test_a_fail_stops_launch_before_any_create(tmp_path, home):
    # up's answers are refused by the same stage: test_pipeline_stages.py's table, "up".
    proc = run(
        tmp_path,
        "launch",
        "--sandbox",
        "--accelerator",
        "v5litepod-1",
        "--zone",
        "us-central1-a",
        faults="no_billing=1",  # OS Login on is no FAIL now: tpuwizard imports its key
    )
    assert proc.returncode == 3, proc.stderr
    assert "Preflight: FAIL    Billing" in proc.stdout + proc.stderr
    assert "Nothing was created" in proc.stderr
    assert _nothing_created(home)


def test_credentials_without_a_quota_project_are_unknown_with_set_quota_project(sandbox):
    checks = checks_against(sandbox, "no_quota_project=1")
    for name in ("APIs enabled", "Billing", "Quota", "External IPs"):
        assert checks[name].verdict is Verdict.UNKNOWN, checks[name].line()
        assert checks[name].fix == f"gcloud auth application-default set-quota-project {PROJECT}"
