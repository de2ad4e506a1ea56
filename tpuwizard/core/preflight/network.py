"""The network the VM gets: external addresses allowed by the organisation's policy
``constraints/compute.vmExternalIpAccess`` (Org Policy v2 getEffectivePolicy); with
``--internal-ips``, Cloud NAT in the region (else the VM cannot reach PyPI: google-behaviour.md:15,
compute-engine.md:35) and, for gcloud's IAP tunnel, a firewall rule admitting IAP's range on
port 22 and the caller's IAP-secured Tunnel User role (``roles/iap.tunnelResourceAccessor``), read
as its permission ``iap.tunnelInstances.accessViaIAP`` through Resource Manager's
``projects.testIamPermissions``, which answers only the asked permissions the caller holds (the
sources: docs/preflight-sandbox.md, "IAP")."""

from __future__ import annotations

import ipaddress
from typing import Any

from tpuwizard.core.cloud.backends import COMPUTE as COMPUTE_BACKEND
from tpuwizard.core.cloud.backends import Transport
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.model import Check, failed, in_parallel, passed, unknown
from tpuwizard.core.preflight.rest import (
    COMPUTE,
    ORG_POLICY,
    RESOURCE_MANAGER,
    Answer,
    cannot_read,
)

EXTERNAL, INTERNAL = "External IPs", "Internal IPs"
EXTERNAL_IP_ACCESS = "compute.vmExternalIpAccess"
IAP_RANGE = ipaddress.ip_network("35.235.240.0/20")  # where IAP's TCP forwarding comes from
IAP_PERMISSION = "iap.tunnelInstances.accessViaIAP"  # in roles/iap.tunnelResourceAccessor
IAP_ROLE = "roles/iap.tunnelResourceAccessor"


def external_ips_forbidden(policy: dict[str, Any]) -> bool:
    """A list constraint's effective policy forbids a new VM's external address: a rule denies
    all, or allows only named instances (a new VM is none of them)."""
    for rule in (policy.get("spec") or {}).get("rules") or []:
        if not isinstance(rule, dict) or rule.get("allowAll") is True:
            continue
        values = rule.get("values") or {}
        if rule.get("denyAll") is True or values.get("allowedValues"):
            return True
    return False


def check_external_ips(ask: PreflightAsk, reach: Reach) -> Check:
    if reach.rest is None:
        return unknown(EXTERNAL, "no credentials to read the policy with")
    url = (
        f"{reach.endpoints.org_policy}/v2/projects/{ask.project}/policies/"
        f"{EXTERNAL_IP_ACCESS}:getEffectivePolicy"
    )
    answer = reach.rest.get(url)
    if not answer.ok:
        what = f"the organisation policy {EXTERNAL_IP_ACCESS}"
        return cannot_read(EXTERNAL, answer, ORG_POLICY, ask.project, what)
    if not external_ips_forbidden(answer.body):
        return passed(EXTERNAL, f"allowed ({EXTERNAL_IP_ACCESS} does not forbid them)")
    way = (
        # No IAP transport on Compute Engine: --internal-ips is refused there (plan/reach_rules.py).
        "--backend tpu-api --internal-ips --transport gcloud (gcloud reaches TPU API VMs "
        "through IAP), where the TPU API serves the type"
        if ask.backend == COMPUTE_BACKEND
        else "add --internal-ips --transport gcloud (gcloud reaches the VMs through IAP)"
    )
    return failed(
        EXTERNAL,
        f"the organisation's policy {EXTERNAL_IP_ACCESS} forbids a new VM an external address: "
        "the create would be refused",
        way,
    )


def has_nat(routers: dict[str, Any]) -> bool:
    return any(r.get("nats") for r in routers.get("items") or [] if isinstance(r, dict))


def admits_iap_ssh(firewalls: dict[str, Any]) -> bool:
    """An enabled ingress rule allowing TCP 22 from a range that holds IAP's."""
    for rule in firewalls.get("items") or []:
        if rule.get("disabled") or rule.get("direction", "INGRESS") != "INGRESS":
            continue
        try:
            ranges = [ipaddress.ip_network(r, strict=False) for r in rule.get("sourceRanges") or []]
        except ValueError:
            continue
        if not any(r.version == 4 and IAP_RANGE.subnet_of(r) for r in ranges):  # type: ignore[arg-type]
            continue
        for allowed in rule.get("allowed") or []:
            if allowed.get("IPProtocol") not in ("tcp", "all"):
                continue
            ports = allowed.get("ports")
            if not ports or any(_port_in(22, p) for p in ports):
                return True
    return False


