"""A node kept by ``tpuwizard up``: its settings, runs on it, its heartbeat book and run lock."""
