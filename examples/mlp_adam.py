"""A two-layer MLP trained with Adam written by hand: plan it with

    tpuwizard fit --program examples/mlp_adam.py
    tpuwizard fit --program examples/mlp_adam.py --function tpuwizard_plan_sharded

``tpuwizard_plan(mesh)`` returns the training step and its arguments exactly as you would call
it, but as ``jax.ShapeDtypeStruct``s: shapes and shardings only, so nothing is allocated.
The parameters are replicated on every device and the batch is split over the "data" axis
(plain data parallelism); ``tpuwizard_plan_sharded`` also splits the parameters and Adam's
moments over "data" (each device keeps a slice of the state, as FSDP/ZeRO do).
"""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

D_IN, D_HIDDEN, D_OUT = 1024, 4096, 1024
BATCH = 256
LEARNING_RATE, BETA1, BETA2, EPS = 1e-3, 0.9, 0.999, 1e-8


def param_shapes():
    return {
        "w1": (D_IN, D_HIDDEN),
        "b1": (D_HIDDEN,),
        "w2": (D_HIDDEN, D_OUT),
        "b2": (D_OUT,),
    }


def loss_fn(params, x, y):
    hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
    prediction = hidden @ params["w2"] + params["b2"]
    return jnp.mean((prediction - y) ** 2)


def adam_update(params, opt_state, grads):
    count = opt_state["count"] + 1
    m = jax.tree.map(lambda m, g: BETA1 * m + (1 - BETA1) * g, opt_state["m"], grads)
    v = jax.tree.map(lambda v, g: BETA2 * v + (1 - BETA2) * g * g, opt_state["v"], grads)
    m_hat_scale = 1 / (1 - BETA1 ** count.astype(jnp.float32))
    v_hat_scale = 1 / (1 - BETA2 ** count.astype(jnp.float32))
    new_params = jax.tree.map(
        lambda p, m, v: p - LEARNING_RATE * (m * m_hat_scale) / (jnp.sqrt(v * v_hat_scale) + EPS),
        params,
        m,
        v,
    )
    return new_params, {"m": m, "v": v, "count": count}


def train_step(params, opt_state, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch["x"], batch["y"])
    params, opt_state = adam_update(params, opt_state, grads)
    return params, opt_state, loss


def _plan(mesh, param_spec):
    def sds(shape, spec, dtype=jnp.float32):
        return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec))

    params = {name: sds(shape, param_spec(shape)) for name, shape in param_shapes().items()}
    opt_state = {
        "m": dict(params),
        "v": dict(params),
        "count": sds((), P(), jnp.int32),
    }
    batch = {"x": sds((BATCH, D_IN), P("data")), "y": sds((BATCH, D_OUT), P("data"))}
    return train_step, (params, opt_state, batch)


def tpuwizard_plan(mesh):
    """Data parallel: parameters and Adam state replicated, the batch split over "data"."""
    return _plan(mesh, lambda shape: P())


def tpuwizard_plan_sharded(mesh):
    """Parameters and Adam state split over "data" on their first dimension."""
    return _plan(mesh, lambda shape: P("data", *[None] * (len(shape) - 1)))