def _port_in(port: int, spec: str) -> bool:
    low, _, high = str(spec).partition("-")
    try:
        return int(low) <= port <= int(high or low)
    except ValueError:
        return False


def check_internal_ips(ask: PreflightAsk, reach: Reach) -> Check:
    """Cloud NAT in the region; for the TPU API's gcloud transport, the IAP firewall rule and
    the caller's IAP-secured Tunnel User permission."""
    if reach.rest is None:
        return unknown(INTERNAL, "no credentials to read the network with")
    rest, base = reach.rest, f"{reach.endpoints.compute}/compute/v1/projects/{ask.project}"
    iap = ask.transport == Transport.GCLOUD and ask.backend != COMPUTE_BACKEND
    calls = [lambda: rest.get(f"{base}/regions/{ask.region}/routers")]
    if iap:
        calls.append(lambda: rest.get(f"{base}/global/firewalls"))
        calls.append(
            lambda: rest.post(
                f"{reach.endpoints.resource_manager}/v1/projects/{ask.project}:testIamPermissions",
                {"permissions": [IAP_PERMISSION]},
            )
        )
    answers = in_parallel(*calls)
    routers = answers[0]
    if not routers.ok:
        return cannot_read(INTERNAL, routers, COMPUTE, ask.project, f"the routers of {ask.region}")
    if not has_nat(routers.body):
        return failed(
            INTERNAL,
            f"no Cloud NAT in {ask.region}: a VM with no external address cannot reach PyPI, "
            "so its bootstrap would fail on a node that bills",
            f"gcloud compute routers create tpuwizard-nat --network=default --region={ask.region} "
            f"--project {ask.project} && gcloud compute routers nats create tpuwizard-nat "
            f"--router=tpuwizard-nat --region={ask.region} --project {ask.project} "
            "--auto-allocate-nat-external-ips --nat-all-subnet-ip-ranges",
        )
    if not iap:
        return passed(INTERNAL, f"Cloud NAT in {ask.region}")
    return _judge_iap(ask, answers[1], answers[2])


def _judge_iap(ask: PreflightAsk, firewalls: Answer, permission: Answer) -> Check:
    """What gcloud's IAP tunnel needs, Cloud NAT being there: the firewall rule, then the role."""
    if not firewalls.ok:
        return cannot_read(INTERNAL, firewalls, COMPUTE, ask.project, "the firewall rules")
    if not admits_iap_ssh(firewalls.body):
        return failed(
            INTERNAL,
            f"Cloud NAT in {ask.region}, but no firewall rule admits IAP ({IAP_RANGE}) on port "
            "22, so gcloud's tunnel cannot reach the VMs",
            f"gcloud compute firewall-rules create allow-iap-ssh --network=default "
            f"--direction=INGRESS --allow=tcp:22 --source-ranges={IAP_RANGE} "
            f"--project {ask.project}",
        )
    if not permission.ok:
        what = f"whether you hold {IAP_PERMISSION}"
        unread = cannot_read(INTERNAL, permission, RESOURCE_MANAGER, ask.project, what)
        return unknown(
            INTERNAL,
            f"Cloud NAT in {ask.region} and a firewall rule admits IAP on port 22; your IAP-"
            f"secured Tunnel User role is not known: {unread.detail}",
            unread.fix,
        )
    if IAP_PERMISSION not in (permission.body.get("permissions") or []):
        return failed(
            INTERNAL,
            f"Cloud NAT in {ask.region} and a firewall rule admits IAP on port 22, but you lack "
            f"{IAP_PERMISSION} (the IAP-secured Tunnel User role) on project {ask.project}, so "
            "IAP would refuse gcloud's tunnel",
            f"gcloud projects add-iam-policy-binding {ask.project} "
            f'--member="user:$(gcloud config get-value account)" --role={IAP_ROLE}',
        )
    return passed(
        INTERNAL,
        f"Cloud NAT in {ask.region}; a firewall rule admits IAP on port 22; you hold "
        f"{IAP_PERMISSION} (IAP-secured Tunnel User)",
    )


