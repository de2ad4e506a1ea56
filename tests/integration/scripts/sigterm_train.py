"""A loop with the spot guide's SIGTERM handler (docs/guides/spot-resume.md): on SIGTERM it saves
the step it is at into $TPUWIZARD_CHECKPOINTS and exits 0. It saves a committed step folder every
--save-every steps too, and with TPUWIZARD_RESUME=1 starts from the latest one. Its state is
integers, so a resumed run ends bit for bit where an uninterrupted one does, on any numpy."""

import argparse
import hashlib
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np

MULTIPLIER = np.uint64(6364136223846793005)


def save(folder, step, state):
    target = folder / f"step_{step:06d}"
    target.mkdir(parents=True, exist_ok=True)
    np.save(target / "state.npy", state)
    (target / "COMMITTED").write_text(f"{step}\n")


def restore(folder):
    steps = sorted(p for p in folder.glob("step_*") if (p / "COMMITTED").is_file())
    if not steps:
        return None
    return int(steps[-1].name.removeprefix("step_")), np.load(steps[-1] / "state.npy")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--save-every", type=int, default=5)
    parser.add_argument("--step-seconds", type=float, default=0.0)
    args = parser.parse_args()
    folder = Path(os.environ.get("TPUWIZARD_CHECKPOINTS", "ckpt"))
    now = (0, np.arange(8, dtype=np.uint64))  # (step, state), replaced whole: one assignment
    if os.environ.get("TPUWIZARD_RESUME") == "1" and (restored := restore(folder)) is not None:
        now = restored
        print(f"resume: from step {now[0]}", flush=True)

    def save_and_exit(signum, frame):
        step, state = now
        save(folder, step, state)
        print(f"SIGTERM: saved step {step}, exiting 0", flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, save_and_exit)
    while now[0] < args.steps:
        step, state = now
        now = (step + 1, state * MULTIPLIER + np.uint64(step + 1))  # wraps mod 2**64
        print(f"step {now[0]}", flush=True)
        if now[0] % args.save_every == 0:
            save(folder, *now)
        time.sleep(args.step_seconds)
    step, state = now
    print(f"final step {step} state sha256 {hashlib.sha256(state.tobytes()).hexdigest()}")


if __name__ == "__main__":
    main()
