"""Kaggle's stand-in: its API on 127.0.0.1 (server.py) and the kernels it runs (sessions.py)."""
