# xpk 1.16.0 commands for v5p-16: run each line yourself, in order.
# Plan: 2 slices of v5p-16 (Multislice: 2 data-parallel copies), 8 chips and 2 VM(s) per slice, topology 2x2x2, on-demand, zone us-central1-a.
# Written by tpuwizard export; nothing was created or applied by it.
#
# What bills per hour while no job runs:
#   - 2 TPU node pools of v5p-16 (2 VMs of 4 chips each), on-demand, at full size from xpk cluster create until xpk cluster delete (2 x $33.60/h): $67.20/h
#     source: tpuwizard's catalog, public cloud price catalog snapshot (skypilot-catalog, date of snapshot unknown), read 2026-11-29; list price, may differ in this region
#   - the GKE cluster's management fee: $0.10/h
#     source: cloud.google.com/kubernetes-engine/pricing: a flat $0.10 per cluster per hour; a $74.40 monthly credit per billing account covers one zonal or Autopilot cluster (read 2026-12-02)
#   - its CPU system pool: 1 x e2-standard-16 (autoscaling may add nodes): $0.54/h
#     source: E2 on-demand rates in us-central1 (16 vCPU x $0.021811 + 64 GB x $0.002923 per hour), typed 2026-12-02 and not confirmed against a page here: check cloud.google.com/compute/vm-instance-pricing; the machine type is xpk 1.16.0's default (xpk/parser/cluster.py, --default-pool-cpu-machine-type)
#   In all: $67.84/h. Every figure is an estimate; check the pricing pages.
#
# Teardown (run when done, then check nothing is left):
#   xpk workload delete --workload tpuwizard-run --cluster tpuwizard --zone us-central1-a
#   xpk cluster delete --cluster tpuwizard --zone us-central1-a
#   gcloud container clusters list --zone us-central1-a
#
# tpuwizard no longer guards this run: no ledger record, no deadline of its own, no watchdog and no verified teardown past this hand-over. Nothing here deletes what these commands create; run the teardown lines yourself and list what is left afterwards.
#
# This export wrote three files into export-xpk/: tpuwizard-run-xpk.sh (these commands), tpu_verify.py (the verifier) and tpuwizard_job.sh (the job every VM runs).
# Run these from the folder that holds train.py and export-xpk/: xpk's --script-dir . builds an image of it (xpk 1.16.0).
# Your --max-run of 120 minutes is NOT enforced: xpk has no deadline flag. Delete the workload yourself, or use --to jobset, which sets it as each Job's activeDeadlineSeconds.
# A failed run is restarted whole up to 2 time(s) (--max-restarts).
# Kueue: xpk labels the JobSet with its LocalQueue multislice-queue; the Pods' priority class is medium (xpk default) (--priority: very-low, low, medium, high, very-high).

# 1. The cluster and its TPU node pools (they bill from here on). For a cluster you
#    have already, adapt it instead:
#    xpk cluster adapt --cluster tpuwizard --zone us-central1-a --tpu-type v5p-16 --num-slices 2 --on-demand
xpk cluster create --cluster tpuwizard --zone us-central1-a --tpu-type v5p-16 --num-slices 2 --on-demand --default-pool-cpu-num-nodes 1

# 2. Write the JobSet to export-xpk/tpuwizard-run-jobset.yaml and read it; nothing is applied.
xpk workload create --cluster tpuwizard --zone us-central1-a --workload tpuwizard-run --tpu-type v5p-16 --num-slices 2 --script-dir . --command 'bash export-xpk/tpuwizard_job.sh' --max-restarts 2 --output-manifest-file export-xpk/tpuwizard-run-jobset.yaml --dry-run

# 3. Run it: bootstrap, verifier (its receipt line is in each VM's log), your script.
xpk workload create --cluster tpuwizard --zone us-central1-a --workload tpuwizard-run --tpu-type v5p-16 --num-slices 2 --script-dir . --command 'bash export-xpk/tpuwizard_job.sh' --max-restarts 2 --output-manifest-file export-xpk/tpuwizard-run-jobset.yaml
