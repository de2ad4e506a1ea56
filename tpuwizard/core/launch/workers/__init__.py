"""Work on a node's workers: jobs on every VM, the script's pass (copy, run, fetch), multi-host
joins, packages, reruns, the watchdog and its heartbeats."""
