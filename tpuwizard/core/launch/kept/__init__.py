"""A node kept by ``tpuwizard up``: its settings, runs on it, heartbeats and its run lock."""
