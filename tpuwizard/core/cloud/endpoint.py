"""Where the TPU API is: Google's address, and the variables that point tpuwizard elsewhere.

Apart from the resource types so that deciding practice or real (session/practice.py) imports
nothing else of the cloud package.
"""

ENDPOINT_ENV = "TPUWIZARD_TPU_ENDPOINT"
# A static bearer token for another endpoint (the sandbox requires its own); never logged.
TOKEN_ENV = "TPUWIZARD_SANDBOX_TOKEN"
GOOGLE_ENDPOINT = "https://tpu.googleapis.com"
# Compute Engine (core/cloud/compute.py): its own variable, else the TPU one (the sandbox serves
# both on one port), else Google's.
COMPUTE_ENDPOINT_ENV = "TPUWIZARD_COMPUTE_ENDPOINT"
GOOGLE_COMPUTE_ENDPOINT = "https://compute.googleapis.com"