# The multi-host join (issue 47). Since JAX 0.8.1 a bare jax.distributed.initialize() on Cloud
# TPU uses coordinator port 8482 (jax-ml/jax, jax/_src/clusters/cloud_tpu_cluster.py); the
# firewall rule Google makes for a TPU slice opens tcp 8470, 8471, 8474, 8476 and 11211, so
# without an allow-internal rule the join hangs (jax-ml/jax issue 35905). tpuwizard names worker
# 0's internal address and 8476 (launch/workers/distributed.py SLICE_PORT, kept equal below).
JOIN = "Slice join"
JAX_PORT = 8482
SLICE_RULE_PORTS = (8470, 8471, 8474, 8476, 11211)
JOIN_PORT = 8476
PRIVATE = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))


def admits_between_vms(firewalls: dict[str, Any], port: int, network: str = "default") -> bool:
    """An enabled ingress rule on ``network`` allowing TCP ``port`` from the VMs' own addresses
    (a private range, or source tags / service accounts, which name VMs)."""
    for rule in firewalls.get("items") or []:
        if not isinstance(rule, dict) or rule.get("disabled"):
            continue
        if rule.get("direction", "INGRESS") != "INGRESS":
            continue
        if str(rule.get("network") or network).rsplit("/", 1)[-1] != network:
            continue
        try:
            ranges = [ipaddress.ip_network(r, strict=False) for r in rule.get("sourceRanges") or []]
        except ValueError:
            continue
        from_vms = bool(rule.get("sourceTags") or rule.get("sourceServiceAccounts")) or any(
            r.version == 4 and any(r.overlaps(p) for p in PRIVATE) for r in ranges
        )
        if not from_vms:
            continue
        for allowed in rule.get("allowed") or []:
            if allowed.get("IPProtocol") not in ("tcp", "all"):
                continue
            ports = allowed.get("ports")
            if not ports or any(_port_in(port, p) for p in ports):
                return True
    return False


def join_verdict(firewalls: dict[str, Any], project: str) -> Check:
    """What the default network's rules say of the slice's join, before the create."""
    ours = admits_between_vms(firewalls, JOIN_PORT)
    jax_own = admits_between_vms(firewalls, JAX_PORT)
    opened = ", ".join(map(str, SLICE_RULE_PORTS))
    if ours and jax_own:
        return passed(JOIN, f"the network admits tcp {JOIN_PORT} and {JAX_PORT} between the VMs")
    if ours:
        return passed(
            JOIN,
            f"the network admits tcp {JOIN_PORT} between the VMs, which tpuwizard gives the "
            f"join; it blocks {JAX_PORT}, JAX's own port since 0.8.1 (a script that names its "
            f"own coordinator must use one of {opened})",
        )
    return unknown(
        JOIN,
        f"no firewall rule of the default network admits tcp {JOIN_PORT} (tpuwizard's join "
        f"port) between VMs yet{'' if jax_own else f', nor {JAX_PORT} (JAX own)'}. Google adds "
        f"a rule opening tcp {opened} when it creates a TPU slice; where it does not, the "
        "workers' join would hang until the stall guard ends the run",
        f"gcloud compute firewall-rules create tpuwizard-allow-jax-join --network=default "
        f"--direction=INGRESS --allow=tcp:{JOIN_PORT},tcp:{JAX_PORT} "
        f"--source-ranges=10.128.0.0/9 --project {project}",
    )


def check_slice_join(ask: PreflightAsk, reach: Reach) -> Check:
    """For a multi-host slice: whether the network lets its workers join (the port tpuwizard
    names, and JAX's own)."""
    if reach.rest is None:
        return unknown(JOIN, "no credentials to read the firewall rules with")
    base = f"{reach.endpoints.compute}/compute/v1/projects/{ask.project}"
    answer = reach.rest.get(f"{base}/global/firewalls")
    if not answer.ok:
        return cannot_read(JOIN, answer, COMPUTE, ask.project, "the firewall rules")
    return join_verdict(answer.body, ask.project)
