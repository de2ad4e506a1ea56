"""A training loop that saves the plainest way: straight into $TPUWIZARD_CHECKPOINTS, no step
folders. Every --save-every steps it removes COMMITTED, overwrites state.npy and meta.json, and
writes COMMITTED last; with TPUWIZARD_RESUME=1 and COMMITTED there, it starts from that state.
Each step's numbers come from the step alone, so a resumed run ends bit for bit where an
uninterrupted one does. It also leaves saved/<step> beside the folder: the moment the
sandbox's preempt_on fault waits for (tests/integration/test_spot_resume_flat.py)."""

import argparse
import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=12)
parser.add_argument("--save-every", type=int, default=2)
parser.add_argument("--step-seconds", type=float, default=0.0)
args = parser.parse_args()

folder = Path(os.environ["TPUWIZARD_CHECKPOINTS"])
folder.mkdir(parents=True, exist_ok=True)
state, start = np.zeros(16, dtype=np.float64), 0
if os.environ.get("TPUWIZARD_RESUME") == "1" and (folder / "COMMITTED").is_file():
    state = np.load(folder / "state.npy")
    start = json.loads((folder / "meta.json").read_text())["step"]
    print(f"resume: from step {start}", flush=True)
for step in range(start + 1, args.steps + 1):
    rng = np.random.default_rng(step)
    state = np.tanh(state + rng.standard_normal(16))
    print(f"step {step} mean {state.mean():.6f}", flush=True)
    if step % args.save_every == 0:
        (folder / "COMMITTED").unlink(missing_ok=True)
        np.save(folder / "state.npy", state)
        (folder / "meta.json").write_text(json.dumps({"step": step}))
        (folder / "COMMITTED").write_text(f"{step}\n")
        Path("saved").mkdir(exist_ok=True)
        Path("saved", str(step)).write_text("")
        print(f"checkpoint step {step} committed", flush=True)
    time.sleep(args.step_seconds)
print(f"final step {args.steps} state sha256 {hashlib.sha256(state.tobytes()).hexdigest()}")
