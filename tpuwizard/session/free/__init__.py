"""The free routes through the session: Kaggle (kaggle.py, its records and its weekly quota) and
Colab (colab.py, its records), each practice or real, with its own ledger and stops."""
