"""Resize requests on a zonal MIG (compute.v1.json instanceGroupManagerResizeRequests): the
course's Route 2B asks for its Flex-start VM with one.

Google's pages, each rule's source:
- about-resize-requests-mig: "When you create a resize request in a MIG, Compute Engine sets the
  state of the request to CREATING, and then transitions it to ACCEPTED when the request is
  created"; the MIG then "creates VMs all at once" when resources are available; the run
  duration "must be between 10 minutes and 7 days. At the end of the run duration, the MIG
  deletes the created VMs".
- gcloud 528's ``beta ... resize-requests create --help``, of ``--requested-run-duration``: "If
  you want the managed instance group to consume a reservation or use FLEX_START provisioning
  model, then this flag is optional. Otherwise, it's required." (The sandbox offers no
  reservations: optional only with a FLEX_START template, whose maxRunDuration then applies.)
- compute.v1.json InstanceGroupManagerResizeRequest: "The group's target size will be increased
  by this number"; FAILED: "any VMs that were created during provisioning are rolled back and
  removed from the MIG".

Refused only with the fault ``resize_request_refused``: the words users report for a TPU MIG
("Creating resize requests for managed instance group with TPU is not allowed",
reference/compute-engine.md, "Multi-host slices"), which no Google page states. The requests live
in their MIG's record (``_resize_requests``), so deleting the MIG deletes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tpuwizard.sandbox.compute import google as ce
from tpuwizard.sandbox.compute import instance_rules
from tpuwizard.sandbox.compute.mig_parts import check_name, unknown_fields
from tpuwizard.sandbox.compute.zone_operations import rfc3339
from tpuwizard.sandbox.model import ApiError, public

if TYPE_CHECKING:
    from tpuwizard.sandbox.compute.migs import ManagedInstanceGroups

# The words users report (ce "Multi-host slices"); the sandbox's default serves the request.
RESIZE_REQUEST_REFUSED = (
    "Creating resize requests for managed instance group with TPU is not allowed"
)
FIELDS = ("name", "description", "resizeBy", "requestedRunDuration")
MIN_RUN_S = 10 * 60  # about-resize-requests-mig: "between 10 minutes and 7 days"
MAX_RUN_S = 7 * 24 * 3600
ACTIVE = ("CREATING", "ACCEPTED")


class ResizeRequests:
    """The resize requests of the MIGs in ``migs``, and what capacity does to them."""

    def __init__(self, migs: ManagedInstanceGroups) -> None:
        self.migs = migs

    def _table(self, mig: dict[str, Any]) -> dict[str, Any]:
        return mig.setdefault("_resize_requests", {})

    def _found(self, project: str, zone: str, mig_name: str, name: str) -> tuple[dict, dict]:
        mig = self.migs.record(project, zone, mig_name)
        request = self._table(mig).get(name)
        if request is None:
            key = f"{mig['_name']}/resizeRequests/{name}"
            raise ApiError(404, "notFound", f"The resource '{key}' was not found")
        return mig, request

    # --- insert ------------------------------------------------------------------------------

    def insert(self, project: str, zone: str, mig_name: str, body: dict[str, Any]) -> dict:
        mig = self.migs.record(project, zone, mig_name)
        if self.migs.faults.resize_request_refused:
            raise ApiError(400, "invalid", RESIZE_REQUEST_REFUSED)
        if "instances" in body:  # compute.v1.json has it (named VMs); the sandbox does not
            raise instance_rules.invalid(
                "resource.instances", "", "The sandbox serves resizeBy only: give the count."
            )
        unknown_fields(body, FIELDS, "resource")
        name = check_name(body.get("name"))
        if name in self._table(mig):
            key = f"{mig['_name']}/resizeRequests/{name}"
            raise ApiError(409, "alreadyExists", f"The resource '{key}' already exists")
        by = body.get("resizeBy")
        if isinstance(by, bool) or not isinstance(by, int) or by < 1:
            raise instance_rules.invalid("resource.resizeBy", by, "Must be 1 or more VMs.")
        template = self.migs.parts.template_by_link(mig["instanceTemplate"], project) or {}
        scheduling = template.get("properties", {}).get("scheduling") or {}
        flex = scheduling.get("provisioningModel") == "FLEX_START"
        if not flex and "requestedRunDuration" not in body:
            # gcloud 528's help (module docstring); the words are the sandbox's.
            raise instance_rules.invalid(
                "resource.requestedRunDuration",
                "",
                "A resize request needs a requestedRunDuration unless the MIG's instance "
                "template uses the FLEX_START provisioning model.",
            )
        run_s = None
        if "requestedRunDuration" in body:
            asked = body["requestedRunDuration"]
            run_s = int(instance_rules.seconds(asked, "resource.requestedRunDuration"))
            if not MIN_RUN_S <= run_s <= MAX_RUN_S:
                raise instance_rules.invalid(
                    "resource.requestedRunDuration.seconds",
                    asked.get("seconds"),
                    f"Must be between {MIN_RUN_S} (10 minutes) and {MAX_RUN_S} (7 days) seconds.",
                )
        store = self.migs.store
        store.data["counter"] += 1
        request_id = str(ce.ID_BASE + store.data["counter"])
        link = f"{mig['selfLink']}/resizeRequests"
        request: dict[str, Any] = {
            "kind": "compute#instanceGroupManagerResizeRequest",
            "id": request_id,
            "creationTimestamp": rfc3339(),
            "name": name,
            "resizeBy": by,
            "state": "ACCEPTED",  # CREATING lasts as long as the insert, which is DONE at once
            "status": {},
            "zone": mig["zone"],
            "selfLink": f"{link}/{name}",
            "selfLinkWithId": f"{link}/{request_id}",
            "_run_s": run_s,
            "_members": [],
        }
        for key in ("description", "requestedRunDuration"):
            if key in body:
                request[key] = body[key]
        self._table(mig)[name] = request
        self.advance(mig)
        return self._done(project, zone, "insert", mig, request)

    def _done(self, project: str, zone: str, kind: str, mig: dict, request: dict) -> dict:
        """The request's operation, DONE. Its targetLink is the MIG's, as Google's is: gcloud's
        waiter appends ``/resizeRequests/NAME`` to it to read the request back (waiters.py,
        "b/313849714")."""
        op = self.migs.operations.start(project, zone, kind, mig["_name"], mig["id"])
        self.migs.operations.finish(op)
        self.migs.store.save()
        return public(op)

    # --- reads -------------------------------------------------------------------------------

    def get(self, project: str, zone: str, mig_name: str, name: str) -> dict[str, Any]:
        return public(self._found(project, zone, mig_name, name)[1])

    def listing(self, project: str, zone: str, mig_name: str) -> list[dict[str, Any]]:
        mig = self.migs.record(project, zone, mig_name)
        return [public(r) for _, r in sorted(self._table(mig).items())]

    # --- cancel, delete ----------------------------------------------------------------------

    def cancel(self, project: str, zone: str, mig_name: str, name: str) -> dict[str, Any]:
        """manage-resize-requests-mig: cancelling stops the MIG from creating the requested VMs;
        the ones it began are rolled back. Only an active request can be (the refusal's words
        are the sandbox's)."""
        mig, request = self._found(project, zone, mig_name, name)
        if request["state"] not in ACTIVE:
            raise ApiError(
                400,
                "resourceNotReady",
                f"The resize request '{name}' is {request['state']}: only a CREATING or ACCEPTED "
                "request can be cancelled.",
            )
        self._roll_back(mig, request)
        request["state"] = "CANCELLED"
        return self._done(project, zone, "cancel", mig, request)

    def delete(self, project: str, zone: str, mig_name: str, name: str) -> dict[str, Any]:
        """Deleting an active request cancels it first (the sandbox's choice); the VMs a
        SUCCEEDED request made stay the MIG's."""
        mig, request = self._found(project, zone, mig_name, name)
        if request["state"] in ACTIVE:
            self._roll_back(mig, request)
        del self._table(mig)[name]
        return self._done(project, zone, "delete", mig, request)

    def _roll_back(self, mig: dict[str, Any], request: dict[str, Any]) -> None:
        mine = set(request["_members"])
        for member in [m for m in mig["_members"] if m["name"] in mine]:
            mig["_members"].remove(member)
            self.migs.delete_vm(mig, member["name"])
        mig["targetSize"] = len(mig["_members"])
        request["_members"] = []

    # --- the clock ---------------------------------------------------------------------------

    def advance_all(self) -> bool:
        changed = False
        for mig in list(self.migs.records.values()):
            if not mig.get("_deleting"):
                changed |= self.advance(mig)
        return changed

    def advance(self, mig: dict[str, Any]) -> bool:
        """Each ACCEPTED request: its VMs made all at once where the zone has capacity (else it
        waits, its last attempt saying why), SUCCEEDED once all of them run, FAILED (its VMs
        rolled back) if one of them failed."""
        changed = False
        for request in self._table(mig).values():
            if request["state"] != "ACCEPTED":
                continue
            if not request["_members"]:
                changed |= self._provision(mig, request)
                continue
            members = {m["name"]: m for m in mig["_members"]}
            failed = [n for n in request["_members"] if members.get(n, {}).get("failed")]
            vms = [
                self.migs.instances.records.get(self.migs.vm_key(mig, n))
                for n in request["_members"]
            ]
            if failed:
                self._roll_back(mig, request)
                request.update(state="FAILED", status={"error": {"errors": [_failure(failed)]}})
                changed = True
            elif all(v is not None and v["status"] == "RUNNING" for v in vms):
                request.update(state="SUCCEEDED", status={})
                changed = True
        return changed

    def _provision(self, mig: dict[str, Any], request: dict[str, Any]) -> bool:
        project, zone = mig["_name"].split("/")[1], mig["_name"].split("/")[3]
        faults = self.migs.faults
        if zone in faults.stockout or faults.flex_pending:
            error = ce.stockout_error(project, zone)
            if request["status"].get("lastAttempt", {}).get("error", {}).get("errors") == [error]:
                return False
            request["status"] = {"lastAttempt": {"error": {"errors": [error]}}}
            return True
        before = {m["name"] for m in mig["_members"]}
        self.migs.set_size(mig, mig["targetSize"] + request["resizeBy"])
        for member in mig["_members"]:
            if member["name"] not in before:
                member["run_s"] = request["_run_s"]
                request["_members"].append(member["name"])
        request["status"] = {}
        self.migs.advance(mig)
        return True


def _failure(names: list[str]) -> dict[str, Any]:
    """FAILED's error (compute.v1.json: the VMs "are rolled back and removed from the MIG");
    the code and words are the sandbox's."""
    return {
        "code": "RESIZE_REQUEST_FAILED",
        "message": f"VM {', '.join(sorted(names))} could not be created; the request's VMs were "
        "rolled back and removed from the MIG.",
    }
