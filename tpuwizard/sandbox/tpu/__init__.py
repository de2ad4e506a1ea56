"""The Cloud TPU API's stand-in: nodes, queued resources, their long-running operations, and the
methods Google's own gcloud calls beside tpuwizard's."""
