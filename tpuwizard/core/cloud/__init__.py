"""The Cloud TPU API: TpuCloud (the only caller), diagnoses, gcloud configuration, zone surveys."""
