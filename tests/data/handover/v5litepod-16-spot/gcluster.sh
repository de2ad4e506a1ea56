# Cluster Toolkit (gcluster v1.95.0) job for v5litepod-16: run each line yourself, in order.
# Plan: one slice of v5litepod-16, 16 chips and 4 VM(s) per slice, topology 4x4, spot, zone us-central1-a.
# Written by tpuwizard export; nothing was created or applied by it.
#
# What bills per hour while no job runs:
#   - 1 TPU node pool of v5litepod-16 (4 VMs of 4 chips each), spot, at full size from xpk cluster create until xpk cluster delete: $4.77/h
#     source: tpuwizard's catalog, public cloud price catalog snapshot (skypilot-catalog, date of snapshot unknown), read 2026-11-29
#   - the GKE cluster's management fee: $0.10/h
#     source: cloud.google.com/kubernetes-engine/pricing: a flat $0.10 per cluster per hour; a $74.40 monthly credit per billing account covers one zonal or Autopilot cluster (read 2026-12-02)
#   - its CPU system pool: 1 x e2-standard-16 (autoscaling may add nodes): $0.54/h
#     source: E2 on-demand rates in us-central1 (16 vCPU x $0.021811 + 64 GB x $0.002923 per hour), typed 2026-12-02 and not confirmed against a page here: check cloud.google.com/compute/vm-instance-pricing; the machine type is xpk 1.16.0's default (xpk/parser/cluster.py, --default-pool-cpu-machine-type)
#   In all: $5.41/h. Every figure is an estimate; check the pricing pages.
#
# Teardown (run when done, then check nothing is left):
#   gcluster job cancel tpuwizard-run --cluster tpuwizard --location us-central1-a
#   gcluster destroy tpuwizard  (if gcluster deploy made the cluster as deployment tpuwizard; run it where you deployed)
#   gcloud container clusters list --location us-central1-a
#
# tpuwizard no longer guards this run: no ledger record, no deadline of its own, no watchdog and no verified teardown past this hand-over. Nothing here deletes what these commands create; run the teardown lines yourself and list what is left afterwards.
#
# This export wrote four files into export-gcluster/: tpuwizard-run-gcluster.sh (these commands), tpuwizard-run-gcluster.jobset.yaml (the JobSet they stand for), tpu_verify.py (the verifier) and tpuwizard_job.sh (the job every VM runs).
# Flags as Cluster Toolkit v1.95.0 (GoogleCloudPlatform/cluster-toolkit, cmd/job/submit.go and cmd/job/job.go) defines them; never run against a cluster here. gcluster's job commands are marked experimental (alpha) by Cluster Toolkit itself.
# Run these from the folder that holds train.py and export-gcluster/: --base-image python:3.12 --build-context . builds an image of it with Crane, which needs GCLUSTER_IMAGE_REPO set to an Artifact Registry repository of the project (export GCLUSTER_IMAGE_REPO=my-repo).
# Compute type ct5lp-hightpu-4t (the VM's machine type) with --topology 4x4: gcluster reads a shorthand's number as chips.
# Your --max-run of 120 minutes is NOT enforced: gcluster job submit has no deadline flag (its --timeout only bounds how long it waits). Cancel the job yourself, or use --to jobset, which sets activeDeadlineSeconds.
# A failed run is restarted whole up to 2 time(s) (--restarts); the finished JobSet and its logs are kept 24h (--gke-ttl-after-finished).
# Kueue: without --queue, gcluster takes the cluster's only LocalQueue, or offers to make multislice-queue where there is none.
# The route's capacity, a reservation and TPU7x's workload policy are node labels (--node-constraint): the cluster's node pools must carry them; gcluster job submit makes no node pool.

# 1. A GKE cluster with TPU node pools of this machine type and topology (they bill
#    from then on): gcluster deploy with Cluster Toolkit's TPU blueprints
#    (examples/gke-tpu-v6e, examples/gke-tpu-7x), or one you have.

# 2. Write gcluster's own JobSet to export-gcluster/tpuwizard-run-gcluster-dry-run.yaml, to read beside
#    tpuwizard-run-gcluster.jobset.yaml; nothing is applied.
gcluster job submit --cluster tpuwizard --location us-central1-a --name tpuwizard-run --compute-type ct5lp-hightpu-4t --topology 4x4 --num-slices 1 --base-image python:3.12 --build-context . --command 'cd / && bash export-gcluster/tpuwizard_job.sh' --restarts 2 --gke-ttl-after-finished 24h --node-constraint cloud.google.com/gke-spot=true --dry-run-out export-gcluster/tpuwizard-run-gcluster-dry-run.yaml

# 3. Submit it: bootstrap, verifier (its receipt line is in each VM's log), your script.
gcluster job submit --cluster tpuwizard --location us-central1-a --name tpuwizard-run --compute-type ct5lp-hightpu-4t --topology 4x4 --num-slices 1 --base-image python:3.12 --build-context . --command 'cd / && bash export-gcluster/tpuwizard_job.sh' --restarts 2 --gke-ttl-after-finished 24h --node-constraint cloud.google.com/gke-spot=true
