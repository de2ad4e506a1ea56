# xpk 1.16.0 commands for tpu7x-16: run each line yourself, in order.
# Plan: one slice of tpu7x-16, 8 chips and 2 VM(s) per slice, topology 2x2x2, on-demand, zone us-central1-c.
# Written by tpuwizard export; nothing was created or applied by it.
#
# What bills per hour while no job runs:
#   - 1 TPU node pool of tpu7x-16 (2 VMs of 4 chips each), on-demand, at full size from xpk cluster create until xpk cluster delete: no price known
#     source: tpuwizard's catalog, public cloud price catalog snapshot (skypilot-catalog, date of snapshot unknown), read 2026-11-29; no vm price for tpu7x in the catalog
#   - the GKE cluster's management fee: $0.10/h
#     source: cloud.google.com/kubernetes-engine/pricing: a flat $0.10 per cluster per hour; a $74.40 monthly credit per billing account covers one zonal or Autopilot cluster (read 2026-12-02)
#   - its CPU system pool: 1 x e2-standard-16 (autoscaling may add nodes): $0.54/h
#     source: E2 on-demand rates in us-central1 (16 vCPU x $0.021811 + 64 GB x $0.002923 per hour), typed 2026-12-02 and not confirmed against a page here: check cloud.google.com/compute/vm-instance-pricing; the machine type is xpk 1.16.0's default (xpk/parser/cluster.py, --default-pool-cpu-machine-type)
#   In all: $0.64/h plus what has no price above. Every figure is an estimate; check the pricing pages.
#
# Teardown (run when done, then check nothing is left):
#   xpk workload delete --workload tpuwizard-run --cluster tpuwizard --zone us-central1-c
#   xpk cluster delete --cluster tpuwizard --zone us-central1-c
#   gcloud compute resource-policies delete tpu7x-16-2x2x2-placement-policy --region us-central1  (after the cluster: xpk made it)
#   gcloud container clusters list --zone us-central1-c
#
# tpuwizard no longer guards this run: no ledger record, no deadline of its own, no watchdog and no verified teardown past this hand-over. Nothing here deletes what these commands create; run the teardown lines yourself and list what is left afterwards.
#
# This export wrote three files into export-xpk/: tpuwizard-run-xpk.sh (these commands), tpu_verify.py (the verifier) and tpuwizard_job.sh (the job every VM runs).
# Run these from the folder that holds train.py and export-xpk/: xpk's --script-dir . builds an image of it (xpk 1.16.0).
# Your --max-run of 120 minutes is NOT enforced: xpk has no deadline flag. Delete the workload yourself, or use --to jobset, which sets it as each Job's activeDeadlineSeconds.
# A failed run is restarted whole up to 2 time(s) (--max-restarts).
# Kueue: xpk labels the JobSet with its LocalQueue multislice-queue; the Pods' priority class is medium (xpk default) (--priority: very-low, low, medium, high, very-high).
# TPU7x multi-host: xpk cluster create makes the HIGH_THROUGHPUT workload policy tpu7x-16-2x2x2-placement-policy and passes it to the node pools (--placement-policy); xpk does not delete it (the teardown does).

# 1. The cluster and its TPU node pools (they bill from here on). For a cluster you
#    have already, adapt it instead:
#    xpk cluster adapt --cluster tpuwizard --zone us-central1-c --tpu-type tpu7x-16 --num-slices 1 --on-demand
xpk cluster create --cluster tpuwizard --zone us-central1-c --tpu-type tpu7x-16 --num-slices 1 --on-demand --default-pool-cpu-num-nodes 1

# 2. Write the JobSet to export-xpk/tpuwizard-run-jobset.yaml and read it; nothing is applied.
xpk workload create --cluster tpuwizard --zone us-central1-c --workload tpuwizard-run --tpu-type tpu7x-16 --num-slices 1 --script-dir . --command 'bash export-xpk/tpuwizard_job.sh' --max-restarts 2 --output-manifest-file export-xpk/tpuwizard-run-jobset.yaml --dry-run

# 3. Run it: bootstrap, verifier (its receipt line is in each VM's log), your script.
xpk workload create --cluster tpuwizard --zone us-central1-c --workload tpuwizard-run --tpu-type tpu7x-16 --num-slices 1 --script-dir . --command 'bash export-xpk/tpuwizard_job.sh' --max-restarts 2 --output-manifest-file export-xpk/tpuwizard-run-jobset.yaml
