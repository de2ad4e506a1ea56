"""Practice (``--sandbox``): the sandbox started in this process or attached to (sandbox.py), the
lasting one a kept node needs (lasting.py, its faults and its end), the workers' JAX."""
