"""The course's placement model as a training step: an 8x3 prediction with a scalar bias,
X @ w + 1/8, fitted to targets by one step of gradient descent.

    tpuwizard fit --program examples/placement.py --slices v5litepod-1,v6e-1

It is tiny: every slice holds it. It shows what a compile reports for a program whose state is
a few bytes: the TPU still pads each array to its memory tiles.
"""

import jax
import jax.numpy as jnp
import numpy as np

BIAS = np.float32(0.125)


def predict(x, w):
    return x @ w + BIAS


def train_step(w, x, y):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean((predict(x, w) - y) ** 2))(w)
    return w - 0.1 * grad, loss


def tpuwizard_plan(mesh):
    # Real arrays work as well as shapes: with no sharding they are replicated on every device.
    x = np.arange(24, dtype=np.float32).reshape(8, 3) / 8
    w = np.array([0.5, -0.25, 1.0], dtype=np.float32)
    y = x @ w + BIAS
    return train_step, (w, x, y)
