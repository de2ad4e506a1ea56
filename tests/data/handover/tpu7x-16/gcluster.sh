# Cluster Toolkit (gcluster v1.95.0) job for tpu7x-16: run each line yourself, in order.
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
#   gcluster job cancel tpuwizard-run --cluster tpuwizard --location us-central1-c
#   gcloud container node-pools delete tpuwizard-np-0 --cluster tpuwizard --location us-central1  (if you made it)
#   gcloud compute resource-policies delete tpu7x-16-2x2x2-placement-policy --region us-central1  (if you made it)
#   gcluster destroy tpuwizard  (if gcluster deploy made the cluster as deployment tpuwizard; run it where you deployed)
#   gcloud container clusters list --location us-central1-c
#
# tpuwizard no longer guards this run: no ledger record, no deadline of its own, no watchdog and no verified teardown past this hand-over. Nothing here deletes what these commands create; run the teardown lines yourself and list what is left afterwards.
#
# This export wrote four files into export-gcluster/: tpuwizard-run-gcluster.sh (these commands), tpuwizard-run-gcluster.jobset.yaml (the JobSet they stand for), tpu_verify.py (the verifier) and tpuwizard_job.sh (the job every VM runs).
# Flags as Cluster Toolkit v1.95.0 (GoogleCloudPlatform/cluster-toolkit, cmd/job/submit.go and cmd/job/job.go) defines them; never run against a cluster here. gcluster's job commands are marked experimental (alpha) by Cluster Toolkit itself.
# Run these from the folder that holds train.py and export-gcluster/: --base-image python:3.12 --build-context . builds an image of it with Crane, which needs GCLUSTER_IMAGE_REPO set to an Artifact Registry repository of the project (export GCLUSTER_IMAGE_REPO=my-repo).
# Compute type tpu7x-standard-4t (the VM's machine type) with --topology 2x2x2: gcluster reads a shorthand's number as chips.
# Your --max-run of 120 minutes is NOT enforced: gcluster job submit has no deadline flag (its --timeout only bounds how long it waits). Cancel the job yourself, or use --to jobset, which sets activeDeadlineSeconds.
# A failed run is restarted whole up to 2 time(s) (--restarts); the finished JobSet and its logs are kept 24h (--gke-ttl-after-finished).
# Kueue: without --queue, gcluster takes the cluster's only LocalQueue, or offers to make multislice-queue where there is none.
# The route's capacity, a reservation and TPU7x's workload policy are node labels (--node-constraint): the cluster's node pools must carry them; gcluster job submit makes no node pool.
# TPU7x multi-host: GKE places each slice by a HIGH_THROUGHPUT workload policy passed to its node pool with --placement-policy (in place of --tpu-topology), and the Pods select it (cloud.google.com/placement-policy-name; GKE's Ironwood page, kubernetes-engine/docs/concepts/tpu-ironwood; the names and the selector as xpk 1.16.0 writes them, xpk/core/nodepool.py and xpk/core/scheduling.py). On a cluster without such pools (xpk cluster create --tpu-type makes them itself), run first, with --location your cluster's (gcloud container clusters list); the pools bill as the first line of the bills above says, until the teardown deletes them:
#   gcloud compute resource-policies create workload-policy tpu7x-16-2x2x2-placement-policy --type HIGH_THROUGHPUT --accelerator-topology 2x2x2 --region us-central1
#   gcloud container node-pools create tpuwizard-np-0 --cluster tpuwizard --location us-central1 --node-locations us-central1-c --machine-type tpu7x-standard-4t --num-nodes 2 --placement-policy tpu7x-16-2x2x2-placement-policy

# 1. A GKE cluster with TPU node pools of this machine type and topology (they bill
#    from then on): gcluster deploy with Cluster Toolkit's TPU blueprints
#    (examples/gke-tpu-v6e, examples/gke-tpu-7x), or one you have.

# 2. Write gcluster's own JobSet to export-gcluster/tpuwizard-run-gcluster-dry-run.yaml, to read beside
#    tpuwizard-run-gcluster.jobset.yaml; nothing is applied.
gcluster job submit --cluster tpuwizard --location us-central1-c --name tpuwizard-run --compute-type tpu7x-standard-4t --topology 2x2x2 --num-slices 1 --base-image python:3.12 --build-context . --command 'cd / && bash export-gcluster/tpuwizard_job.sh' --restarts 2 --gke-ttl-after-finished 24h --node-constraint cloud.google.com/placement-policy-name=tpu7x-16-2x2x2-placement-policy --gke-disable-parallel-containers --dry-run-out export-gcluster/tpuwizard-run-gcluster-dry-run.yaml

# 3. Submit it: bootstrap, verifier (its receipt line is in each VM's log), your script.
gcluster job submit --cluster tpuwizard --location us-central1-c --name tpuwizard-run --compute-type tpu7x-standard-4t --topology 2x2x2 --num-slices 1 --base-image python:3.12 --build-context . --command 'cd / && bash export-gcluster/tpuwizard_job.sh' --restarts 2 --gke-ttl-after-finished 24h --node-constraint cloud.google.com/placement-policy-name=tpu7x-16-2x2x2-placement-policy --gke-disable-parallel-containers
