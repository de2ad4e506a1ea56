"""Each preflight check's PASS, FAIL and UNKNOWN against an in-memory REST stand-in (no
network): credentials, APIs, billing, OS Login, external and internal IPs, the zone's offer, and
what a refused read of the check's own API says."""

from google.api_core import exceptions as gx

from tests.unit.fake_rest import QUOTA_PROJECT, FakeRest, P, ask, disabled, error, reach
from tpuwizard.core.cloud.backends import Backend, Transport
from tpuwizard.core.preflight import access, network, offer, oslogin
from tpuwizard.core.preflight.model import Verdict
from tpuwizard.core.preflight.oslogin import OsLoginFacts, judge

SU = f"/v1/projects/{P}/services"
BILLING = f"/v1/projects/{P}/billingInfo"
PROJECT = f"/compute/v1/projects/{P}"
REQUIRE = f"/v2/projects/{P}/policies/compute.requireOsLogin:getEffectivePolicy"
EXTERNAL = f"/v2/projects/{P}/policies/compute.vmExternalIpAccess:getEffectivePolicy"
TEST_IAM = f"/v1/projects/{P}:testIamPermissions"
ROUTERS = f"/compute/v1/projects/{P}/regions/us-east5/routers"
FIREWALLS = f"/compute/v1/projects/{P}/global/firewalls"


# -- credentials -----------------------------------------------------------------------------
def test_credentials_pass_and_say_where_they_come_from():
    check, creds = access.check_credentials(lambda: "creds", "me@example.com", "file adc.json")
    assert check.verdict is Verdict.PASS and creds == "creds" and "adc.json" in check.detail


def test_a_gcloud_account_without_adc_says_exactly_the_login_command():
    def raises():
        raise RuntimeError("Your default credentials were not found")

    check, creds = access.check_credentials(raises, "me@example.com", None)
    assert check.verdict is Verdict.FAIL and creds is None
    assert check.fix == "gcloud auth application-default login"
    assert "me@example.com" in check.detail


# -- APIs ------------------------------------------------------------------------------------
def test_apis_pass_when_enabled_and_fail_with_the_enable_command():
    on = FakeRest({f"{SU}/tpu.googleapis.com": {"state": "ENABLED"}})
    assert access.check_apis(ask(), reach(on)).verdict is Verdict.PASS
    off = FakeRest({f"{SU}/compute.googleapis.com": {"state": "DISABLED"}})
    check = access.check_apis(ask(backend=Backend.COMPUTE), reach(off))
    assert check.verdict is Verdict.FAIL
    assert check.fix == f"gcloud services enable compute.googleapis.com --project {P}"


def test_service_usage_off_itself_is_unknown_with_its_enable_command():
    rest = FakeRest({f"{SU}/tpu.googleapis.com": disabled("serviceusage.googleapis.com")})
    check = access.check_apis(ask(), reach(rest))
    assert check.verdict is Verdict.UNKNOWN
    assert check.fix == f"gcloud services enable serviceusage.googleapis.com --project {P}"


def test_a_missing_quota_project_is_unknown_with_set_quota_project():
    rest = FakeRest({f"{SU}/tpu.googleapis.com": QUOTA_PROJECT})
    check = access.check_apis(ask(), reach(rest))
    assert check.verdict is Verdict.UNKNOWN
    assert check.fix == f"gcloud auth application-default set-quota-project {P}"


def test_without_credentials_every_reading_check_is_unknown_and_asks_nothing():
    for check in (access.check_apis, access.check_billing, oslogin.check_os_login):
        assert check(ask(), reach(None)).verdict is Verdict.UNKNOWN


# -- billing ---------------------------------------------------------------------------------
def test_billing_linked_passes_unlinked_fails_with_the_link_command():
    linked = FakeRest(
        {BILLING: {"billingEnabled": True, "billingAccountName": "billingAccounts/X"}}
    )
    assert access.check_billing(ask(), reach(linked)).verdict is Verdict.PASS
    check = access.check_billing(ask(), reach(FakeRest({BILLING: {"billingEnabled": False}})))
    assert check.verdict is Verdict.FAIL and check.fix is not None
    assert check.fix.startswith(f"gcloud billing projects link {P} --billing-account=")


def test_billing_api_off_is_unknown_with_enable_cloudbilling():
    rest = FakeRest({BILLING: disabled("cloudbilling.googleapis.com")})
    check = access.check_billing(ask(), reach(rest))
    assert check.verdict is Verdict.UNKNOWN
    assert check.fix == f"gcloud services enable cloudbilling.googleapis.com --project {P}"


