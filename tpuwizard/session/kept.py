"""Kept nodes: the ones ``tpuwizard up`` created for iterating, found again from the ledger and
the API, each with a transport, heartbeats and its deadlines.

``run``, ``watch``, ``ssh``, ``status`` and the wizard reach a kept node only through this module
(via :class:`~tpuwizard.session.session.Session`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.errors import BadInput, HeartbeatFailed, RemoteError
from tpuwizard.core.launch.billing import idle_deadline
from tpuwizard.core.launch.distributed import coordinator_for
from tpuwizard.core.launch.iterate import (
    HeartbeatBook,
    RunResult,
    ScriptRun,
    heartbeat_interval,
    heartbeats,
    run_script,
    send_heartbeat,
)
from tpuwizard.core.launch.ledger import Entry, Resource
from tpuwizard.core.launch.vanished import went_away
from tpuwizard.core.plan import cost
from tpuwizard.core.remote.sync import LocalFolder

if TYPE_CHECKING:
    from tpuwizard.core.cloud.types import NodeInfo
    from tpuwizard.core.launch.runtime import Runtime
    from tpuwizard.core.remote.transports import Transport
    from tpuwizard.session.session import Session


@dataclass(frozen=True)
class KeptInfo:
    """What ``status`` shows for a kept node: cost so far and when it deletes itself."""

    name: str
    zone: str
    accelerator: str
    state: str
    kept_since: float
    cost_usd: float | None
    price_per_hour_usd: float | None
    max_deadline: float | None  # the watchdog's --max-run deadline (epoch seconds)
    idle_s: float | None
    last_heartbeat: float | None
    practice: bool = False
    checked: bool = True  # False: from the ledger alone, the cloud was not asked

    @property
    def idle_deadline(self) -> float | None:
        return idle_deadline(self.kept_since, self.idle_s, self.last_heartbeat, self.max_deadline)

    def to_dict(self) -> dict[str, object]:
        now = time.time()
        idle = self.idle_deadline
        return {
            "name": self.name,
            "zone": self.zone,
            "accelerator": self.accelerator,
            "state": self.state,
            "cost_usd": self.cost_usd,
            "price_per_hour_usd": self.price_per_hour_usd,
            "deadline": self.max_deadline,
            "idle_minutes": self.idle_s / 60 if self.idle_s else None,
            "idle_deadline": idle,
            "seconds_to_idle_deadline": round(idle - now, 1) if idle else None,
            "last_heartbeat": self.last_heartbeat,
            "practice": self.practice,
        }

    def describe(self) -> str:
        """The one line every command, status and plain mode show for a kept node: where it is,
        what it has cost, when it deletes itself, and how to end it now."""
        spent = f"${self.cost_usd:.2f} so far" if self.cost_usd is not None else "cost unknown"
        now, idle = time.time(), self.idle_deadline
        end = idle if idle is not None else self.max_deadline
        if end is None:
            limit = "no watchdog: it bills until deleted"
        elif end <= now:
            limit = "past its deadline: it should be deleting itself (`tpuwizard status` checks)"
        else:
            minutes = max(1, round((end - now) / 60))
            limit = f"deletes itself in {minutes} min " + (
                "unless used" if idle is not None else "(its deadline)"
            )
        label, flag = ("[practice] ", " --sandbox") if self.practice else ("", "")
        return (
            f"{label}Kept: {self.name} ({self.accelerator}) in {self.zone}, {spent}, {limit}; "
            f"`tpuwizard down{flag} {self.name}` ends it"
        )


def recorded_kept() -> list[KeptInfo]:
    """Every kept node the ledgers know (real, then practice), priced and timed from the ledger
    and the heartbeat book alone: no cloud client, so every command can afford to show them.
    Practice nodes are left out while no practice cloud runs (they went with it)."""
    from tpuwizard.core import paths
    from tpuwizard.core.launch.ledger import Ledger
    from tpuwizard.session import practice as practice_mode

    state, out = paths.state_dir(), []
    for practice, folder in ((False, state), (True, state / "sandbox")):
        path = folder / "ledger.jsonl"
        running = (
            practice_mode.is_practice() or (folder / practice_mode.LASTING_SERVER_FILE).exists()
        )
        if not path.exists() or (practice and not running):
            continue
        beats = HeartbeatBook(folder / "heartbeats.json").read()
        entries = [e for e in Ledger(path).open_entries() if e.op == "kept"]
        out += [_info(e, "not checked", beats, practice, checked=False) for e in entries]
    return out


def _info(
    entry: Entry, state: str, beats: dict[str, float], practice: bool, checked: bool = True
) -> KeptInfo:
    r = entry.resource
    return KeptInfo(
        node_id(r),
        r.zone,
        r.accelerator,
        state,
        float(entry.extra.get("kept_at") or entry.at),
        cost.estimate(r.accelerator, r.route, time.time() - entry.first_at, r.zone),
        cost.hourly(r.accelerator, r.route, r.zone),
        entry.extra.get("deadline"),
        entry.extra.get("idle_s"),
        beats.get(node_id(r)),
        practice,
        checked,
    )


def node_id(resource: Resource) -> str:
    """A spot node is kept through its queued resource; the node is what runs things."""
    return resource.node_id or resource.name


class KeptNodes:
    """The kept nodes of one session."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.book = HeartbeatBook(session.ledger.path.parent / "heartbeats.json")

    def entries(self) -> list[Entry]:
        return [e for e in self.session.ledger.open_entries() if e.op == "kept"]

    def infos(self) -> list[KeptInfo]:
        """Every kept node that still exists, priced from its first READY-ish record."""
        cloud, beats, out = self.session.cloud, self.book.read(), []
        for entry in self.entries():
            r = entry.resource
            node = cloud.get_node(r.zone, node_id(r))
            if node is None:
                continue  # deleted (its idle deadline, or by hand): status reconciles the ledger
            out.append(_info(entry, node.state, beats, self.session.practice))
        return out

    def open(self, name: str | None) -> KeptNode:
        """The kept node called ``name``, or the only one when no name is given."""
        entries = self.entries()
        if name is not None:
            entries = [e for e in entries if name in (e.resource.name, node_id(e.resource))]
        names = ", ".join(node_id(e.resource) for e in self.entries())
        if not entries:
            if name is not None:
                raise BadInput(f"No kept node called '{name}' (kept: {names or 'none'}).")
            raise BadInput("No kept node: start one with `tpuwizard up --accelerator T --zone Z`.")
        if len(entries) > 1:
            raise BadInput(f"{len(entries)} kept nodes ({names}): choose one with --node NAME.")
        entry = entries[0]
        node = self.session.cloud.get_node(entry.resource.zone, node_id(entry.resource))
        if node is None or node.state != "READY":
            state = "gone (its idle deadline may have passed)" if node is None else node.state
            raise BadInput(
                f"{node_id(entry.resource)} is {state}: run `tpuwizard status`, then "
                "`tpuwizard up` for a new one."
            )
        return KeptNode(self, entry, node)


