"""The Colab ledger's sessions for ``status`` and ``teardown``: each asked about with the program
that made it (the stand-in in practice, Google's ``colab`` for real) through ``colab
sessions``; stopped with ``colab stop`` only where its name (``tpuwizard-<run id>``) and its
ledger record say tpuwizard made it, and its launch no longer runs (a running launch stops its
own session), then verified by listing."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from tpuwizard.core import paths
from tpuwizard.core.colab.program import ColabCallFailed, ColabProgram
from tpuwizard.core.colab.run import stop_session
from tpuwizard.core.kaggle.ledger import held_as_json, said_held, writer_alive
from tpuwizard.core.launch.events.colab import ColabSessionStopped
from tpuwizard.core.launch.events.launch_events import LedgerRecordHeld
from tpuwizard.session.free.colab import colab_ledger, practice_home, program_for

PREFIX = "tpuwizard-"


@dataclass(frozen=True)
class ColabSeen:
    """One session of the ledger, as ``status`` or ``teardown`` found it."""

    session: str
    run_id: str
    practice: bool
    # "running", "launch-running" (its launch still runs), "gone", "unchecked", or
    # "read-only-home": the practice stand-in's state is in a read-only home (``detail``: where)
    state: str
    detail: str = ""
    stopped: bool | None = None  # teardown: stopped and verified gone by listing
    # The records of it the disk refused (held until it takes them), said with it.
    unrecorded: tuple[LedgerRecordHeld, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        found = asdict(self)
        del found["unrecorded"]
        return {**found, **held_as_json(self.unrecorded)}


def held_records() -> list[dict[str, Any]]:
    """The ledger's sessions that may still run, and are tpuwizard's by their name."""
    return [r for r in colab_ledger().held() if str(r.get("kernel", "")).startswith(PREFIX)]


def records_named(name: str) -> list[dict[str, Any]]:
    return [r for r in held_records() if r["kernel"] == name]


def _look(record: dict[str, Any], programs: dict[bool, ColabProgram | ColabSeen]) -> ColabSeen:
    """Is it listed? A session no longer listed is recorded gone."""
    name, run_id, practice = str(record["kernel"]), str(record["run_id"]), bool(record["practice"])
    if writer_alive(record.get("pid")):
        return ColabSeen(name, run_id, practice, "launch-running")
    program = programs[practice]
    if isinstance(program, ColabSeen):  # no program to ask: why, as each session is seen
        return ColabSeen(name, run_id, practice, program.state, program.detail)
    try:
        listed = program.sessions(timeout_s=60)
    except ColabCallFailed as err:
        return ColabSeen(name, run_id, practice, "unchecked", err.detail.splitlines()[-1])
    endpoint = record.get("endpoint") or None
    if any(s.name == name or s.endpoint == endpoint for s in listed):
        return ColabSeen(name, run_id, practice, "running")
    if endpoint is None and any(s.name == "?" for s in listed):
        return ColabSeen(name, run_id, practice, "unchecked", "a runtime with no name is listed")
    held = colab_ledger().record("deleted", name, run_id, why="colab sessions no longer lists it")
    return ColabSeen(
        name, run_id, practice, "gone", unrecorded=tuple(said_held(held, name, "deleted"))
    )


def _programs(records: list[dict[str, Any]]) -> dict[bool, ColabProgram | ColabSeen]:
    """The program that answers for each kind of record, or what a session is seen as without
    one (its name and run left blank)."""
    return {practice: _program(practice) for practice in {bool(r["practice"]) for r in records}}


def _program(practice: bool) -> ColabProgram | ColabSeen:
    if practice and paths.read_only_home() is not None:
        # The stand-in writes its state (and its calls' log) on every call, even a listing:
        # from a read-only home it cannot answer, nor stop what it runs (issue 56, item 8).
        return ColabSeen("", "", True, "read-only-home", str(practice_home()))
    program = program_for(practice)
    if program is None:
        return ColabSeen("", "", practice, "unchecked", "the colab CLI is not installed")
    return program


def held_on_colab() -> list[ColabSeen]:
    """Each session the ledger holds, checked; no call when it holds none."""
    records = held_records()
    programs = _programs(records)
    return [_look(r, programs) for r in records]


def tear_down_sessions(records: list[dict[str, Any]]) -> list[ColabSeen]:
    """``colab stop`` on each that is still listed, verified by listing; none other touched."""
    programs = _programs(records)
    results = []
    for record in records:
        seen = _look(record, programs)
        program = programs[seen.practice]
        if seen.state != "running" or not isinstance(program, ColabProgram):
            results.append(replace(seen, stopped=seen.state == "gone"))
            continue
        stops = list(stop_session(program, seen.session, seen.run_id, colab_ledger()))
        # Its verdict, and after it the record the disk may have refused (not the last event).
        said = [e for e in stops if isinstance(e, ColabSessionStopped)]
        stopped = bool(said) and said[-1].verified
        detail = said[-1].detail if said else ""
        held = tuple(e for e in stops if isinstance(e, LedgerRecordHeld))
        results.append(
            ColabSeen(seen.session, seen.run_id, seen.practice, "running", detail, stopped, held)
        )
    return results
