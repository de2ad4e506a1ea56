"""tpuwizard: run a JAX experiment on a Cloud TPU, prove it ran there, and leave nothing billing."""

__version__ = "0.1.0"
