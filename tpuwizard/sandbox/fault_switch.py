"""A serving sandbox's faults replaced in place: a lasting practice sandbox serves command after
command, and a rehearsal's faults are that rehearsal's, never the next command's (a lasting
sandbox kept ``slow_create=30`` for every later command). See session/practice/lasting_faults.py."""

from __future__ import annotations

import dataclasses

from tpuwizard.sandbox.faults import parse_faults
from tpuwizard.sandbox.state import SandboxState


def switch_faults(state: SandboxState, spec: str, delay: float) -> None:
    """Serve ``spec``'s faults from now on ("" for none); ``delay``: the provisioning delay when
    they set none (``slow_create`` sets its own). Every part holds the same Faults object, so
    it is changed in place; the delay each part copied is set again."""
    wanted = parse_faults(spec)
    with state.lock:
        for f in dataclasses.fields(wanted):
            setattr(state.faults, f.name, getattr(wanted, f.name))
        state.delay = wanted.slow_create if wanted.slow_create is not None else delay
        for part in (state.nodes, state.queued, state.instances):
            part.delay = state.delay
