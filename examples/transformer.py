"""A small decoder-only transformer (embedding, causal attention, MLP, next-token loss) trained
with Adam written by hand, data parallel over the "data" axis:

    tpuwizard fit --program examples/transformer.py
    tpuwizard fit --program examples/transformer.py --mesh data,model=2

Sizes are in the constants below; change them and plan again. With a "model" axis in the mesh
the attention heads and MLP hidden units are split over it (tensor parallelism).
"""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

VOCAB, D_MODEL, HEADS, D_MLP, LAYERS = 8192, 512, 8, 2048, 4
SEQ, BATCH = 256, 32
LEARNING_RATE, BETA1, BETA2, EPS = 3e-4, 0.9, 0.95, 1e-8


def layer_shapes():
    """Every layer's weights stacked on a leading LAYERS axis, so one jax.lax.scan runs them
    all and XLA compiles one layer instead of LAYERS copies."""
    return {
        "qkv": (LAYERS, D_MODEL, 3 * D_MODEL),
        "out": (LAYERS, D_MODEL, D_MODEL),
        "up": (LAYERS, D_MODEL, D_MLP),
        "down": (LAYERS, D_MLP, D_MODEL),
        "norm1": (LAYERS, D_MODEL),
        "norm2": (LAYERS, D_MODEL),
    }


def rms_norm(x, scale):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * scale


def attention(x, layer):
    batch, seq, _ = x.shape
    q, k, v = jnp.split(x @ layer["qkv"], 3, axis=-1)
    heads = lambda t: t.reshape(batch, seq, HEADS, D_MODEL // HEADS)  # noqa: E731
    scores = jnp.einsum("bqhd,bkhd->bhqk", heads(q), heads(k)) / jnp.sqrt(D_MODEL / HEADS)
    causal = jnp.tril(jnp.ones((seq, seq), bool))
    weights = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    mixed = jnp.einsum("bhqk,bkhd->bqhd", weights, heads(v)).reshape(batch, seq, D_MODEL)
    return mixed @ layer["out"]


def loss_fn(params, tokens):
    x = params["embed"][tokens[:, :-1]]

    def block(x, layer):
        x = x + attention(rms_norm(x, layer["norm1"]), layer)
        x = x + jax.nn.gelu(rms_norm(x, layer["norm2"]) @ layer["up"]) @ layer["down"]
        return x, None

    x, _ = jax.lax.scan(block, x, params["layers"])
    logits = x @ params["embed"].T
    targets = tokens[:, 1:]
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(log_probs, targets[..., None], axis=-1))


def train_step(params, opt_state, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    count = opt_state["count"] + 1
    m = jax.tree.map(lambda m, g: BETA1 * m + (1 - BETA1) * g, opt_state["m"], grads)
    v = jax.tree.map(lambda v, g: BETA2 * v + (1 - BETA2) * g * g, opt_state["v"], grads)
    scale_m = 1 / (1 - BETA1 ** count.astype(jnp.float32))
    scale_v = 1 / (1 - BETA2 ** count.astype(jnp.float32))
    params = jax.tree.map(
        lambda p, m, v: p - LEARNING_RATE * m * scale_m / (jnp.sqrt(v * scale_v) + EPS),
        params,
        m,
        v,
    )
    return params, {"m": m, "v": v, "count": count}, loss


def tpuwizard_plan(mesh):
    model = "model" if "model" in mesh.axis_names else None

    def sds(shape, spec, dtype=jnp.float32):
        return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec))

    column = {"qkv", "up"}  # split their output features over "model"; "out", "down" their input
    layer_specs = {
        name: P(None, None, model)
        if name in column
        else P(None, model, None)
        if len(shape) == 3
        else P()
        for name, shape in layer_shapes().items()
    }
    params = {
        "embed": sds((VOCAB, D_MODEL), P()),
        "layers": {name: sds(shape, layer_specs[name]) for name, shape in layer_shapes().items()},
    }
    opt_state = {"m": params, "v": params, "count": sds((), P(), jnp.int32)}
    tokens = sds((BATCH, SEQ + 1), P("data"), jnp.int32)
    # Donating the parameters and optimizer state lets XLA update them in place.
    return jax.jit(train_step, donate_argnums=(0, 1)), (params, opt_state, tokens)
