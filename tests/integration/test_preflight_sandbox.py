"""What the sandbox answers the preflight, over raw HTTP: Service Usage, Cloud Billing, Cloud
Quotas, OS Login, Org Policy, and Compute Engine's project metadata and routers, by default and
under each fault the preflight is to find. Every answer is checked against Google's discovery
document for its API (Cloud Quotas against its REST reference, below: no discovery document for it
ships with google-api-python-client)."""

from __future__ import annotations

import getpass
from typing import Any

import pytest
import requests

from tests.integration.discovery import document, errors, find_method
from tpuwizard.sandbox import google

PROJECT = "practice-project"
USER = "practice@example.com"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINkKayT+z56Rqueg5gMWke7fQQssStS01JhIKMeNxqJM practice"
V6E_SPOT = "PREEMPTIBLE-TPU-V6E-per-project-region"
FAMILY = "TPUS-PER-TPU-FAMILY-per-project-region"
TPU_V6E_SPOT = "TPUV6EPreemptiblePerProjectPerRegionForTPUAPI"
# Cloud Quotas v1's QuotaInfo, field for field from its REST reference
# (cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos).
QUOTAS_DOC: dict[str, Any] = {
    "schemas": {
        "QuotaInfo": {
            "id": "QuotaInfo",
            "type": "object",
            "properties": {
                **{
                    k: {"type": "string"}
                    for k in [
                        "name",
                        "quotaId",
                        "metric",
                        "service",
                        "refreshInterval",
                        "metricDisplayName",
                        "quotaDisplayName",
                        "metricUnit",
                        "serviceRequestQuotaUri",
                    ]
                },
                **{k: {"type": "boolean"} for k in ("isPrecise", "isFixed", "isConcurrent")},
                "containerType": {
                    "type": "string",
                    "enum": ["CONTAINER_TYPE_UNSPECIFIED", "PROJECT", "FOLDER", "ORGANIZATION"],
                },
                "dimensions": {"type": "array", "items": {"type": "string"}},
                "quotaIncreaseEligibility": {
                    "type": "object",
                    "properties": {
                        "isEligible": {"type": "boolean"},
                        "ineligibilityReason": {"type": "string"},
                    },
                },
                "dimensionsInfos": {"type": "array", "items": {"$ref": "DimensionsInfo"}},
            },
        },
        "DimensionsInfo": {
            "id": "DimensionsInfo",
            "type": "object",
            "properties": {
                "dimensions": {"type": "object", "additionalProperties": {"type": "string"}},
                "details": {
                    "type": "object",
                    "properties": {"value": {"type": "string", "format": "int64"}},
                },
                "applicableLocations": {"type": "array", "items": {"type": "string"}},
            },
        },
    }
}
DOCS = {
    "/v1/projects/practice-project/services": ("serviceusage", "v1"),
    "/v1/projects/practice-project/billingInfo": ("cloudbilling", "v1"),
    "/v1/users/": ("oslogin", "v1"),
    "/v2/projects/": ("orgpolicy", "v2"),
    "/compute/v1/": ("compute", "v1"),
}


