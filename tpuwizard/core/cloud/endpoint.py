"""Where Google's APIs are: Google's addresses, and the variables that point tpuwizard elsewhere.

Apart from the resource types so that deciding practice or real (session/practice/sandbox.py)
imports nothing else of the cloud package.
"""

import os
import re

ENDPOINT_ENV = "TPUWIZARD_TPU_ENDPOINT"
# A static bearer token for another endpoint (the sandbox requires its own); never logged.
TOKEN_ENV = "TPUWIZARD_SANDBOX_TOKEN"
GOOGLE_ENDPOINT = "https://tpu.googleapis.com"
# Compute Engine: its own variable, else the TPU endpoint when that is set (the sandbox serves
# both APIs on one port), else Google's. Its REST paths start /compute/v1/ under the host.
COMPUTE_ENDPOINT_ENV = "TPUWIZARD_COMPUTE_ENDPOINT"
GOOGLE_COMPUTE_ENDPOINT = "https://compute.googleapis.com"
GOOGLE_ENDPOINTS = (GOOGLE_ENDPOINT, GOOGLE_COMPUTE_ENDPOINT)
# The REST paths' own prefix: an endpoint written the way gcloud's override is
# (http://host:port/compute/v1/) is the same host for the client, which adds the prefix.
_PATH_PREFIX = re.compile(r"/compute/v1/?$")


def compute_endpoint(endpoint: str | None = None) -> str:
    """Where Compute Engine is: ``endpoint``, else the variables, else Google's."""
    chosen = (
        endpoint
        or os.environ.get(COMPUTE_ENDPOINT_ENV)
        or os.environ.get(ENDPOINT_ENV)
        or GOOGLE_COMPUTE_ENDPOINT
    )
    return _PATH_PREFIX.sub("", chosen.rstrip("/") + "/").rstrip("/")