def test_permission_denied_is_unknown_without_a_made_up_fix():
    rest = FakeRest(
        {BILLING: error(403, "PERMISSION_DENIED", "The caller does not have permission")}
    )
    check = access.check_billing(ask(), reach(rest))
    assert check.verdict is Verdict.UNKNOWN and check.fix is None
    assert "may not read" in check.detail


# -- OS Login --------------------------------------------------------------------------------
def metadata(*items):
    return {"commonInstanceMetadata": {"items": [{"key": k, "value": v} for k, v in items]}}


def os_login_rest(meta=None, policy=None, permissions=("compute.instances.osLogin",)):
    return FakeRest(
        {
            PROJECT: metadata(*(meta or [])),
            REQUIRE: {"spec": {"rules": [{"enforce": bool(policy)}]}},
            TEST_IAM: {"permissions": list(permissions)} if permissions else {},
        }
    )


def test_os_login_off_passes():
    check = oslogin.check_os_login(ask(), reach(os_login_rest()))
    assert check.verdict is Verdict.PASS


def test_os_login_on_by_metadata_or_policy_passes_because_tpuwizard_imports_its_key():
    for rest in (os_login_rest(meta=[("enable-oslogin", "TRUE")]), os_login_rest(policy=True)):
        check = oslogin.check_os_login(ask(), reach(rest))
        assert check.verdict is Verdict.PASS and "tpuwizard imports its key" in check.detail
        assert check.launch_does == oslogin.IMPORT_KEY


def test_os_login_on_where_nothing_logs_in_promises_no_import():
    """Practice without an OpenSSH server reaches its workers through a local shell: the line
    must not say a key is imported (nothing imports one), and the launch is not told to."""
    for rest in (os_login_rest(meta=[("enable-oslogin", "TRUE")]), os_login_rest(policy=True)):
        check = oslogin.check_os_login(ask(ssh_login=False), reach(rest))
        assert check.verdict is Verdict.PASS and check.launch_does is None
        assert "local shell, not SSH, so no key is imported" in check.detail
    # What the project would refuse of a real login is still said: practice rehearses it.
    two_factor = os_login_rest(meta=[("enable-oslogin", "TRUE"), ("enable-oslogin-2fa", "TRUE")])
    assert oslogin.check_os_login(ask(ssh_login=False), reach(two_factor)).verdict is Verdict.FAIL
    off = oslogin.check_os_login(ask(ssh_login=False), reach(os_login_rest()))
    assert off.verdict is Verdict.PASS and off.launch_does is None


def test_os_login_2fa_with_tpuwizards_ssh_fails_toward_gcloud_transport():
    rest = os_login_rest(meta=[("enable-oslogin", "TRUE"), ("enable-oslogin-2fa", "TRUE")])
    check = oslogin.check_os_login(ask(), reach(rest))
    assert check.verdict is Verdict.FAIL and "--transport gcloud" in (check.fix or "")
    assert check.launch_does is None


def test_os_login_off_or_through_gcloud_imports_nothing():
    assert oslogin.check_os_login(ask(), reach(os_login_rest())).launch_does is None
    rest = os_login_rest(meta=[("enable-oslogin", "TRUE")])
    assert oslogin.check_os_login(ask(transport=Transport.GCLOUD), reach(rest)).launch_does is None


def test_os_login_on_with_gcloud_transport_passes():
    rest = os_login_rest(meta=[("enable-oslogin", "true")])
    assert (
        oslogin.check_os_login(ask(transport=Transport.GCLOUD), reach(rest)).verdict is Verdict.PASS
    )


def test_os_login_2fa_fails_saying_use_transport_gcloud():
    rest = os_login_rest(meta=[("enable-oslogin", "TRUE"), ("enable-oslogin-2fa", "TRUE")])
    check = oslogin.check_os_login(ask(transport=Transport.GCLOUD), reach(rest))
    assert check.verdict is Verdict.FAIL and "use --transport gcloud" in check.detail


def test_os_login_on_without_the_permission_fails_with_the_role_grant():
    rest = os_login_rest(meta=[("enable-oslogin", "TRUE")], permissions=())
    check = oslogin.check_os_login(ask(transport=Transport.GCLOUD), reach(rest))
    assert check.verdict is Verdict.FAIL and "roles/compute.osLogin" in (check.fix or "")
    assert ("POST", TEST_IAM, {"permissions": ["compute.instances.osLogin"]}) in rest.asked


