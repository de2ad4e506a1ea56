"""Each family of failure's diagnosis, whole: key, title, explanation, next steps, alternatives.

Recorded from core/cloud/diagnose/failure.py before ``diagnose``'s one long chain of checks was
split into named matchers by family (issue 46), and from remote.py before the workers' own
checks were split the same way. The order of the checks matters (a 403 on a zone is not a
missing role; a retry that ran out is judged by what kept failing; a heartbeat refused by SSH
is an SSH refusal), so the table holds one error per check, in the order they are tried, and a
few whose class alone would send them elsewhere. A change of wording is made here too, on
purpose.
"""

from __future__ import annotations

import errno

import pytest
import requests
from google.api_core import exceptions as gx
from google.auth import exceptions as auth_exc
from google.rpc.error_details_pb2 import ErrorInfo

from tpuwizard.core.choices import Choice, phrase
from tpuwizard.core.cloud.compute import errors as ce
from tpuwizard.core.cloud.diagnose import failure
from tpuwizard.core.cloud.diagnose.diagnosis import Context, Diagnosis
from tpuwizard.core.cloud.oslogin import OsLoginError
from tpuwizard.core.errors import (
    CreateFailed,
    HeartbeatFailed,
    LedgerUnwritable,
    NodeGone,
    PackagesFailed,
    QueueExpired,
    QueueSuspended,
    RemoteError,
    ScriptFailed,
    SliceIncomplete,
    StalledIn,
    Unreachable,
    VersionMismatch,
    WaitTimedOut,
    WorkersStalled,
)
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.untrusted import NotASmallFile

# A stall's last step names the front end's own control for the stall guard's minutes.
QUIET_ON_PURPOSE = phrase(
    "A script that is quiet on purpose for longer (a long first compile without output): "
    "raise {0}, or 0 to turn the guard off.",
    Choice("stall_timeout"),
)

