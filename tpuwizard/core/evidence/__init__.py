"""Proof of a run: receipts, the shipped verifier, and the Colab/Kaggle notebooks."""
