"""A stand-in for Google's ``colab`` program, run as ``python -m tpuwizard.sandbox.colab.cli``:
its commands, its ``exec`` (execution.py) and its state."""
