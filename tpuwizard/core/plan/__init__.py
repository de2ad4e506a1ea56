"""Planning before any cloud call: the TPU catalog, state fit, routes and cost estimates."""
