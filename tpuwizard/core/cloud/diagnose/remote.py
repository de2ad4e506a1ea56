"""Diagnoses for what goes wrong on the workers: unreachable VMs, SSH refusals, slices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.core.choices import Choice, phrase
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.cloud.diagnose.tpu_errors import tpu_error_diagnosis
from tpuwizard.core.errors import (
    HeartbeatFailed,
    NodeGone,
    PackagesFailed,
    RemoteError,
    ScriptFailed,
    SliceIncomplete,
    StalledIn,
    Unreachable,
    VerifierTpuError,
    VersionMismatch,
    WorkersStalled,
)

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice


def remote_diagnosis(
    err: BaseException, message: str, slice_: Slice | None = None
) -> Diagnosis | None:
    """The diagnosis of a worker-side failure, or None when ``err`` is not one: the first
    family that knows it says it (what the TPU itself said, the script's own, the slice's,
    reaching the workers, SSH). ``slice_``: the slice it ran on, for fit's answer."""
    said_by_the_tpu = _the_tpu(err, slice_)
    if said_by_the_tpu is not None:
        return said_by_the_tpu
    for family in (_the_script, _the_slice, _reaching_the_workers, _over_ssh):
        said = family(err, message)
        if said is not None:
            return said
    return None


def _the_tpu(err: BaseException, slice_: Slice | None) -> Diagnosis | None:
    """The script or the verifier failed and the TPU's own words say why (tpu_errors.py); a
    missing package is said first, as the script never reached the TPU."""
    if isinstance(err, ScriptFailed) and err.tpu_error is not None and not err.package:
        return tpu_error_diagnosis(err.tpu_error, slice_)
    if isinstance(err, VerifierTpuError):
        return tpu_error_diagnosis(err.tpu_error, slice_, f"The verifier on worker {err.worker}")
    return None


def _the_script(err: BaseException, message: str) -> Diagnosis | None:
    """The script ran and failed, or could not run: a package missing or not installed."""
    if isinstance(err, ScriptFailed) and err.package:
        return missing_package_diagnosis(err.missing_module or err.package, err.package)
    if isinstance(err, PackagesFailed):
        return packages_failed_diagnosis(err)
    if isinstance(err, ScriptFailed):  # it ran: the TPU and the connection were fine
        return Diagnosis(
            "script_failed",
            "Your script failed",
            f"Your script ran on the TPU and exited with code {err.code}. The node, the "
            "connection and the checks before it were fine: the cause is in the script.",
            [
                "Its own output above (and its last lines in the summary) shows why.",
                "Fix the script and launch again.",
            ],
        )
    return None


def _the_slice(err: BaseException, message: str) -> Diagnosis | None:
    """The workers did not run as one: a stall, a host that never joined, JAX versions apart."""
    if isinstance(err, WorkersStalled):
        names = ", ".join(f"w{w}" for w in err.stalled)
        verifier = err.phase is StalledIn.VERIFIER
        where = (
            "The verifier stalled before your script started: the stall guard ended the run"
            if verifier
            else "The stall guard ended the run"
        )
        return Diagnosis(
            "workers_stalled",
            "The verifier stalled" if verifier else "The script stalled",
            f"{where}: {names} printed nothing and its processes used no CPU time for the "
            "stall timeout, so the slice could only wait (and bill) until its deadline. A "
            "launch deletes its node; a kept node is kept.",
            [
                *err.lines,
                f"Every frame of each stack is {'in' if verifier else 'at the end of'} the "
                f"run's {err.phase.report_file}.",
                *(
                    [
                        "The verifier is tpuwizard's own short program: a hang there is the "
                        "worker's (a stuck import, a dead host) or the join's, not your "
                        "script's. Launch again for new VMs."
                    ]
                    if verifier
                    else []
                ),
                "A stack in jax.distributed.initialize() waits for a worker that never joined.",
                phrase(
                    "A script that is quiet on purpose for longer (a long first compile "
                    "without output): raise {0}, or 0 to turn the guard off.",
                    Choice("stall_timeout"),
                ),
            ],
        )
    if isinstance(err, SliceIncomplete):
        return _slice_incomplete(err)
    if isinstance(err, VersionMismatch):
        return Diagnosis(
            "version_mismatch",
            "The workers run different JAX versions",
            message,
            [
                "Reinstall the same jax[tpu] on every worker (tpuwizard bootstraps all of them "
                "with one command), or recreate the slice."
            ],
        )
    return None


def _slice_incomplete(err: SliceIncomplete) -> Diagnosis:
    """Some hosts never joined jax.distributed.initialize(); the others gave up waiting."""
    missing = ", ".join(f"w{w}" for w in err.missing)
    waited = ", ".join(f"w{w}" for w in err.waited) or "no worker"
    return Diagnosis(
        "slice_incomplete",
        "Not every host started the program",
        f"{missing} never joined the slice; {waited} waited {err.timeout:.0f} s in "
        "jax.distributed.initialize() and gave up. Every VM of a multi-host slice must run "
        "the same program at the same time, or the others wait for ever.",
        [
            f"Read {missing}'s lines above for why its program stopped or never started.",
            "By hand: gcloud compute tpus tpu-vm ssh NAME --worker=all --command ... (never a "
            "single worker).",
            "If a worker's TPU is held by another process, stop that "
            "process or recreate the slice.",
        ],
    )


