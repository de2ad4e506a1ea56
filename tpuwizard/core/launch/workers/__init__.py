"""Work on a node's workers: jobs on every VM, the script's pass (copy, run through the launcher,
fetch), multi-host joins, packages, reruns, the watchdog and its heartbeats, and the stall guard
that ends a run whose worker went silent."""
