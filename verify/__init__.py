"""The standalone verifier, installed as ``tpuwizard_verify``; see tpu_verify.py."""