def test_os_login_policy_unreadable_is_unknown_with_why():
    rest = os_login_rest()
    rest.answers[REQUIRE] = disabled("orgpolicy.googleapis.com")
    check = oslogin.check_os_login(ask(), reach(rest))
    assert check.verdict is Verdict.UNKNOWN
    assert check.fix == f"gcloud services enable orgpolicy.googleapis.com --project {P}"


def test_os_login_on_by_metadata_is_known_even_when_the_policy_is_not():
    facts = OsLoginFacts(metadata_on=True, two_factor=False, policy_on=None, may_log_in=True)
    assert judge(ask(), facts).launch_does == oslogin.IMPORT_KEY


# -- external and internal IPs ---------------------------------------------------------------
def test_external_ips_allowed_denied_or_only_named_instances():
    allow = FakeRest({EXTERNAL: {"spec": {"rules": [{"allowAll": True}]}}})
    assert network.check_external_ips(ask(), reach(allow)).verdict is Verdict.PASS
    unset = FakeRest({EXTERNAL: {"name": "projects/1/policies/compute.vmExternalIpAccess"}})
    assert network.check_external_ips(ask(), reach(unset)).verdict is Verdict.PASS
    for rule in (
        {"denyAll": True},
        {"values": {"allowedValues": ["projects/p/zones/z/instances/a"]}},
    ):
        rest = FakeRest({EXTERNAL: {"spec": {"rules": [rule]}}})
        check = network.check_external_ips(ask(), reach(rest))
        assert check.verdict is Verdict.FAIL and "--internal-ips" in (check.fix or "")


def test_external_ip_policy_unreadable_is_unknown():
    rest = FakeRest(
        {EXTERNAL: error(403, "PERMISSION_DENIED", "Permission 'orgpolicy.policy.get' denied")}
    )
    assert network.check_external_ips(ask(), reach(rest)).verdict is Verdict.UNKNOWN


def test_internal_ips_need_cloud_nat_in_the_region():
    nat = FakeRest({ROUTERS: {"items": [{"name": "r", "nats": [{"name": "n"}]}]}})
    internal = ask(backend=Backend.COMPUTE, internal_ips=True)
    assert network.check_internal_ips(internal, reach(nat)).verdict is Verdict.PASS
    none = FakeRest({ROUTERS: {"items": [{"name": "r"}]}})
    check = network.check_internal_ips(internal, reach(none))
    assert check.verdict is Verdict.FAIL and "routers nats create" in (check.fix or "")


def test_internal_ips_through_iap_need_a_firewall_rule_for_iap():
    internal = ask(internal_ips=True, transport=Transport.GCLOUD)
    routers = {"items": [{"nats": [{"name": "n"}]}]}
    closed = FakeRest(
        {
            ROUTERS: routers,
            FIREWALLS: {
                "items": [
                    {
                        "sourceRanges": ["10.0.0.0/8"],
                        "allowed": [{"IPProtocol": "tcp", "ports": ["22"]}],
                    }
                ]
            },
        }
    )
    check = network.check_internal_ips(internal, reach(closed))
    assert check.verdict is Verdict.FAIL and "35.235.240.0/20" in (check.fix or "")
    open_ = FakeRest(
        {
            ROUTERS: routers,
            FIREWALLS: {
                "items": [
                    {
                        "sourceRanges": ["35.235.240.0/20"],
                        "allowed": [{"IPProtocol": "tcp", "ports": ["20-30"]}],
                    }
                ]
            },
        }
    )
    open_.answers[TEST_IAM] = {"permissions": [network.IAP_PERMISSION]}
    assert network.check_internal_ips(internal, reach(open_)).verdict is Verdict.PASS
    ((method, _path, body),) = [a for a in open_.asked if a[1] == TEST_IAM]
    assert (method, body) == ("POST", {"permissions": ["iap.tunnelInstances.accessViaIAP"]})


def iap_ready(permission_answer):
    """NAT and an IAP firewall rule in place; testIamPermissions answers ``permission_answer``."""
    rule = {"sourceRanges": ["35.235.240.0/20"], "allowed": [{"IPProtocol": "tcp"}]}
    return FakeRest(
        {
            ROUTERS: {"items": [{"nats": [{"name": "n"}]}]},
            FIREWALLS: {"items": [rule]},
            TEST_IAM: permission_answer,
        }
    )


