"""Clouds: the ``Cloud`` protocol the lifecycle talks to (protocol.py) and TpuCloud, its TPU API
implementation and the only caller of Google; diagnoses, gcloud configuration, zone surveys."""