class KeptNode:
    """One kept, bootstrapped node: run scripts on it, send it heartbeats, open a shell."""

    def __init__(self, nodes: KeptNodes, entry: Entry, node: NodeInfo) -> None:
        from tpuwizard.session.runtime import build_runtime

        self.nodes, self.entry, self.node = nodes, entry, node
        self.name = node_id(entry.resource)
        session = nodes.session
        self.rt: Runtime = build_runtime(session.cloud, session.practice)
        self.transport: Transport = self.rt.make_transport(node)
        self.idle_s: float | None = entry.extra.get("idle_s")

    @property
    def workers(self) -> int:
        return self.transport.workers

    def heartbeat(self) -> None:
        """Push the idle deadline back by the idle time (and remember when, for status).

        A heartbeat that fails raises what happened: the node went away (:class:`NodeGone`),
        or it is READY and the beat did not land (:class:`HeartbeatFailed`)."""
        try:
            sent = send_heartbeat(self.transport)
        except RemoteError as err:
            raise self._why(err, "when tpuwizard sent it a heartbeat") or HeartbeatFailed(
                self.name, str(err)
            ) from err
        self.nodes.book.record(self.name, sent)

    def _why(self, err: RemoteError, doing: str) -> Exception | None:
        """The node's own fate when it explains ``err`` (gone, preempted), else None."""
        r = self.entry.resource
        queued = r.name if r.kind == "queued" else None
        return went_away(self.nodes.session.cloud, r.zone, self.name, queued, doing, err)

    def keep_alive(self, on_error: Callable[[str], None]):  # -> a context manager
        """Heartbeats now and through the block (each run, watch and ssh)."""
        return heartbeats(self.heartbeat, heartbeat_interval(self.idle_s), on_error)

    def run(
        self,
        script: Path,
        args: Sequence[str],
        run_id: str,
        run_dir: Path,
        fetch: Sequence[str],
        folder: LocalFolder,
        on_line: Callable[[int, str], None],
        on_note: Callable[[str], None],
        cancel: CancelToken,
    ) -> RunResult:
        """Copy what changed and run ``script`` on every worker, under heartbeats."""
        coordinator = coordinator_for(self.node.endpoints, self.rt.explicit_coordinator)
        plan = ScriptRun(
            script,
            args,
            run_id,
            run_dir,
            self.entry.resource.accelerator,
            self.rt.expect,
            fetch,
            coordinator,
        )
        problems = plan.problems()
        if problems:
            raise BadInput(" ".join(problems))
        run_dir.mkdir(parents=True, exist_ok=True)
        with self.keep_alive(on_note):
            try:
                return run_script(self.transport, plan, folder, on_line, on_note, cancel)
            except RemoteError as err:
                gone = self._why(err, "while your script ran")
                if gone is None:
                    raise
                raise gone from err

    def shell_command(self, worker: int) -> tuple[list[str], str | None, dict[str, str] | None]:
        """The local argv (with its cwd and env) of an interactive shell on ``worker``."""
        from tpuwizard.core.remote.interactive import interactive_command

        if not 0 <= worker < self.workers:
            raise BadInput(f"--worker must be 0-{self.workers - 1} on {self.name}.")
        return interactive_command(self.transport, worker)
