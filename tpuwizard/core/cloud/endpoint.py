"""Where the TPU API is: Google's address, and the variables that point tpuwizard elsewhere.

Apart from the resource types so that deciding practice or real (session/practice.py) imports
nothing else of the cloud package.
"""

ENDPOINT_ENV = "TPUWIZARD_TPU_ENDPOINT"
# A static bearer token for another endpoint (the sandbox requires its own); never logged.
TOKEN_ENV = "TPUWIZARD_SANDBOX_TOKEN"
GOOGLE_ENDPOINT = "https://tpu.googleapis.com"