def _reaching_the_workers(err: BaseException, message: str) -> Diagnosis | None:
    """No address of theirs answers here, or the node itself went away."""
    if isinstance(err, Unreachable):
        return Diagnosis(
            "unreachable_workers",
            "This computer cannot reach the TPU VMs",
            f"The node is READY but {message}. Google gives workers external addresses only "
            "when the create asks for them; an internal address answers only inside the "
            "project's network.",
            [
                phrase("Launch again with external addresses ({0}).", Choice("external_ips", "on")),
                phrase("Or reach them through IAP ({0}).", Choice("external_ips", "off")),
                "Or run tpuwizard from a VM in the same VPC, or over a VPN into it.",
            ],
        )
    if isinstance(err, NodeGone):
        return node_gone_diagnosis(err)
    return None


def _over_ssh(err: BaseException, message: str) -> Diagnosis | None:
    """A command over SSH failed: a changed host key, our key refused (OS Login), a heartbeat
    that did not land, or any other, by SSH's own words first."""
    if not isinstance(err, RemoteError):
        return None
    if "REMOTE HOST IDENTIFICATION HAS CHANGED" in message:
        return Diagnosis(
            "host_key_changed",
            "A TPU VM's SSH host key changed",
            "Google recycles external addresses between VMs, so a new VM can answer on an "
            "address an old one used, with a new host key. tpuwizard files host keys per node "
            "and worker; this one came from a file keyed by address alone.",
            [
                "Remove the old entry: ssh-keygen -R ADDRESS -f ~/.ssh/known_hosts",
                "Then launch again.",
            ],
        )
    if "Permission denied (publickey)" in message:
        return Diagnosis(
            "oslogin",
            "SSH refused tpuwizard's key",
            "When OS Login is enabled (enable-oslogin in project or node metadata), the VM "
            "ignores metadata ssh-keys, which is how tpuwizard installs its key.",
            [
                phrase(
                    "Use gcloud's SSH, which handles OS Login ({0}).", Choice("transport", "gcloud")
                ),
                "Or check: gcloud compute project-info describe --format='value(commonInstance"
                "Metadata.items.enable-oslogin)'",
            ],
        )
    if isinstance(err, HeartbeatFailed):
        return Diagnosis(
            "heartbeat",
            "The heartbeat did not reach the kept node",
            f"{err.node} is READY, but the heartbeat (touching a file on its worker 0) failed: "
            f"{err.why}. Its watchdog deletes it once its idle time passes without one.",
            [
                "The next tpuwizard run, watch or ssh sends one again; the open wizard sends "
                "them too.",
                "tpuwizard status shows when it deletes itself.",
            ],
        )
    return Diagnosis(
        "remote",
        "A command on the TPU VM failed",
        message,
        [
            phrase(
                "If SSH is refused, the project may enforce OS Login: use gcloud's SSH ({0}).",
                Choice("transport", "gcloud"),
            ),
            "The lines above show the worker's own output.",
        ],
    )


def missing_package_diagnosis(module: str, package: str) -> Diagnosis:
    """The script imported a module the worker venv does not have: a package to add."""
    return Diagnosis(
        "missing_package",
        f"Your script needs the package {package}",
        f"Your script stopped on ModuleNotFoundError: no module named '{module}'. The worker "
        "venv holds the pinned JAX, NumPy and the packages you add; nothing else.",
        [
            phrase(f"Add {package}: {{0}}.", Choice("packages", package)),
            "Or list it in a requirements.txt beside your script: it is installed for you.",
        ],
    )


def packages_failed_diagnosis(err: PackagesFailed) -> Diagnosis:
    """The packages asked for did not install: said before the script ran."""
    titles = {
        "no_route": "The worker cannot download the packages",
        "not_found": "A package asked for does not exist",
        "conflict": "The packages asked for cannot be installed",
    }
    return Diagnosis(
        "packages_failed",
        titles.get(err.kind, "Installing the packages failed"),
        f"On worker {err.worker}, {err.why.rstrip('.')}. Your script did not run.",
        [f"Fix: {err.fix}.", "Then launch again (or tpuwizard run again on a kept node)."],
    )


def node_gone_diagnosis(err: NodeGone) -> Diagnosis:
    """The node went away under a command: say so, and who may have done it."""
    now = "no longer exists" if err.state is None else f"is {err.state}"
    deleted = err.state in (None, "DELETING")
    who = (
        "It was deleted: by its watchdog at its deadline or idle time, by tpuwizard down or a "
        "teardown elsewhere, or in the Cloud Console or gcloud."
        if deleted
        else "Someone stopped it, or Google is repairing or restarting it."
    )
    return Diagnosis(
        "node_gone",
        "The TPU VM went away" if deleted else f"The TPU VM is {err.state}",
        f"A command on {err.node} failed {err.doing}, because {err.node} {now} ({err.why}). " + who,
        [
            "Run tpuwizard status to see what still exists.",
            "Launch again for a new node (tpuwizard up for a new kept one).",
        ],
    )