def test_iap_without_the_tunnel_user_role_fails_with_the_grant():
    internal = ask(internal_ips=True, transport=Transport.GCLOUD)
    # Google answers only the asked permissions the caller holds: none, an empty object.
    check = network.check_internal_ips(internal, reach(iap_ready({})))
    assert check.verdict is Verdict.FAIL and "IAP-secured Tunnel User" in check.detail
    assert check.fix is not None and "--role=roles/iap.tunnelResourceAccessor" in check.fix


def test_iap_role_unreadable_is_unknown_never_a_fail():
    internal = ask(internal_ips=True, transport=Transport.GCLOUD)
    refused = error(403, "PERMISSION_DENIED", "The caller does not have permission")
    check = network.check_internal_ips(internal, reach(iap_ready(refused)))
    assert check.verdict is Verdict.UNKNOWN and "Tunnel User role is not known" in check.detail


# -- the zone's offer ------------------------------------------------------------------------
def test_offered_passes_fails_with_the_zones_command_or_is_unknown():
    rest = FakeRest()
    assert offer.check_offered(ask(), reach(rest, ["v6e-1", "v6e-4"])).verdict is Verdict.PASS
    check = offer.check_offered(ask(), reach(rest, ["v6e-1"]))
    assert check.verdict is Verdict.FAIL
    assert check.fix == "tpuwizard zones --accelerator v6e-4 --backend tpu-api"
    refused = gx.Forbidden("Location us-east5-a is not found or access is unauthorized.")
    assert offer.check_offered(ask(), reach(rest, refused)).verdict is Verdict.UNKNOWN


def test_a_compute_engine_slice_is_offered_where_its_vm_machine_type_is():
    # Compute Engine lists machine types per VM: a v6e-16 slice is a MIG of v6e-4 VMs.
    rest = FakeRest()
    slice_ask = ask(backend=Backend.COMPUTE, accelerator="v6e-16")
    assert offer.check_offered(slice_ask, reach(rest, ["v6e-1", "v6e-4"])).verdict is Verdict.PASS
    assert offer.check_offered(slice_ask, reach(rest, ["v6e-1"])).verdict is Verdict.FAIL
    # The TPU API lists the slice itself: no such stand-in there.
    api_ask = ask(accelerator="v6e-16")
    assert offer.check_offered(api_ask, reach(rest, ["v6e-4"])).verdict is Verdict.FAIL


# -- the multi-host join (issue 47) ------------------------------------------------------------


def slice_rule(*ports: str, **more):
    return {
        "network": f"https://compute.googleapis.com/compute/v1/projects/{P}/global/networks/default",
        "direction": "INGRESS",
        "sourceRanges": ["10.128.0.0/9"],
        "allowed": [{"IPProtocol": "tcp", "ports": list(ports)}],
        **more,
    }


def test_a_network_without_the_join_port_is_said_before_a_slice_is_made():
    slice_ask = ask(accelerator="v5litepod-16")
    ssh_only = FakeRest({FIREWALLS: {"items": [slice_rule("22")]}})
    check = network.check_slice_join(slice_ask, reach(ssh_only))
    assert check.verdict is Verdict.UNKNOWN  # Google's slice rule may still come with the create
    assert "admits tcp 8476" in check.detail and "nor 8482" in check.detail
    assert "--allow=tcp:8476,tcp:8482" in (check.fix or "")


def test_google_slice_rule_admits_the_join_port_but_not_jax_own():
    rule = slice_rule("8470", "8471", "8474", "8476", "11211", sourceRanges=[], sourceTags=["t"])
    check = network.join_verdict({"items": [rule]}, P)
    assert check.verdict is Verdict.PASS and "it blocks 8482" in check.detail
    everything = network.join_verdict({"items": [slice_rule("0-65535")]}, P)
    assert everything.verdict is Verdict.PASS and "8476 and 8482" in everything.detail
    # A rule from the internet, a disabled one or another network's does not count.
    outside = slice_rule("8476", sourceRanges=["0.0.0.0/32"])
    off = slice_rule("8476", disabled=True)
    other = slice_rule("8476", network="projects/p/global/networks/other")
    for rule in (outside, off, other):
        assert network.join_verdict({"items": [rule]}, P).verdict is Verdict.UNKNOWN


def test_only_a_multi_host_launch_reads_the_join():
    from tpuwizard.core.preflight.run import jobs_for

    names = [j.name for j in jobs_for(ask(accelerator="v5litepod-16"), reach(FakeRest({})))]
    assert network.JOIN in names
    single = [j.name for j in jobs_for(ask(accelerator="v5litepod-8"), reach(FakeRest({})))]
    assert network.JOIN not in single
