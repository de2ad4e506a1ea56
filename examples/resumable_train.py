"""A small JAX training loop that survives preemption: copy it and put your model in.

Run it on a spot TPU that tpuwizard brings back after a preemption:

    tpuwizard launch --route spot --script examples/resumable_train.py \\
        --checkpoints checkpoints -- --steps 500

Every ``--save-every`` steps it writes its whole state (parameters and the step number) into a
step folder, ``checkpoints/step_000120/state.npz``, and writes ``COMMITTED`` in that folder last,
so a folder without it is never read back (it may be half-written). tpuwizard copies committed
folders home while the script runs; after a preemption it puts the latest one back into the
same folder on the new TPU and starts the script again with ``TPUWIZARD_RESUME=1`` and
``TPUWIZARD_CHECKPOINTS`` (that folder) in its environment.

Each step's random numbers come from the step number (``fold_in(key, step)``), not from a key
carried along, so a resumed run computes exactly the steps an uninterrupted one would: its final
state is the same, bit for bit. Only numpy is needed to save, so it runs offline too.
"""

import argparse
import hashlib
import os
import shutil
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

D_IN, D_HIDDEN, BATCH = 16, 32, 64
LEARNING_RATE = 0.05
KEEP_SETS = 3  # older step folders are deleted, as orbax-checkpoint does


def initial_params(seed):
    k1, k2 = jax.random.split(jax.random.PRNGKey(seed))
    return {
        "w1": jax.random.normal(k1, (D_IN, D_HIDDEN)) * 0.1,
        "w2": jax.random.normal(k2, (D_HIDDEN, 1)) * 0.1,
    }


def loss_fn(params, x, y):
    hidden = jnp.tanh(x @ params["w1"])
    return jnp.mean((hidden @ params["w2"] - y) ** 2)


@jax.jit
def train_step(params, key):
    # The batch is drawn from this step's own key: the same step always sees the same data.
    kx, _ = jax.random.split(key)
    x = jax.random.normal(kx, (BATCH, D_IN))
    y = jnp.sin(x.sum(axis=1, keepdims=True))
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params = jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return params, loss


def committed_steps(folder):
    """The step folders whose COMMITTED marker is there, oldest first."""
    if not folder.is_dir():
        return []
    found = []
    for entry in folder.iterdir():
        if entry.name.startswith("step_") and (entry / "COMMITTED").is_file():
            found.append((int(entry.name.removeprefix("step_")), entry))
    return sorted(found)


def save(folder, step, params):
    """Write the state, then COMMITTED: the marker says the folder is whole."""
    target = folder / f"step_{step:06d}"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    arrays = {name: np.asarray(value) for name, value in params.items()}
    with open(target / "state.npz", "wb") as out:
        np.savez(out, step=np.int64(step), **arrays)
        out.flush()
        os.fsync(out.fileno())
    (target / "COMMITTED").write_text(f"{step}\n")
    for _, old in committed_steps(folder)[:-KEEP_SETS]:
        shutil.rmtree(old, ignore_errors=True)


def restore(folder):
    """The latest committed state: (step, params), or None when there is none."""
    steps = committed_steps(folder)
    if not steps:
        return None
    _, path = steps[-1]
    with np.load(path / "state.npz") as data:
        params = {name: jnp.asarray(data[name]) for name in data.files if name != "step"}
        return int(data["step"]), params


def state_sha256(params):
    digest = hashlib.sha256()
    for name in sorted(params):
        digest.update(name.encode())
        digest.update(np.asarray(params[name]).tobytes())
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--save-every", type=int, default=10, help="steps between checkpoints")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--step-seconds", type=float, default=0.0, help="pause per step (demo)")
    args = parser.parse_args()

    folder = Path(os.environ.get("TPUWIZARD_CHECKPOINTS", "checkpoints"))
    step, params = 0, initial_params(args.seed)
    if os.environ.get("TPUWIZARD_RESUME") == "1":
        restored = restore(folder)
        if restored is None:
            print("resume: no committed checkpoint, starting from step 0", flush=True)
        else:
            step, params = restored
            print(f"resume: from step {step}", flush=True)
    base_key = jax.random.PRNGKey(args.seed + 1)
    while step < args.steps:
        params, loss = train_step(params, jax.random.fold_in(base_key, step))
        step += 1
        print(f"step {step} loss {float(loss):.6f}", flush=True)
        if step % args.save_every == 0 or step == args.steps:
            save(folder, step, params)
        if args.step_seconds:
            time.sleep(args.step_seconds)
    print(f"final step {step} state sha256 {state_sha256(params)}", flush=True)


if __name__ == "__main__":
    main()