class Preflight:
    """The sandbox's preflight APIs over plain HTTP; every 200 is checked for its schema."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def call(self, method: str, path: str, **kw: Any) -> requests.Response:
        return requests.request(method, self.endpoint + path, timeout=30, **kw)

    def ok(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        answer = self.call(method, path, **kw)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert conformance(method, path, body) == []
        return body


def conformance(method: str, path: str, body: dict[str, Any]) -> list[str]:
    if "/quotaInfos" in path:
        if path.endswith("/quotaInfos"):
            return [e for info in body["quotaInfos"] for e in quota_errors(info)]
        return quota_errors(body)
    api, version = next(doc for prefix, doc in DOCS.items() if path.startswith(prefix))
    doc = document(version, api)
    found = find_method(doc, method, path)
    assert found is not None, f"{method} {path} is no method of {api}.{version}"
    return errors(doc, {"$ref": found.response}, body) if found.response else []


def quota_errors(info: dict[str, Any]) -> list[str]:
    return errors(QUOTAS_DOC, {"$ref": "QuotaInfo"}, info)


@pytest.fixture
def preflight(sandbox):
    def start(faults: str | None = None) -> Preflight:
        server, _ = sandbox(faults=faults)
        return Preflight(server.endpoint)

    return start


def su(service: str) -> str:
    return f"/v1/projects/{PROJECT}/services/{service}"


def quota(service: str, quota_id: str) -> str:
    return f"/v1/projects/{PROJECT}/locations/global/services/{service}/quotaInfos/{quota_id}"


def value_in(info: dict[str, Any], region: str, family: str | None = None) -> int:
    wanted = {"region": region} | ({"tpu_family": family} if family else {})
    found = [d for d in info["dimensionsInfos"] if d["dimensions"] == wanted]
    assert len(found) == 1, info["dimensionsInfos"]
    return int(found[0]["details"]["value"])


def test_services_are_enabled_by_default_one_by_one_and_in_a_batch(preflight):
    api = preflight()
    tpu = api.ok("GET", su("tpu.googleapis.com"))
    number = google.project_number(PROJECT)
    assert tpu["name"] == f"projects/{number}/services/tpu.googleapis.com"
    assert (tpu["state"], tpu["config"]["name"]) == ("ENABLED", "tpu.googleapis.com")
    names = [
        f"projects/{PROJECT}/services/{s}" for s in ("tpu.googleapis.com", "compute.googleapis.com")
    ]
    batch = api.ok("GET", su("")[:-1] + ":batchGet", params={"names": names})
    assert [s["config"]["name"] for s in batch["services"]] == [
        "tpu.googleapis.com",
        "compute.googleapis.com",
    ]
    assert {s["state"] for s in batch["services"]} == {"ENABLED"}


def test_while_api_disabled_has_requests_left_service_usage_says_the_tpu_api_is_off(preflight):
    api = preflight("api_disabled=1")
    assert api.ok("GET", su("tpu.googleapis.com"))["state"] == "DISABLED"
    assert api.ok("GET", su("compute.googleapis.com"))["state"] == "DISABLED"
    assert api.ok("GET", su("billing.googleapis.com"))["state"] == "ENABLED"
    # Reading it used up nothing: the TPU API's next request is still refused, then no more.
    path = f"/v2/projects/{PROJECT}/locations/us-central1-a/nodes"
    assert api.call("GET", path).status_code == 403
    assert api.call("GET", path).status_code == 200
    assert api.ok("GET", su("tpu.googleapis.com"))["state"] == "ENABLED"


def test_a_disabled_preflight_api_says_so_in_service_usage_and_refuses_its_own_calls(preflight):
    api = preflight("disabled_services=cloudquotas.googleapis.com")
    assert api.ok("GET", su("cloudquotas.googleapis.com"))["state"] == "DISABLED"
    answer = api.call("GET", quota("compute.googleapis.com", V6E_SPOT))
    assert answer.status_code == 403
    error = answer.json()["error"]
    assert error["status"] == "PERMISSION_DENIED"
    assert error["details"][0]["reason"] == "SERVICE_DISABLED"
    assert error["details"][0]["metadata"]["service"] == "cloudquotas.googleapis.com"


def test_billing_is_linked_unless_no_billing(preflight):
    path = f"/v1/projects/{PROJECT}/billingInfo"
    linked = preflight().ok("GET", path)
    assert linked["billingEnabled"] is True and linked["billingAccountName"].startswith(
        "billingAccounts/"
    )
    assert linked["name"] == f"projects/{PROJECT}/billingInfo"
    unlinked = preflight("no_billing=1").ok("GET", path)
    assert unlinked["billingEnabled"] is False and unlinked["billingAccountName"] == ""


def test_quotas_are_generous_by_default_on_both_services(preflight):
    api = preflight()
    for service, quota_id in (
        ("compute.googleapis.com", V6E_SPOT),
        ("tpu.googleapis.com", TPU_V6E_SPOT),
    ):
        info = api.ok("GET", quota(service, quota_id))
        assert (info["quotaId"], info["service"]) == (quota_id, service)
        assert info["dimensions"] == ["region"]
        assert value_in(info, "us-east5") >= 1000
    family = api.ok("GET", quota("compute.googleapis.com", FAMILY))
    assert family["dimensions"] == ["region", "tpu_family"]
    assert value_in(family, "us-east5", "CT6E") >= 1000
    listed = api.ok(
        "GET", f"/v1/projects/{PROJECT}/locations/global/services/compute.googleapis.com/quotaInfos"
    )
    assert {V6E_SPOT, FAMILY} <= {i["quotaId"] for i in listed["quotaInfos"]}
    assert api.call("GET", quota("compute.googleapis.com", "NO-SUCH-quota")).status_code == 404


def test_quota_limit_sets_the_limit_everywhere_or_in_one_region(preflight):
    api = preflight(f"quota_limit={V6E_SPOT}:0;quota_limit={TPU_V6E_SPOT}@us-east5:8")
    compute = api.ok("GET", quota("compute.googleapis.com", V6E_SPOT))
    assert {value_in(compute, r) for r in ("us-east5", "us-central1")} == {0}
    tpu = api.ok("GET", quota("tpu.googleapis.com", TPU_V6E_SPOT))
    assert value_in(tpu, "us-east5") == 8 and value_in(tpu, "us-central1") >= 1000


def test_project_metadata_says_enable_oslogin_only_under_the_fault(preflight):
    path = f"/compute/v1/projects/{PROJECT}"
    assert preflight().ok("GET", path)["commonInstanceMetadata"]["items"] == []
    on = preflight("oslogin=1").ok("GET", path)["commonInstanceMetadata"]["items"]
    assert on == [{"key": "enable-oslogin", "value": "TRUE"}]
    two = preflight("oslogin=2fa").ok("GET", path)["commonInstanceMetadata"]["items"]
    assert {"key": "enable-oslogin-2fa", "value": "TRUE"} in two


def test_a_login_profile_names_the_current_user_and_holds_imported_keys(preflight):
    api = preflight("oslogin=1")
    profile = api.ok("GET", f"/v1/users/{USER}/loginProfile", params={"projectId": PROJECT})
    account = profile["posixAccounts"][0]
    assert account["username"] == getpass.getuser() and account["primary"] is True
    assert "sshPublicKeys" not in profile
    imported = api.ok(
        "POST",
        f"/v1/users/{USER}:importSshPublicKey",
        params={"projectId": PROJECT},
        json={"key": KEY, "expirationTimeUsec": "4102444800000000"},
    )
    keys = imported["loginProfile"]["sshPublicKeys"]
    (fingerprint,) = keys
    assert keys[fingerprint]["key"] == KEY
    assert keys[fingerprint]["expirationTimeUsec"] == "4102444800000000"
    assert api.ok("DELETE", f"/v1/users/{USER}/sshPublicKeys/{fingerprint}") == {}
    assert "sshPublicKeys" not in api.ok("GET", f"/v1/users/{USER}/loginProfile")
    assert api.call("DELETE", f"/v1/users/{USER}/sshPublicKeys/{fingerprint}").status_code == 404
    bad = api.call("POST", f"/v1/users/{USER}:importSshPublicKey", json={"key": "not a key"})
    assert bad.status_code == 400


def test_the_caller_may_log_in_and_tunnel_unless_oslogin_or_iap_denied(preflight):
    path = f"/v1/projects/{PROJECT}:testIamPermissions"
    iap = "iap.tunnelInstances.accessViaIAP"
    wanted = {"permissions": ["compute.instances.osLogin", iap, "tpu.nodes.create"]}
    held = requests.post(preflight().endpoint + path, json=wanted, timeout=30).json()
    assert held["permissions"] == wanted["permissions"]
    denied = preflight("oslogin_denied=1;iap_denied=1")
    held = requests.post(denied.endpoint + path, json=wanted, timeout=30).json()
    assert held["permissions"] == ["tpu.nodes.create"]
    # None held: Google answers an empty object, not an empty list.
    none = {"permissions": [iap]}
    assert requests.post(denied.endpoint + path, json=none, timeout=30).json() == {}


@pytest.mark.parametrize(
    ("faults", "external_ip", "oslogin"),
    [
        (None, {"allowAll": True}, {"enforce": False}),
        ("no_external_ip=1;oslogin=policy", {"denyAll": True}, {"enforce": True}),
    ],
)
def test_org_policies_say_what_the_faults_set(preflight, faults, external_ip, oslogin):
    api = preflight(faults)
    for constraint, rule in (
        ("compute.vmExternalIpAccess", external_ip),
        ("compute.requireOsLogin", oslogin),
    ):
        policy = api.ok("GET", f"/v2/projects/{PROJECT}/policies/{constraint}:getEffectivePolicy")
        assert policy["spec"]["rules"] == [rule]
        assert policy["name"].endswith(f"/policies/{constraint}")


def test_an_unreadable_org_policy_answers_403(preflight):
    path = f"/v2/projects/{PROJECT}/policies/compute.vmExternalIpAccess:getEffectivePolicy"
    answer = preflight("orgpolicy_unreadable=1").call("GET", path)
    assert answer.status_code == 403
    assert answer.json()["error"]["status"] == "PERMISSION_DENIED"


def test_no_cloud_nat_by_default_and_a_nat_router_where_the_fault_puts_one(preflight):
    path = f"/compute/v1/projects/{PROJECT}/regions/us-east5/routers"
    assert preflight().ok("GET", path).get("items") == []
    api = preflight("cloud_nat=us-east5")
    (router,) = api.ok("GET", path)["items"]
    assert router["nats"][0]["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    assert (
        api.ok("GET", f"/compute/v1/projects/{PROJECT}/regions/us-central1/routers")["items"] == []
    )


def test_an_api_that_needs_a_quota_project_refuses_credentials_without_one(preflight):
    api = preflight("no_quota_project=cloudquotas.googleapis.com")
    path = quota("compute.googleapis.com", V6E_SPOT)
    refused = api.call("GET", path)
    assert refused.status_code == 403
    error = refused.json()["error"]
    assert "API requires a quota project, which is not set by default" in error["message"]
    assert error["details"][0]["metadata"]["service"] == "cloudquotas.googleapis.com"
    # With a quota project (google-auth sends it as x-goog-user-project) it answers.
    assert api.ok("GET", path, headers={"x-goog-user-project": PROJECT})["quotaId"] == V6E_SPOT
    assert api.ok("GET", f"/v1/projects/{PROJECT}/billingInfo")["billingEnabled"] is True
    every = preflight("no_quota_project=1")
    assert every.call("GET", f"/v1/projects/{PROJECT}/billingInfo").status_code == 403
