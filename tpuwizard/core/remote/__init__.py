"""Reaching TPU workers: transports (OpenSSH, gcloud, local shell), detached jobs, bootstrap."""
