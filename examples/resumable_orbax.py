"""The loop of resumable_train.py, saved with orbax-checkpoint: copy it and put your model in.

Run it on a spot TPU that tpuwizard brings back after a preemption (orbax-checkpoint is one of
the course's packages: ``--with orbax-checkpoint``, or F2 on the wizard's Review):

    tpuwizard launch --route spot --with orbax-checkpoint \\
        --script examples/resumable_orbax.py --checkpoints checkpoints -- --steps 500

Every ``--save-every`` steps orbax's ``CheckpointManager`` writes the whole state (parameters
and the step number) into ``checkpoints/<step>/``. It writes a step into a temporary folder,
``<step>.orbax-checkpoint-tmp-<n>``, and renames it once it is whole: tpuwizard copies only
renamed step folders home, so a half-written step is never put back. It keeps the last
``KEEP_STEPS`` and deletes older ones (a step deleted while it is being copied is dropped, and
the one before stays the resume point). After a preemption tpuwizard puts the latest step back
into the same folder on the new TPU and starts the script again with ``TPUWIZARD_RESUME=1`` and
``TPUWIZARD_CHECKPOINTS`` (that folder) in its environment.

Each step's random numbers come from the step number (``fold_in(key, step)``), as in
resumable_train.py, so a resumed run ends bit for bit where an uninterrupted one does, and the
two examples print the same lines for the same arguments.
"""

import argparse
import hashlib
import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp

D_IN, D_HIDDEN, BATCH = 16, 32, 64
LEARNING_RATE = 0.05
KEEP_STEPS = 3  # orbax deletes older step folders


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


def state_sha256(params):
    digest = hashlib.sha256()
    for name in sorted(params):
        digest.update(name.encode())
        digest.update(np.asarray(params[name]).tobytes())
    return digest.hexdigest()


def manager(folder):
    """orbax wants an absolute path; TPUWIZARD_CHECKPOINTS is relative to the script's folder."""
    options = ocp.CheckpointManagerOptions(max_to_keep=KEEP_STEPS, create=True)
    return ocp.CheckpointManager(folder.resolve(), options=options)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--save-every", type=int, default=10, help="steps between checkpoints")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--step-seconds", type=float, default=0.0, help="pause per step (demo)")
    args = parser.parse_args()

    checkpoints = manager(Path(os.environ.get("TPUWIZARD_CHECKPOINTS", "checkpoints")))
    step, params = 0, initial_params(args.seed)
    if os.environ.get("TPUWIZARD_RESUME") == "1":
        latest = checkpoints.latest_step()  # renamed (finalised) steps only
        if latest is None:
            print("resume: no finished checkpoint, starting from step 0", flush=True)
        else:
            like = {"params": params, "step": 0}
            restored = checkpoints.restore(latest, args=ocp.args.StandardRestore(like))
            step, params = int(restored["step"]), restored["params"]
            print(f"resume: from step {step}", flush=True)
    base_key = jax.random.PRNGKey(args.seed + 1)
    while step < args.steps:
        params, loss = train_step(params, jax.random.fold_in(base_key, step))
        step += 1
        print(f"step {step} loss {float(loss):.6f}", flush=True)
        if step % args.save_every == 0 or step == args.steps:
            state = {"params": params, "step": step}
            checkpoints.save(step, args=ocp.args.StandardSave(state))
        if args.step_seconds:
            time.sleep(args.step_seconds)
    checkpoints.wait_until_finished()  # the last save is whole before the script ends
    checkpoints.close()
    print(f"final step {step} state sha256 {state_sha256(params)}", flush=True)


if __name__ == "__main__":
    main()
