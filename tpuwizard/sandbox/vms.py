"""The sandbox's VMs: their homes, their image, their keys, and what happens when they go.

A part of :class:`~tpuwizard.sandbox.state.SandboxState`: it is given the state file, the faults
and the paired sshd's authorized_keys file, and is the only part that touches worker folders.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

from tpuwizard.core import untrusted
from tpuwizard.core.plan import catalog
from tpuwizard.sandbox import google, node_log, oslogin
from tpuwizard.sandbox.compute import google as compute_google
from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.model import ApiError, worker_home
from tpuwizard.sandbox.store import StateStore
from tpuwizard.sandbox.workers import image
from tpuwizard.sandbox.workers.chip import LEFT_JOB, hold_chips, make_stand_in
from tpuwizard.sandbox.workers.processes import end_worker_processes


class VirtualMachines:
    """Boot, preempt and remove the VMs behind sandbox nodes; keep the sshd's keys in step."""

    def __init__(self, store: StateStore, faults: Faults, authorized_keys: Path | None) -> None:
        self.store = store
        self.faults = faults
        self.authorized_keys = authorized_keys

    def worker_home(self, node_name: str, worker: int) -> Path:
        return worker_home(self.store.home, node_name, worker)

    def preempt_spot(self, t: float) -> bool:
        """With preempt_after (or preempt_on), READY spot nodes are preempted: PREEMPTED, and
        their VMs gone."""
        after, on = self.faults.preempt_after, self.faults.preempt_on
        if after is None and on is None:
            return False
        data = self.store.data
        changed = False
        for name, since in list(data.get("ready_at", {}).items()):
            node = data["nodes"].get(name)
            spot = node is not None and node.get("schedulingConfig", {}).get("spot")
            if not spot or node["state"] != "READY":
                continue
            due = after is not None and t - since >= after
            if on is not None and not due:
                found = self.worker_home(name, 0).glob(on)
                due = sum(1 for _ in found) >= self.faults.preempt_on_count
            if due:
                done = data.get("preemptions", 0)
                if self.faults.preempt_times is not None and done >= self.faults.preempt_times:
                    continue
                data["preemptions"] = done + 1
                node["state"] = "PREEMPTED"
                folder = self.worker_home(name, 0).parent
                end_worker_processes(folder)  # a preempted VM takes its processes with it
                shutil.rmtree(folder, ignore_errors=True)
                changed = True
        return changed

    def stall_worker(self) -> bool:
        """With worker_stall=N, worker N's script jobs are suspended as soon as they start
        (SIGSTOP to the job's process group), once each; a job that already ended is left. With
        verify_stall=N, worker N's verifier job (a launch's verify-*, before the script)."""
        changed = False
        for worker, patterns in (
            (self.faults.worker_stall, ("script-*", "run-*")),
            (self.faults.verify_stall, ("verify-*",)),
        ):
            if worker is not None:
                changed |= self._stall_jobs(worker, patterns)
        return changed

    def _stall_jobs(self, worker: int, patterns: tuple[str, ...]) -> bool:
        data = self.store.data
        done = data.setdefault("stalled_jobs", [])
        changed = False
        for name, node in data["nodes"].items():
            if not node.get("_booted"):
                continue
            home = self.worker_home(name, worker)
            for pattern in patterns:
                for pid_file in home.glob(f".tpuwizard/jobs/{pattern}/pid"):
                    key = str(pid_file)
                    if key in done or (pid_file.parent / "exit").exists():
                        continue
                    try:
                        # written on the VM: a FIFO there must not hang the clock
                        pgid = int(untrusted.read_text(pid_file, 64).strip())
                        os.killpg(pgid, signal.SIGSTOP)
                    except (OSError, ValueError):
                        continue  # not yet its own group (setsid to come): the next tick
                    done.append(key)
                    changed = True
        return changed

    def maintenance_sigterm(self, t: float) -> None:
        """With maintenance_sigterm=S, the script's job on every VM (a node's worker or a Compute
        Engine instance) is sent SIGTERM S seconds after it started: to its wrapper (the pid in
        the job's folder), which passes it to the script as it would any SIGTERM. Once per VM,
        as one maintenance event is: a script started again on the same VM is left to finish
        (the mark sits beside the VM's home, so a VM made again under the name gets its own)."""
        after = self.faults.maintenance_sigterm
        if after is None:
            return
        for kind in ("workers", "instances"):
            for job in (self.store.home / kind).glob("*/*/*/w*/.tpuwizard/jobs/*"):
                if not job.name.startswith(("script-", "run-")) or (job / "exit").exists():
                    continue
                if job.name == LEFT_JOB:  # held_chip=ours's earlier run: not the script's job
                    continue
                home = job.parents[2]
                sent = home.parent / f".maintenance-sigterm-{home.name}"
                pid_file = job / "pid"
                try:
                    started = pid_file.stat().st_mtime
                    pid = int(untrusted.read_text(pid_file, 64).strip())
                except (OSError, ValueError):
                    continue
                if t - started < after or sent.exists() or pid <= 1:
                    continue
                with contextlib.suppress(OSError):  # the VM is being deleted: no event then
                    sent.touch()
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGTERM)

    def hold_chips(self) -> None:
        """With held_chip=WHO, worker 0 of every booted VM (a node's, an instance's) gets a process
        holding its chip, once per VM (sandbox/workers/chip.py)."""
        if self.faults.held_chip is None:
            return
        homes = [
            self.worker_home(name, 0)
            for name, node in self.store.data["nodes"].items()
            if node.get("_booted")
        ]
        homes += [
            self.instance_folder(name) / "w0" for name in self.store.data.get("instances", {})
        ]
        hold_chips(homes, self.faults.held_chip)

    def make_ready(self, node: dict[str, Any]) -> None:
        node["state"] = "READY"
        self.store.data.setdefault("ready_at", {})[node["name"]] = time.time()
        self.boot_workers(node)

    def boot_workers(self, node: dict[str, Any]) -> None:
        """The VMs exist and answer: their homes and Google's image, once per node."""
        node.pop("_reachable_at", None)
        if node.get("_booted"):
            return
        node["_booted"] = True
        slice_ = catalog.parse_accelerator(node["acceleratorType"])
        for worker in range(slice_.vms):
            self.worker_home(node["name"], worker).mkdir(parents=True, exist_ok=True)
            make_stand_in(self.worker_home(node["name"], worker))  # its chip
        # google-behaviour.md:52-56: the VMs run Google's image (Python 3.10, no venv, no uv);
        # :14 without external addresses they have no route to package indexes either.
        external = bool(node.get("networkConfig", {}).get("enableExternalIps"))
        node["_install_fails"] = self.faults.take("bootstrap_fail")
        image.install_image(
            self.worker_home(node["name"], 0).parent,
            self.routes_out(node, external),
            self.wheels,
            node["_install_fails"],
        )

    def routes_out(self, resource: dict[str, Any], external: bool) -> bool:
        """Does a VM reach package indexes: with an external IP, or through its region's Cloud
        NAT (fault cloud_nat; gb:14 "no Cloud NAT by default")?"""
        zone = resource["name"].split("/")[3]
        return external or compute_google.has_nat(self.faults.cloud_nat, zone.rsplit("-", 1)[0])

    @property
    def wheels(self) -> Path:
        return image.wheel_folder(self.store.home)

    def set_external_ips(self, node: dict[str, Any], external: bool) -> None:
        """An update turned external addresses on or off: the endpoints and, on booted VMs, the
        image's route to package indexes follow (google-behaviour.md:11-16)."""
        node.setdefault("networkConfig", {})["enableExternalIps"] = external
        node["networkEndpoints"] = google.endpoints(len(node["networkEndpoints"]), external)
        if node.get("_booted"):
            folder = self.worker_home(node["name"], 0).parent
            fails = bool(node.get("_install_fails"))
            image.install_image(folder, self.routes_out(node, external), self.wheels, fails)

    def remove_node(self, name: str) -> None:
        """The node ``name`` is gone: its record, and its VMs with their processes and folders."""
        if self.store.data["nodes"].pop(name, None) is not None:
            folder = self.worker_home(name, 0).parent
            node_log.keep_consoles(self.store.home, name, folder, "the node was removed")
            # A deleted VM takes its processes with it: end the jobs started in its homes
            # (each leads its own process group, its id in the job's pid file).
            end_worker_processes(folder)
            shutil.rmtree(folder, ignore_errors=True)

    def instance_folder(self, name: str) -> Path:
        """A Compute Engine instance's folder (its one worker home ``w0``, and its image): apart
        from the nodes', so an instance and a node of the same name never share a home."""
        _, project, _, zone, _, instance = name.split("/")
        return self.store.home / "instances" / project / zone / instance

    def boot_instance(self, record: dict[str, Any], external: bool) -> None:
        """A Compute Engine TPU VM is RUNNING: a worker home like a node's worker 0, with
        Google's image (compute-engine.md:62 "RUNNING arrives when the VM boots, before anything
        is installed")."""
        folder = self.instance_folder(record["_name"])
        (folder / "w0").mkdir(parents=True, exist_ok=True)
        make_stand_in(folder / "w0")  # its chip
        image.install_image(
            folder,
            self.routes_out({"name": record["_name"]}, external),
            self.wheels,
            self.faults.take("bootstrap_fail"),
        )

    def stop_instance(self, name: str, remove: bool) -> None:
        """The instance's VM stops (its processes end with it); ``remove``: deleted, and its
        folder goes with it. The record is the caller's."""
        folder = self.instance_folder(name)
        end_worker_processes(folder)
        if remove:
            shutil.rmtree(folder, ignore_errors=True)

    def switch_off(self) -> int:
        """The practice cloud is switched off (``sandbox serve`` stopped): unless another server
        still serves this home, its nodes' VMs stop with it, as a VM's processes end with the VM:
        their watchdogs and jobs are ended. The nodes stay recorded, as Google's records would.
        Returns how many nodes' processes were ended; call once its server has stopped serving."""
        try:
            alone = self.store.serving_lock(fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another sandbox serves these nodes still
        try:
            with self.store.transaction():
                nodes = self.store.data["nodes"]
                for name in nodes:
                    folder = self.worker_home(name, 0).parent
                    node_log.keep_consoles(self.store.home, name, folder, "the sandbox stopped")
                    end_worker_processes(folder)
                instances = self.store.data.get("instances", {})
                for name in instances:
                    end_worker_processes(self.instance_folder(name))
                return len(nodes) + len(instances)
        except ApiError:  # a damaged state file: nothing can be read, so nothing to end
            return 0
        finally:
            os.close(alone)

    def sync_keys(self) -> None:
        """Rewrite the paired sshd's authorized_keys with what the VMs accept: ``ssh-keys``
        metadata, or under OS Login the imported keys (:func:`oslogin.accepted_keys`)."""
        if self.authorized_keys is None:
            return
        lines = oslogin.accepted_keys(self.faults, self.store.data)
        self.authorized_keys.parent.mkdir(parents=True, exist_ok=True)
        self.authorized_keys.write_text("".join(f"{line}\n" for line in lines))
        self.authorized_keys.chmod(0o600)
