"""Work on a node's workers: jobs on every VM, multi-host joins, packages, reruns, the watchdog."""
