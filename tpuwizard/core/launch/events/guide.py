"""The ``--json`` event stream as the documentation states it: when each event comes, and
which commands emit it. Its fields are the event classes' own (``launch_events.py``, and the
free routes' ``kaggle.py`` and ``colab.py``); the reference page is generated from both
(``docs/hooks.py``), and a test keeps one entry per event class."""

from __future__ import annotations

# event name -> (when it comes, the commands that emit it)
EVENT_GUIDE: dict[str, tuple[str, tuple[str, ...]]] = {
    "planned": (
        "first: what will be created, at what price (`price_source`: the Cloud Billing "
        "Catalog's read with its date, or the offline table's; `price_sku`: the catalog's SKU "
        "id, empty for the offline table's; `attempts_at_most`: with `--checkpoints`, how many "
        "attempts the chain may make, restarts + 1; else null; `folder`: what of the script's "
        "folder is copied to each worker, `{files, size, secrets, ignored, over}`: `size` in "
        "bytes, `secrets` the keys, credentials and .env files left out by name (a folder ends "
        "in /), `ignored` how many entries `.tpuwizardignore` left out, `over` past the limit; "
        "null without a script)",
        ("launch", "up"),
    ),
    "resource_exists": (
        "before the create call: from now on it may exist and must be cleaned up",
        ("launch", "up"),
    ),
    "create_refused": (
        "the create was refused: nothing exists, nothing bills",
        ("launch", "up"),
    ),
    "billing_started": (
        "the first READY: it bills from now until verified gone, at the price (and "
        "`price_source`, `price_sku`) known then",
        ("launch", "up"),
    ),
    "billing_stopped": (
        "it no longer bills (verified gone, or Google took the VM)",
        ("launch", "up"),
    ),
    "provisioning": (
        "each state the node or queued resource passes while it is made",
        ("launch", "up"),
    ),
    "fan_out_started": (
        "`--fan-out`: the create goes to every zone at once; until the losers are verified gone "
        "up to one node per zone may bill",
        ("launch", "up"),
    ),
    "fan_out_won": (
        "`--fan-out`: the first request READY is kept; the others (`losers`: their zones) are "
        "being deleted",
        ("launch", "up"),
    ),
    "zone_failover": (
        "`--failover` or `--zones`: a stockout moved the launch to the next zone",
        ("launch", "up"),
    ),
    "chip_holder_ended": (
        "before a run on a kept node (and the wizard's Run again): a process an earlier run of "
        "tpuwizard's left holding a worker's TPU was ended (SIGTERM, then SIGKILL after "
        "`grace_s` seconds)",
        ("run", "watch"),
    ),
    "chip_held_going_on": (
        "`--even-if-held` (the wizard's Run anyway): a process tpuwizard did not start holds a "
        "worker's TPU; the run goes on as asked",
        ("run", "watch"),
    ),
    "chip_not_checked": (
        "before a run on a kept node: who holds a worker's TPU could not be listed (`why`); the "
        "run goes on unchecked there",
        ("run", "watch"),
    ),
    "preempted": (
        "`--checkpoints`: the node went away under the script (`state` PREEMPTED, or null: simply"
        " gone)",
        ("launch", "run"),
    ),
    "recreating": (
        "`--checkpoints`: the old node is verified gone (its queued resource too); a new one is "
        "made for `attempt`, to resume from `resume_from` (null: from the start)",
        ("launch", "run"),
    ),
    "running_again": (
        "`--checkpoints`: the script's job recorded a SIGTERM on `workers` (Autocheckpoint's "
        "warning before maintenance) and node `name` is still READY: `attempt` runs the script "
        "there again, to resume from `resume_from` (null: from the start)",
        ("launch", "run"),
    ),
    "resumed": (
        "`--checkpoints`: the set is on the new node, and the script starts again with "
        "`TPUWIZARD_RESUME=1`",
        ("launch", "run"),
    ),
    "kept_replaced": (
        "`run --checkpoints`: the kept node went away under the script; `new_name`, made by run "
        "`run_id` from the settings `up` recorded, is kept in its place (`watch`, `ssh` and `run "
        "--node` on `old_name` say so)",
        ("run",),
    ),
    "kernel_planned": (
        "`--route kaggle`, first: the kernel to push, its shape, its session limit, the platform "
        "the receipt must show, the weekly TPU quota left (`quota_left_s`, null: not given), "
        "what of the script's folder it carries (`folder`, as `planned`'s)",
        ("launch",),
    ),
    "kernel_pushed": (
        "`--route kaggle`: Kaggle accepted the kernel; it stays in the account as the run's "
        "record, the script's folder inside it, until deleted (`teardown`, `--delete-kernel`)",
        ("launch",),
    ),
    "kernel_state": (
        "`--route kaggle`: each state Kaggle gives the kernel's session (QUEUED, RUNNING, "
        "COMPLETE, ERROR...), with the seconds since the push against the limit",
        ("launch",),
    ),
    "kernel_deleted": (
        "`--route kaggle --delete-kernel`: after the output came back, the kernel was deleted; "
        "`verified`: Kaggle then answered that it is not found",
        ("launch",),
    ),
    "kernel_left_running": (
        "`--route kaggle`, after a stop signal: the kernel still runs and no public call cancels "
        "it; Kaggle ends it by `ends_by`, its page (`url`) can stop it sooner",
        ("launch",),
    ),
    "colab_planned": (
        "`--route colab`, first: the named session to ask Colab for, its TPU (`v5e1`), the "
        "script's limit, the platform the receipt must show, what of the script's folder is "
        "uploaded (`folder`, as `planned`'s)",
        ("launch",),
    ),
    "colab_session_ready": (
        "`--route colab`: Colab assigned the session's runtime; `colab sessions` lists it at "
        "`endpoint`",
        ("launch",),
    ),
    "colab_account": (
        "`--route colab`, right after `colab_planned`: the colab CLI's `version`, the commands "
        "it lacks (`lacks`: `usage` before 0.8.0), and where it has `usage`, the account's "
        "`balance` (compute units), `rate_hourly` and active `assignments` (every session of "
        "the account); `usage_problem` where usage failed; `practice` where the practice "
        "stand-in answered (it plays a version)",
        ("launch",),
    ),
    "colab_assignments_after": (
        "`--route colab`, after `colab_session_stopped` where `colab_account` had a count: "
        "`colab usage`'s active assignments `after` the session stopped beside `before` (the "
        "whole account's; `colab sessions` on the run's name stays the check)",
        ("launch",),
    ),
    "colab_session_stopped": (
        "`--route colab`, last before `finished` (but for `colab_assignments_after`; also after a "
        "stop signal): `colab stop` ran; "
        "`verified`: `colab sessions` then no longer listed the session",
        ("launch",),
    ),
    "ready": (
        "the node is READY",
        ("launch", "up"),
    ),
    "ssh_ready": (
        "every worker answers",
        ("launch", "up"),
    ),
    "bootstrap_line": (
        "each line of setting up JAX on a worker, and of installing packages added to a node "
        "already up (`run --with`, the wizard's Run again)",
        ("launch", "up", "run"),
    ),
    "versions": (
        "the JAX, jaxlib, libtpu and Python a worker ended up with, and the added packages' "
        "versions (`packages`); again after packages are added to a node already up",
        ("launch", "up", "run"),
    ),
    "watchdog_account": (
        "before arming: the service account the watchdog runs as",
        ("launch", "up"),
    ),
    "watchdog": (
        "the on-VM watchdog was armed, or could not be",
        ("launch", "up"),
    ),
    "verifier_line": (
        "each line the verifier prints",
        ("launch", "up"),
    ),
    "check": (
        "each check of the verifier, passed or failed (on Kaggle and Colab, read from the"
        " receipt once it is back)",
        ("launch", "up"),
    ),
    "receipt_saved": (
        "the receipt (a slice's receipt on multi-host) is copied back",
        ("launch", "up"),
    ),
    "run_started": (
        "a run on the kept node begins (it holds the node's run lock)",
        ("run", "watch"),
    ),
    "waiting_for_node": (
        "`--wait` (and `watch`, always): another command runs on the node",
        ("run", "watch"),
    ),
    "folder_progress": (
        "a copy of the script's folder to a worker of 10 MB or more, at each tenth of it: "
        "`sent` of `total` bytes",
        ("launch", "run", "watch"),
    ),
    "folder_synced": (
        "what changed in the script's folder was copied to every worker",
        ("launch", "run", "watch"),
    ),
    "compile_cache": (
        "after a run on a kept node: JAX's compile-cache entries on worker 0 `before` and "
        "`after` it; `hit` when none was added while some existed (nothing compiled again)",
        ("run", "watch"),
    ),
    "heartbeat_missed": (
        "a heartbeat to the watchdog was not sent (the run goes on)",
        ("run", "watch"),
    ),
    "script_line": (
        "each line your script prints, on each worker",
        ("launch", "run", "watch"),
    ),
    "script_finished": (
        "your script ended on every worker: the first non-zero code, else 0; `output` is the file"
        " in the run folder that holds its whole output, every worker's lines",
        ("launch", "run", "watch"),
    ),
    "script_done": (
        'after each run of the script: whether the node waits for "run again" (the wizard); '
        "`diagnosis`: why a run that failed did, while the node is still there; "
        "`missing_package`: the package that provides a module the script could not import; "
        "`not_installed`: the packages a rerun was to add first, which did not install "
        "(`diagnosis` says why; the script did not run); `run`: 1 for the first run; "
        "`chip_held`: a rerun refused before anything was touched, `{node, holders: [{worker, "
        "pid, command}], unended}`, as processes tpuwizard did not start hold the TPU (or, "
        "`unended`, an earlier run's that SIGKILL did not end); else null",
        ("launch",),
    ),
    "deleting_on_request": (
        "Delete now (or a stop signal) while the wizard waited after a script that exited 0: "
        "no failure, the node is deleted as asked",
        (),
    ),
    "file_fetched": (
        "a file `--fetch` matched came back whole",
        ("launch", "run", "watch"),
    ),
    "nothing_matched": (
        "no entry in the script's folder matched any `--fetch` glob: nothing came back",
        ("launch", "run", "watch"),
    ),
    "file_not_fetched": (
        "an entry `--fetch` matched did not come back, and why (`incomplete`: it broke off, and "
        "the run fails for it)",
        ("launch", "run", "watch"),
    ),
    "checkpoints_unusable": (
        "`--checkpoints`: the folder holds `files` but no complete set can come home (said on "
        "the first pass), or its unmarked files changed between `restless_passes` passes in a "
        "row (`every_s` apart)",
        ("launch", "run"),
    ),
    "checkpoint_copied": (
        "`--checkpoints`: a complete set came home whole to `path`, every file size- and "
        "sha256-checked",
        ("launch", "run"),
    ),
    "teardown_started": (
        "the delete is issued",
        ("launch", "up"),
    ),
    "teardown_verified": (
        "the API says it is gone, and the zone's list agrees (`others_left`: this launch's other "
        "`--fan-out` requests that still exist)",
        ("launch", "up"),
    ),
    "zone_listed": (
        "after a verified teardown, what the zone's TPU list shows now, as the course checks it: "
        "each TPU's `name`, `accelerator`, `state` and `made_by` (`yours`, `another tpuwizard "
        "user's`, or `not made by tpuwizard`: one tpuwizard never deletes); `command` is the "
        "gcloud list that shows the same (empty in practice)",
        ("launch", "up"),
    ),
    "login_key_forgotten": (
        "after the verified teardown, the key imported into the OS Login profile was deleted "
        "(`problem`: why not; it expires at the deadline; `still_used_by`: a kept node that still"
        " logs in with it, so it stays)",
        ("launch", "up"),
    ),
    "teardown_failed": (
        "it could not be verified gone: it may still bill (`seen` false: it was never seen to "
        "exist, its create's answer lost: it may exist)",
        ("launch", "up"),
    ),
    "kept": (
        "it was kept on purpose and keeps billing; `up --json`'s last line",
        ("launch", "up"),
    ),
    "not_kept": (
        "the launch was to keep node `name` and does not: it is deleted and verified gone, "
        "because it was never seen created, the watchdog its plan promised was never armed, or "
        "its setup or verifier failed (`because`: never_created, unguarded, unproven)",
        ("launch", "up"),
    ),
    "ledger_record_held": (
        "this computer's disk refused a ledger record (full, read-only): `op` says which, of the "
        "resource `name`; it is held in `kept_in` (null: only in the command's memory) and moved "
        "into `ledger` once the disk allows. What is said of the resource comes from the cloud's "
        "list, not from its record; a `kept` record held makes the exit code 4",
        ("launch", "up"),
    ),
    "keep_needs_answer": (
        "Keep was asked for and no watchdog could be armed (the wizard asks)",
        (),
    ),
    "failed": (
        "a stage failed: what happened and what to do",
        ("launch", "up", "run", "watch"),
    ),
    "finished": (
        "the end of a launch, or of one run on a kept node (`remaining`: what still exists and "
        "bills; `unseen`: those of them never seen to exist, which may)",
        ("launch", "up", "run", "watch"),
    ),
}