CASES = [
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        OsLoginError("OS Login refused the key: 403 Forbidden"),
        Diagnosis(
            "os_login",
            "OS Login: tpuwizard's key could not be put in your profile",
            "OS Login refused the key: 403 Forbidden",
            [
                "Nothing was created. `--transport gcloud` logs in through OS Login instead.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            slice=parse_accelerator("v5litepod-4"),
            name="tpu-a",
            route="spot",
        ),
        QueueExpired("tpu-a-qr", "FAILED", 600.0, gx.ResourceExhausted("no capacity"), "spot"),
        Diagnosis(
            "stockout",
            "No TPU capacity in us-central1-a right now",
            (
                "Google has no free v5litepod-4 capacity in us-central1-a at the "
                "moment: the spot request tpu-a-qr waited in Google's queue for 10 "
                "min (last FAILED) and no capacity came free in the time it was "
                "allowed (queueingPolicy.validUntilDuration). Nothing was created "
                "and nothing is billing."
            ),
            [
                phrase(
                    (
                        "Try another zone that offers v5litepod-4: us-south1-a, "
                        "us-west1-c, us-west4-a, us-east5-a, us-east5-b, us-east5-c, "
                        "europe-west4-b (offered is not the same as free right now): {0}."
                    ),
                    Choice("failover", ""),
                ),
                phrase(
                    (
                        "Use Flex-start in us-west4-a, us-central1-a ({0}): the request "
                        "waits in a queue for capacity and runs for a bounded time."
                    ),
                    Choice("route", "flex"),
                ),
            ],
            [
                "us-south1-a",
                "us-west1-c",
                "us-west4-a",
                "us-east5-a",
                "us-east5-b",
                "us-east5-c",
                "europe-west4-b",
            ],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            slice=parse_accelerator("v5litepod-4"),
            name="tpu-a",
            route="spot",
        ),
        QueueSuspended("tpu-a-qr", "SERVICE", "spot"),
        Diagnosis(
            "preempted",
            "Google preempted the spot TPU",
            (
                "Spot capacity can be taken back at any moment: the VM stopped and "
                "its work with it. tpuwizard deletes it now, since a preempted "
                "node still counts against your quota."
            ),
            [
                phrase(
                    (
                        "Relaunch: run the same launch again ({0}); save checkpoints so a "
                        "restart resumes."
                    ),
                    Choice("route", "spot"),
                ),
                phrase(
                    "For a run that must not be interrupted choose {0}.", Choice("route", "vm,flex")
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        CreateFailed(gx.InternalServerError("An internal error has occurred"), route="spot"),
        Diagnosis(
            "stockout",
            "No TPU capacity in us-central1-a right now",
            (
                "Google has no free v5litepod-4 capacity in us-central1-a at the "
                "moment: Google refused the spot request (code 13, an internal "
                "error). Nothing was created and nothing is billing."
            ),
            [],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        CreateFailed(gx.InternalServerError("An internal error has occurred"), route="vm"),
        Diagnosis(
            "api_error",
            "The Cloud TPU API returned an error",
            "InternalServerError: An internal error has occurred",
            [
                "Try again; if it persists, run tpuwizard status and check the Cloud Console.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.RetryError("Deadline of 120.0s exceeded", cause=gx.ServiceUnavailable("backend down")),
        Diagnosis(
            "unavailable",
            "The Cloud TPU API is busy or unavailable",
            "It kept answering ServiceUnavailable after several retries (backend down).",
            [
                "Wait a few minutes and try again.",
                "Check https://status.cloud.google.com for an outage.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.RetryError("Deadline of 120.0s exceeded", cause=None),
        Diagnosis(
            "unreachable",
            "Cannot reach the Cloud TPU API",
            "The network call failed (RetryError: Deadline of 120.0s exceeded).",
            [
                "Check your internet connection, VPN or proxy settings.",
                "Then try again: tpuwizard status shows what exists once the network is back.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-east5-b",
            accelerator="tpu7x-8",
            slice=parse_accelerator("tpu7x-8"),
            name="tpu-a",
            route="vm",
            backend="compute",
        ),
        ce.OperationError("op-1", [{"code": "ZONE_RESOURCE_POOL_EXHAUSTED", "message": "no"}]),
        Diagnosis(
            "stockout",
            "No TPU capacity in us-east5-b right now",
            (
                "Google has no free tpu7x-8 capacity in us-east5-b at the moment: "
                "Compute Engine answered ZONE_RESOURCE_POOL_EXHAUSTED. Nothing was "
                "created and nothing is billing."
            ),
            [
                phrase(
                    (
                        "Try another zone that offers tpu7x-8: us-central1-c, "
                        "us-central1-ai1a (offered is not the same as free right now): {0}."
                    ),
                    Choice("failover", ""),
                ),
                phrase(
                    (
                        "Use Flex-start in us-central1-c ({0}): the request waits in a "
                        "queue for capacity and runs for a bounded time."
                    ),
                    Choice("route", "flex"),
                ),
                phrase(
                    "Or try spot capacity ({0}), which is often easier to get.",
                    Choice("route", "spot"),
                ),
            ],
            ["us-central1-c", "us-central1-ai1a"],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-east5-b",
            accelerator="tpu7x-8",
            slice=parse_accelerator("tpu7x-8"),
            name="tpu-a",
            route="vm",
            backend="compute",
        ),
        ce.OperationError("op-2", [{"code": "SOMETHING", "message": "m"}]),
        Diagnosis(
            "api_error",
            "Compute Engine refused to create the TPU VM",
            "The create operation ended with SOMETHING: m. tpuwizard deletes whatever it left.",
            [
                "Run tpuwizard status to see what exists, then try again or choose another zone.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-east5-b",
            accelerator="tpu7x-8",
            slice=parse_accelerator("tpu7x-8"),
            name="tpu-a",
            route="vm",
            backend="compute",
        ),
        ce.OperationError("op-3", [{"code": "SOMETHING", "message": "m"}], doing="delete"),
        Diagnosis(
            "api_error",
            "A Compute Engine delete did not succeed",
            "The delete operation ended with SOMETHING: m.",
            [
                "Run tpuwizard status to see what still exists, and tpuwizard teardown to retry.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.InternalServerError("The node tpu-a was PREEMPTED"),
        Diagnosis(
            "preempted",
            "Google preempted the spot TPU",
            (
                "Spot capacity can be taken back at any moment: the VM stopped and "
                "its work with it. tpuwizard deletes it now, since a preempted "
                "node still counts against your quota."
            ),
            [
                phrase(
                    (
                        "Relaunch: run the same launch again ({0}); save checkpoints so a "
                        "restart resumes."
                    ),
                    Choice("route", "spot"),
                ),
                phrase(
                    "For a run that must not be interrupted choose {0}.", Choice("route", "vm,flex")
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            slice=parse_accelerator("v5litepod-4"),
            name="tpu-a",
            route="spot",
        ),
        gx.ResourceExhausted("There is no more capacity in the zone us-central1-a"),
        Diagnosis(
            "stockout",
            "No TPU capacity in us-central1-a right now",
            (
                "Google has no free v5litepod-4 capacity in us-central1-a at the "
                "moment: the zone is out of capacity (code 8). Nothing was created "
                "and nothing is billing."
            ),
            [
                phrase(
                    (
                        "Try another zone that offers v5litepod-4: us-south1-a, "
                        "us-west1-c, us-west4-a, us-east5-a, us-east5-b, us-east5-c, "
                        "europe-west4-b (offered is not the same as free right now): {0}."
                    ),
                    Choice("failover", ""),
                ),
                phrase(
                    (
                        "Use Flex-start in us-west4-a, us-central1-a ({0}): the request "
                        "waits in a queue for capacity and runs for a bounded time."
                    ),
                    Choice("route", "flex"),
                ),
            ],
            [
                "us-south1-a",
                "us-west1-c",
                "us-west4-a",
                "us-east5-a",
                "us-east5-b",
                "us-east5-c",
                "europe-west4-b",
            ],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.TooManyRequests(
            "Quota exceeded for quota metric Create requests and limit requests per minute"
        ),
        Diagnosis(
            "rate_limited",
            "Too many create requests",
            (
                "Google limits how many TPUs a project may ask for per minute "
                "(Quota exceeded for quota metric Create requests and limit "
                "requests per minute)."
            ),
            [
                "Wait a minute and launch again; nothing was created.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.ResourceExhausted(
            "Quota limit 'TPUV5sLitepodServingPerProjectPerRegionForTPUAPI' has been "
            "exceeded. Limit: 0 in region us-central1."
        ),
        Diagnosis(
            "quota",
            "Quota exceeded",
            (
                "The project p has no quota left for "
                "TPUV5sLitepodServingPerProjectPerRegionForTPUAPI in region "
                "us-central1 (limit 0). Retrying will not help until the quota is "
                "raised."
            ),
            [
                (
                    "Request more in the console: IAM & Admin → Quotas, filter on "
                    "TPUV5sLitepodServingPerProjectPerRegionForTPUAPI and region "
                    "us-central1."
                ),
                (
                    "Single-host v5e (1, 4 or 8 chips) counts against the serving "
                    "quota, which is small by default; a training request is a "
                    "separate quota."
                ),
                (
                    "Or choose a zone or accelerator type with free quota, or a spot "
                    "or Flex-start route, which use preemptible quota."
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.Forbidden("Location us-central1-a is not found or access is unauthorized."),
        Diagnosis(
            "zone_unavailable",
            "us-central1-a is not available to your project",
            (
                "Google says 'Location us-central1-a is not found or access is "
                "unauthorized.': the project p may not use this zone (it is not "
                "enabled for it, or the zone is restricted). This is not a missing "
                "role."
            ),
            [
                phrase("Choose another zone: {0}.", Choice("zone", "v5litepod-4")),
                "To use this zone anyway, ask Google Cloud support or your account team.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(),
        gx.Forbidden("Location us-central1-a is not found or access is unauthorized."),
        Diagnosis(
            "zone_unavailable",
            "this zone is not available to your project",
            (
                "Google says 'Location us-central1-a is not found or access is "
                "unauthorized.': the project PROJECT_ID may not use this zone (it "
                "is not enabled for it, or the zone is restricted). This is not a "
                "missing role."
            ),
            [
                phrase("Choose another zone: {0}.", Choice("zone", "")),
                "To use this zone anyway, ask Google Cloud support or your account team.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.Forbidden("Permission iam.serviceAccounts.actAs denied on service account sa@p"),
        Diagnosis(
            "permission",
            "You may not attach that service account",
            (
                "Creating a TPU that runs as a service account needs "
                "iam.serviceAccounts.actAs on it (Permission "
                "iam.serviceAccounts.actAs denied on service account sa@p)."
            ),
            [
                "Ask a project owner to grant you the Service Account User role:",
                (
                    "gcloud projects add-iam-policy-binding p "
                    "--member=user:me@example.com --role=roles/iam.serviceAccountUser"
                ),
            ],
            [],
        ),
    ),
    (
        "gcloud-user@example.com",
        Context(),
        gx.Forbidden("Permission iam.serviceAccounts.actAs denied"),
        Diagnosis(
            "permission",
            "You may not attach that service account",
            (
                "Creating a TPU that runs as a service account needs "
                "iam.serviceAccounts.actAs on it (Permission "
                "iam.serviceAccounts.actAs denied)."
            ),
            [
                "Ask a project owner to grant you the Service Account User role:",
                (
                    "gcloud projects add-iam-policy-binding PROJECT_ID "
                    "--member=user:gcloud-user@example.com "
                    "--role=roles/iam.serviceAccountUser"
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(),
        gx.Forbidden("Permission iam.serviceAccounts.actAs denied"),
        Diagnosis(
            "permission",
            "You may not attach that service account",
            (
                "Creating a TPU that runs as a service account needs "
                "iam.serviceAccounts.actAs on it (Permission "
                "iam.serviceAccounts.actAs denied)."
            ),
            [
                "Ask a project owner to grant you the Service Account User role:",
                (
                    "gcloud projects add-iam-policy-binding PROJECT_ID "
                    "--member=user:YOUR_ACCOUNT --role=roles/iam.serviceAccountUser"
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.Forbidden("Cloud TPU API has not been used in project p before or it is disabled."),
        Diagnosis(
            "api_disabled",
            "The Cloud TPU API is not enabled",
            "The project p has not enabled tpu.googleapis.com.",
            [
                "gcloud services enable tpu.googleapis.com --project p",
                "Then wait a minute and try again.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.Forbidden("The API is disabled"),
        Diagnosis(
            "api_disabled",
            "The Cloud TPU API is not enabled",
            "The project p has not enabled tpu.googleapis.com.",
            [
                "gcloud services enable tpu.googleapis.com --project p",
                "Then wait a minute and try again.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.Forbidden("403", error_info=ErrorInfo(reason="SERVICE_DISABLED")),
        Diagnosis(
            "api_disabled",
            "The Cloud TPU API is not enabled",
            "The project p has not enabled tpu.googleapis.com.",
            [
                "gcloud services enable tpu.googleapis.com --project p",
                "Then wait a minute and try again.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-east5-b",
            accelerator="tpu7x-8",
            slice=parse_accelerator("tpu7x-8"),
            name="tpu-a",
            route="vm",
            backend="compute",
        ),
        gx.Forbidden("Permission denied"),
        Diagnosis(
            "tpu7x_access",
            "Compute Engine refused TPU7x (403)",
            (
                "Google answered 403 to creating tpu7x-8 in p (Permission denied). "
                "TPU7x needs access that Google grants through your account team "
                "(https://docs.cloud.google.com/tpu/docs/tpu7x-training); a "
                "project without it is refused at create. That a project without "
                "access gets a 403 is tpuwizard's assumption (unconfirmed: Google "
                "publishes no text for it); a missing role answers 403 too."
            ),
            [
                (
                    "Ask your Google Cloud account team for TPU7x access for p "
                    "(https://docs.cloud.google.com/tpu/docs/tpu7x-training)."
                ),
                (
                    "If the project has access, check your role: Compute Instance "
                    "Admin (roles/compute.instanceAdmin.v1)."
                ),
                "Or choose another generation, such as v6e, that needs no such grant.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.Forbidden("Permission denied on resource"),
        Diagnosis(
            "permission",
            "Permission denied",
            "Your account may not manage TPUs in p (Permission denied on resource).",
            [
                "Ask a project owner to grant you the TPU Admin role:",
                (
                    "gcloud projects add-iam-policy-binding p "
                    "--member=user:me@example.com --role=roles/tpu.admin"
                ),
            ],
            [],
        ),
    ),
    (
        "gcloud-user@example.com",
        Context(),
        gx.Forbidden("Permission denied on resource"),
        Diagnosis(
            "permission",
            "Permission denied",
            "Your account may not manage TPUs in PROJECT_ID (Permission denied on resource).",
            [
                "Ask a project owner to grant you the TPU Admin role:",
                (
                    "gcloud projects add-iam-policy-binding PROJECT_ID "
                    "--member=user:gcloud-user@example.com --role=roles/tpu.admin"
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(),
        gx.Forbidden("Permission denied on resource"),
        Diagnosis(
            "permission",
            "Permission denied",
            "Your account may not manage TPUs in PROJECT_ID (Permission denied on resource).",
            [
                "Ask a project owner to grant you the TPU Admin role:",
                (
                    "gcloud projects add-iam-policy-binding PROJECT_ID "
                    "--member=user:YOUR_ACCOUNT --role=roles/tpu.admin"
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.Unauthorized("Request had invalid authentication credentials"),
        Diagnosis(
            "unauthenticated",
            "Not signed in to Google Cloud",
            "No valid Application Default Credentials were found, or they expired.",
            [
                "gcloud auth application-default login",
                phrase("Or practise without a cloud: {0}", Choice("practice", "")),
                (
                    "Practising against `tpuwizard sandbox serve`? Export the "
                    "TPUWIZARD_SANDBOX_TOKEN line it printed."
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        auth_exc.RefreshError("Reauthentication is needed"),
        Diagnosis(
            "unauthenticated",
            "Not signed in to Google Cloud",
            "No valid Application Default Credentials were found, or they expired.",
            [
                "gcloud auth application-default login",
                phrase("Or practise without a cloud: {0}", Choice("practice", "")),
                (
                    "Practising against `tpuwizard sandbox serve`? Export the "
                    "TPUWIZARD_SANDBOX_TOKEN line it printed."
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        auth_exc.TransportError("connection refused"),
        Diagnosis(
            "unreachable",
            "Cannot reach the Cloud TPU API",
            "The network call failed (TransportError: connection refused).",
            [
                "Check your internet connection, VPN or proxy settings.",
                "Then try again: tpuwizard status shows what exists once the network is back.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.Conflict("already exists"),
        Diagnosis(
            "already_exists",
            "The name is already taken",
            "A TPU called tpu-a already exists in us-central1-a.",
            [
                phrase("Choose another name: {0}; or", Choice("name", "")),
                "delete the old one if it is yours: tpuwizard teardown tpu-a",
            ],
            [],
        ),
    ),
    (
        None,
        Context(),
        gx.Conflict("already exists"),
        Diagnosis(
            "already_exists",
            "The name is already taken",
            "A TPU called that name already exists.",
            [
                phrase("Choose another name: {0}; or", Choice("name", "")),
                "delete the old one if it is yours: tpuwizard teardown that name",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.NotFound("Location us-west9-z not found"),
        Diagnosis(
            "invalid_zone",
            "That zone does not offer this TPU",
            "Location us-west9-z not found",
            [
                phrase("Choose a zone your project can use: {0}.", Choice("zone", "v5litepod-4")),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.NotFound(
            "GET https://tpu.googleapis.com/v2/projects/p/locations/x/nodes/tpu-a: "
            "Node tpu-a does not exist"
        ),
        Diagnosis(
            "not_found",
            "Not found",
            "The Cloud TPU API does not know this resource (Node tpu-a does not exist).",
            [
                "Check the project id and zone: tpuwizard status lists what exists.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-east5-b",
            accelerator="tpu7x-8",
            slice=parse_accelerator("tpu7x-8"),
            name="tpu-a",
            route="vm",
            backend="compute",
        ),
        gx.NotFound("Instance tpu-a was not found"),
        Diagnosis(
            "not_found",
            "Not found",
            "Compute Engine does not know this resource (Instance tpu-a was not found).",
            [
                "Check the project id and zone: tpuwizard status lists what exists.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.BadRequest("Invalid accelerator type v9-8"),
        Diagnosis(
            "invalid_zone",
            "That zone does not offer this TPU",
            "Invalid accelerator type v9-8",
            [
                phrase("Choose a zone your project can use: {0}.", Choice("zone", "v5litepod-4")),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.BadRequest("Invalid value for runtimeVersion"),
        Diagnosis(
            "invalid",
            "The Cloud TPU API rejected the request",
            "Invalid value for runtimeVersion",
            [
                "Check the values you gave; tpuwizard zones lists valid combinations.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.DeadlineExceeded("Deadline Exceeded"),
        Diagnosis(
            "timeout",
            "It took too long",
            "The operation did not finish in time (Deadline Exceeded).",
            [
                "Run tpuwizard status to see what exists now, then try again.",
                "Anything tpuwizard created is in its ledger and will be cleaned up.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        WaitTimedOut("tpu-a", "CREATING", 1800.0),
        Diagnosis(
            "timeout",
            "It took too long",
            "The operation did not finish in time (tpu-a was still CREATING after 1800 s).",
            [
                "Run tpuwizard status to see what exists now, then try again.",
                "Anything tpuwizard created is in its ledger and will be cleaned up.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        TimeoutError("timed out"),
        Diagnosis(
            "timeout",
            "It took too long",
            "The operation did not finish in time (timed out).",
            [
                "Run tpuwizard status to see what exists now, then try again.",
                "Anything tpuwizard created is in its ledger and will be cleaned up.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.FailedPrecondition("The node is not in a deletable state"),
        Diagnosis(
            "invalid",
            "The Cloud TPU API rejected the request",
            "The node is not in a deletable state",
            [
                "Check the values you gave; tpuwizard zones lists valid combinations.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(),
        gx.InternalServerError("The node is not in a deletable state"),
        Diagnosis(
            "not_deletable",
            "Google does not let it be deleted yet",
            (
                "Right after a create Google refuses deletes for a while (The node "
                "is not in a deletable state)."
            ),
            [
                "Run tpuwizard teardown NAME again in a few minutes.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.InternalServerError("The node is not in a deletable state"),
        Diagnosis(
            "not_deletable",
            "Google does not let it be deleted yet",
            (
                "Right after a create Google refuses deletes for a while (The node "
                "is not in a deletable state)."
            ),
            [
                "Run tpuwizard teardown tpu-a again in a few minutes.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        ScriptFailed(1, "sklearn", "scikit-learn"),
        Diagnosis(
            "missing_package",
            "Your script needs the package scikit-learn",
            (
                "Your script stopped on ModuleNotFoundError: no module named "
                "'sklearn'. The worker venv holds the pinned JAX, NumPy and the "
                "packages you add; nothing else."
            ),
            [
                phrase("Add scikit-learn: {0}.", Choice("packages", "scikit-learn")),
                "Or list it in a requirements.txt beside your script: it is installed for you.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        ScriptFailed(1, None, "optax"),
        Diagnosis(
            "missing_package",
            "Your script needs the package optax",
            (
                "Your script stopped on ModuleNotFoundError: no module named "
                "'optax'. The worker venv holds the pinned JAX, NumPy and the "
                "packages you add; nothing else."
            ),
            [
                phrase("Add optax: {0}.", Choice("packages", "optax")),
                "Or list it in a requirements.txt beside your script: it is installed for you.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        PackagesFailed(1, "not_found", "no such package nosuchpkg.", "check its name"),
        Diagnosis(
            "packages_failed",
            "A package asked for does not exist",
            "On worker 1, no such package nosuchpkg. Your script did not run.",
            [
                "Fix: check its name.",
                "Then launch again (or tpuwizard run again on a kept node).",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        PackagesFailed(0, "other", "uv exited 2", "read uv's lines above"),
        Diagnosis(
            "packages_failed",
            "Installing the packages failed",
            "On worker 0, uv exited 2. Your script did not run.",
            [
                "Fix: read uv's lines above.",
                "Then launch again (or tpuwizard run again on a kept node).",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        ScriptFailed(3),
        Diagnosis(
            "script_failed",
            "Your script failed",
            (
                "Your script ran on the TPU and exited with code 3. The node, the "
                "connection and the checks before it were fine: the cause is in "
                "the script."
            ),
            [
                "Its own output above (and its last lines in the summary) shows why.",
                "Fix the script and launch again.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        WorkersStalled([1, 3], "report", ["w1 printed last: step 4", "w3: no output"]),
        Diagnosis(
            "workers_stalled",
            "The script stalled",
            (
                "The stall guard ended the run: w1, w3 printed nothing and its "
                "processes used no CPU time for the stall timeout, so the slice "
                "could only wait (and bill) until its deadline. A launch deletes "
                "its node; a kept node is kept."
            ),
            [
                "w1 printed last: step 4",
                "w3: no output",
                "Every frame of each stack is at the end of the run's output.txt.",
                "A stack in jax.distributed.initialize() waits for a worker that never joined.",
                QUIET_ON_PURPOSE,
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="my-proj",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        WorkersStalled([0], "report", ["w0 printed nothing"], StalledIn.VERIFIER),
        Diagnosis(
            "workers_stalled",
            "The verifier stalled",
            (
                "The verifier stalled before your script started: the stall guard ended the "
                "run: w0 printed nothing and its processes used no CPU time for the stall "
                "timeout, so the slice could only wait (and bill) until its deadline. A "
                "launch deletes its node; a kept node is kept."
            ),
            [
                "w0 printed nothing",
                "Every frame of each stack is in the run's verifier-stall.txt.",
                (
                    "The verifier is tpuwizard's own short program: a hang there is the "
                    "worker's (a stuck import, a dead host) or the join's, not your script's. "
                    "Launch again for new VMs."
                ),
                "A stack in jax.distributed.initialize() waits for a worker that never joined.",
                QUIET_ON_PURPOSE,
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        SliceIncomplete([2], [0, 1, 3], 300.0),
        Diagnosis(
            "slice_incomplete",
            "Not every host started the program",
            (
                "w2 never joined the slice; w0, w1, w3 waited 300 s in "
                "jax.distributed.initialize() and gave up. Every VM of a "
                "multi-host slice must run the same program at the same time, or "
                "the others wait for ever."
            ),
            [
                "Read w2's lines above for why its program stopped or never started.",
                (
                    "By hand: gcloud compute tpus tpu-vm ssh NAME --worker=all "
                    "--command ... (never a single worker)."
                ),
                (
                    "If a worker's TPU is held by another process, stop that process "
                    "or recreate the slice."
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        SliceIncomplete([0, 1], [], 60.0),
        Diagnosis(
            "slice_incomplete",
            "Not every host started the program",
            (
                "w0, w1 never joined the slice; no worker waited 60 s in "
                "jax.distributed.initialize() and gave up. Every VM of a "
                "multi-host slice must run the same program at the same time, or "
                "the others wait for ever."
            ),
            [
                "Read w0, w1's lines above for why its program stopped or never started.",
                (
                    "By hand: gcloud compute tpus tpu-vm ssh NAME --worker=all "
                    "--command ... (never a single worker)."
                ),
                (
                    "If a worker's TPU is held by another process, stop that process "
                    "or recreate the slice."
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        VersionMismatch("w0 runs jax 0.4.35, w1 runs jax 0.4.30"),
        Diagnosis(
            "version_mismatch",
            "The workers run different JAX versions",
            "w0 runs jax 0.4.35, w1 runs jax 0.4.30",
            [
                (
                    "Reinstall the same jax[tpu] on every worker (tpuwizard bootstraps "
                    "all of them with one command), or recreate the slice."
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        Unreachable("tpu-a", [0, 1], "internal addresses only"),
        Diagnosis(
            "unreachable_workers",
            "This computer cannot reach the TPU VMs",
            (
                "The node is READY but tpu-a: no reachable address for w0, w1 "
                "(internal addresses only). Google gives workers external "
                "addresses only when the create asks for them; an internal address "
                "answers only inside the project's network."
            ),
            [
                phrase("Launch again with external addresses ({0}).", Choice("external_ips", "on")),
                phrase("Or reach them through IAP ({0}).", Choice("external_ips", "off")),
                "Or run tpuwizard from a VM in the same VPC, or over a VPN into it.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        NodeGone("tpu-a", None, "running the script", "404"),
        Diagnosis(
            "node_gone",
            "The TPU VM went away",
            (
                "A command on tpu-a failed running the script, because tpu-a no "
                "longer exists (404). It was deleted: by its watchdog at its "
                "deadline or idle time, by tpuwizard down or a teardown elsewhere, "
                "or in the Cloud Console or gcloud."
            ),
            [
                "Run tpuwizard status to see what still exists.",
                "Launch again for a new node (tpuwizard up for a new kept one).",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        NodeGone("tpu-a", "DELETING", "copying the folder", "ssh: connection closed"),
        Diagnosis(
            "node_gone",
            "The TPU VM went away",
            (
                "A command on tpu-a failed copying the folder, because tpu-a is "
                "DELETING (ssh: connection closed). It was deleted: by its "
                "watchdog at its deadline or idle time, by tpuwizard down or a "
                "teardown elsewhere, or in the Cloud Console or gcloud."
            ),
            [
                "Run tpuwizard status to see what still exists.",
                "Launch again for a new node (tpuwizard up for a new kept one).",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        NodeGone("tpu-a", "STOPPED", "running the script", "ssh: timeout"),
        Diagnosis(
            "node_gone",
            "The TPU VM is STOPPED",
            (
                "A command on tpu-a failed running the script, because tpu-a is "
                "STOPPED (ssh: timeout). Someone stopped it, or Google is "
                "repairing or restarting it."
            ),
            [
                "Run tpuwizard status to see what still exists.",
                "Launch again for a new node (tpuwizard up for a new kept one).",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        RemoteError("@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@"),
        Diagnosis(
            "host_key_changed",
            "A TPU VM's SSH host key changed",
            (
                "Google recycles external addresses between VMs, so a new VM can "
                "answer on an address an old one used, with a new host key. "
                "tpuwizard files host keys per node and worker; this one came from "
                "a file keyed by address alone."
            ),
            [
                "Remove the old entry: ssh-keygen -R ADDRESS -f ~/.ssh/known_hosts",
                "Then launch again.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        RemoteError("user@10.0.0.2: Permission denied (publickey)."),
        Diagnosis(
            "oslogin",
            "SSH refused tpuwizard's key",
            (
                "When OS Login is enabled (enable-oslogin in project or node "
                "metadata), the VM ignores metadata ssh-keys, which is how "
                "tpuwizard installs its key."
            ),
            [
                phrase(
                    "Use gcloud's SSH, which handles OS Login ({0}).", Choice("transport", "gcloud")
                ),
                (
                    "Or check: gcloud compute project-info describe "
                    "--format='value(commonInstanceMetadata.items.enable-oslogin)'"
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        HeartbeatFailed("tpu-k", "ssh: timed out"),
        Diagnosis(
            "heartbeat",
            "The heartbeat did not reach the kept node",
            (
                "tpu-k is READY, but the heartbeat (touching a file on its worker "
                "0) failed: ssh: timed out. Its watchdog deletes it once its idle "
                "time passes without one."
            ),
            [
                (
                    "The next tpuwizard run, watch or ssh sends one again; the open "
                    "wizard sends them too."
                ),
                "tpuwizard status shows when it deletes itself.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        HeartbeatFailed("tpu-k", "user@10.0.0.2: Permission denied (publickey)."),
        Diagnosis(
            "oslogin",
            "SSH refused tpuwizard's key",
            (
                "When OS Login is enabled (enable-oslogin in project or node "
                "metadata), the VM ignores metadata ssh-keys, which is how "
                "tpuwizard installs its key."
            ),
            [
                phrase(
                    "Use gcloud's SSH, which handles OS Login ({0}).", Choice("transport", "gcloud")
                ),
                (
                    "Or check: gcloud compute project-info describe "
                    "--format='value(commonInstanceMetadata.items.enable-oslogin)'"
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        RemoteError("ssh exited 255 on worker 1"),
        Diagnosis(
            "remote",
            "A command on the TPU VM failed",
            "ssh exited 255 on worker 1",
            [
                phrase(
                    "If SSH is refused, the project may enforce OS Login: use gcloud's SSH ({0}).",
                    Choice("transport", "gcloud"),
                ),
                "The lines above show the worker's own output.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.ServiceUnavailable("The service is currently unavailable."),
        Diagnosis(
            "unavailable",
            "The Cloud TPU API is busy or unavailable",
            (
                "It kept answering ServiceUnavailable after several retries (The "
                "service is currently unavailable.)."
            ),
            [
                "Wait a few minutes and try again.",
                "Check https://status.cloud.google.com for an outage.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-east5-b",
            accelerator="tpu7x-8",
            slice=parse_accelerator("tpu7x-8"),
            name="tpu-a",
            route="vm",
            backend="compute",
        ),
        gx.TooManyRequests("Try later"),
        Diagnosis(
            "unavailable",
            "Compute Engine is busy or unavailable",
            "It kept answering TooManyRequests after several retries (Try later).",
            [
                "Wait a few minutes and try again.",
                "Check https://status.cloud.google.com for an outage.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        OSError(errno.ENOSPC, "No space left on device", "/home/u/.tpuwizard/runs/r1/out"),
        Diagnosis(
            "local_disk",
            "A file on this computer could not be written or read",
            "No space left on device (/home/u/.tpuwizard/runs/r1/out).",
            [
                phrase(
                    (
                        "Check that the folder exists, is a folder, is writable and the "
                        "disk has room (TPUWIZARD_HOME, or {0})."
                    ),
                    Choice("run_dir", ""),
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        OSError(errno.EACCES, "Permission denied"),
        Diagnosis(
            "local_disk",
            "A file on this computer could not be written or read",
            "Permission denied.",
            [
                phrase(
                    (
                        "Check that the folder exists, is a folder, is writable and the "
                        "disk has room (TPUWIZARD_HOME, or {0})."
                    ),
                    Choice("run_dir", ""),
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        NotASmallFile("/home/u/.tpuwizard/ledger.jsonl", "a FIFO, not a regular file"),
        Diagnosis(
            "local_disk",
            "A file on this computer could not be read",
            "/home/u/.tpuwizard/ledger.jsonl: a FIFO, not a regular file.",
            [
                (
                    "Move /home/u/.tpuwizard/ledger.jsonl aside (tpuwizard reads only "
                    "a regular file there), then run this again."
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        LedgerUnwritable(
            "/home/u/.tpuwizard/ledger.jsonl", OSError(errno.EROFS, "Read-only file system")
        ),
        Diagnosis(
            "ledger_unwritable",
            "Nothing was created: tpuwizard's ledger could not be written",
            (
                "The ledger /home/u/.tpuwizard/ledger.jsonl refused the record "
                "that comes before every create (Read-only file system). What is "
                "created without it could be lost after a crash, with no record to "
                "find it by, so nothing was created."
            ),
            [
                (
                    "Free some space on that disk, or make it writable (TPUWIZARD_HOME "
                    "chooses where tpuwizard keeps its state), then run again."
                ),
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        ConnectionError("Connection reset by peer"),
        Diagnosis(
            "unreachable",
            "Cannot reach the Cloud TPU API",
            "The network call failed (ConnectionError: Connection reset by peer).",
            [
                "Check your internet connection, VPN or proxy settings.",
                "Then try again: tpuwizard status shows what exists once the network is back.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-east5-b",
            accelerator="tpu7x-8",
            slice=parse_accelerator("tpu7x-8"),
            name="tpu-a",
            route="vm",
            backend="compute",
        ),
        requests.ConnectionError("Max retries exceeded"),
        Diagnosis(
            "unreachable",
            "Cannot reach Compute Engine",
            "The network call failed (ConnectionError: Max retries exceeded).",
            [
                "Check your internet connection, VPN or proxy settings.",
                "Then try again: tpuwizard status shows what exists once the network is back.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        OSError(errno.ECONNREFUSED, "Connection refused"),
        Diagnosis(
            "unreachable",
            "Cannot reach the Cloud TPU API",
            "The network call failed (ConnectionRefusedError: [Errno 111] Connection refused).",
            [
                "Check your internet connection, VPN or proxy settings.",
                "Then try again: tpuwizard status shows what exists once the network is back.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        gx.InternalServerError("Internal error"),
        Diagnosis(
            "api_error",
            "The Cloud TPU API returned an error",
            "InternalServerError: Internal error",
            [
                "Try again; if it persists, run tpuwizard status and check the Cloud Console.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-east5-b",
            accelerator="tpu7x-8",
            slice=parse_accelerator("tpu7x-8"),
            name="tpu-a",
            route="vm",
            backend="compute",
        ),
        gx.InternalServerError("Internal error"),
        Diagnosis(
            "api_error",
            "Compute Engine returned an error",
            "InternalServerError: Internal error",
            [
                "Try again; if it persists, run tpuwizard status and check the Cloud Console.",
            ],
            [],
        ),
    ),
    (
        None,
        Context(
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            account="me@example.com",
            name="tpu-a",
            route="vm",
        ),
        ValueError("boom"),
        Diagnosis(
            "unexpected",
            "Something unexpected went wrong",
            "ValueError: boom",
            [
                "Run tpuwizard status to see what exists, and report this problem.",
            ],
            [],
        ),
    ),
]


@pytest.mark.parametrize(("configured", "ctx", "err", "expected"), CASES)
def test_each_failure_gets_exactly_its_diagnosis(
    monkeypatch: pytest.MonkeyPatch,
    configured: str | None,
    ctx: Context,
    err: BaseException,
    expected: Diagnosis,
) -> None:
    """``configured``: the account gcloud is signed in as (named where the context has none)."""
    monkeypatch.setattr(failure, "_configured_account", lambda: configured)
    assert failure.diagnose(err, ctx) == expected
