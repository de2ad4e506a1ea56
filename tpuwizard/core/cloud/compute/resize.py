"""The course's Route 2B, the part :class:`ComputeSlices` holds for it: a MIG's resize request
(compute.v1.json ``instanceGroupManagerResizeRequests``), asked for once the MIG exists, read while
the VM is awaited, and cancelled and deleted before its MIG.

Google's rules (reference: docs/guides/compute-engine.md, "The course's Route 2B"): a request
"starts provisioning VMs immediately or queues VM creation" (insert); cancelling is "only possible
for requests that are accepted in the queue"; delete takes "the specified, inactive resize
request. Requests that are still active cannot be deleted" (compute.v1.json's methods). So an
active request is cancelled first, then deleted, then the MIG. A refusal of the insert itself
(users report "Creating resize requests for managed instance group with TPU is not allowed") is
a :class:`CreateFailed` under tpuwizard's own code, which the launch answers by deleting the MIG
and template, and whose diagnosis names the bulk-mode default.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tpuwizard.core.cloud.compute import slice_body as body
from tpuwizard.core.cloud.compute.errors import (
    REQUEST_REFUSED_CODE,
    OperationError,
    capacity_refused,
    raise_delete_errors,
)
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.errors import CreateFailed

# compute.v1.json's states of a request that still asks for VMs (cancel takes only these).
ACTIVE = frozenset({"CREATING", "ACCEPTED"})
# The REST client's "POST https://...: " before Google's own words (as diagnose/failure.py
# strips it).
_REQUEST_PREFIX = re.compile(r"^(GET|POST|PUT|PATCH|DELETE) \S+: ")


class ResizeRequestPart:
    """A MIG's resize requests, over this endpoint's client; operations are zonal."""

    def __init__(
        self,
        compute_v1: Any,
        client: Any,
        call: Callable[..., Any],
        wait_operation: Callable[[str, str, float], Any],
    ) -> None:
        self.v1, self.requests = compute_v1, client
        self._call, self._wait = call, wait_operation

    def ask(self, req: NodeRequest) -> Any:
        """Ask for the VM (never retried); a refusal of the call is the create's failure."""
        from google.api_core import exceptions

        resource = self.v1.InstanceGroupManagerResizeRequest.from_json(
            json.dumps(body.request_body(req))
        )
        try:
            return self._call(
                self.requests.insert_unary,
                False,
                zone=req.zone,
                instance_group_manager=req.node_id,
                instance_group_manager_resize_request_resource=resource,
            )
        except exceptions.ClientError as err:  # 4xx: Google said no; nothing was made
            if isinstance(err, exceptions.TooManyRequests | exceptions.NotFound):
                raise
            said = _REQUEST_PREFIX.sub("", str(err.message))  # Google's words, not the URL
            refused = {"code": REQUEST_REFUSED_CODE, "message": said}
            name = body.request_name(req.node_id)
            raise CreateFailed(OperationError(name, [refused], err.code)) from err

    def listed(self, zone: str, mig: str) -> list[Any]:
        """The MIG's resize requests; none when the MIG is gone (its requests with it)."""
        from google.api_core import exceptions

        try:
            return list(self._call(self.requests.list, zone=zone, instance_group_manager=mig))
        except exceptions.NotFound:
            return []

    def check(self, zone: str, mig: str) -> OperationError | None:
        """What our request says while the VM is awaited: no capacity yet (returned: Flex-start
        waits, until tpuwizard's queue wait), or a :class:`CreateFailed` that ends the wait:
        FAILED ("any VMs that were created during provisioning are rolled back"), another
        last-attempt error, or a request cancelled or gone (by hand)."""
        name = body.request_name(mig)
        found = next((r for r in self.listed(zone, mig) if r.name == name), None)
        if found is None:
            raise CreateFailed(OperationError(name, [{"code": "NOT_FOUND", "message": _GONE}]))
        state = str(found.state)
        if state in ("CANCELLED", "DELETING"):
            words = f"the resize request {name} was {state.lower()} before its VM ran"
            raise CreateFailed(OperationError(name, [{"code": state, "message": words}]))
        if state == "FAILED":
            raise CreateFailed(OperationError(name, _errors(found.status.error)))
        last = found.status.last_attempt.error if found.status.last_attempt else None
        errors = _errors(last)
        failed = OperationError(name, errors) if errors else None
        if failed is not None and not capacity_refused(failed):
            raise CreateFailed(failed)
        return failed

    def cancel_and_delete(self, zone: str, mig: str, timeout: float) -> None:
        """Cancel each active request, then delete it, each operation waited on."""
        for found in self.listed(zone, mig):
            named = {"zone": zone, "instance_group_manager": mig, "resize_request": found.name}
            if str(found.state) in ACTIVE:
                op = self._read(self.requests.cancel_unary, **named)
                if op is not None:
                    raise_delete_errors(self._wait(zone, op.name, timeout))
            op = self._read(self.requests.delete_unary, **named)
            if op is not None:
                raise_delete_errors(self._wait(zone, op.name, timeout))

    def _read(self, method: Any, **kw: Any) -> Any:
        from google.api_core import exceptions

        try:
            return self._call(method, **kw)
        except exceptions.NotFound:  # gone already: the wish come true
            return None


_GONE = "the resize request is gone before its VM ran (deleted by hand?)"


def _errors(error: Any) -> list[dict[str, Any]]:
    found = error.errors if error else []
    return [{"code": e.code, "message": e.message} for e in found]
