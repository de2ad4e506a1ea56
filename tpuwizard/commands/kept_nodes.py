"""Opening and ending a kept node from the iterating commands (``up``, ``run``, ``watch``, ``ssh``):
what each says when the node was preempted or could not be verified gone."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import ask_yes_no, cloud_errors, say
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_TEARDOWN

if TYPE_CHECKING:
    from tpuwizard.session.kept.nodes import KeptNode
    from tpuwizard.session.session import Session


def delete_kept(session: Session, name: str, run_id: str | None = None) -> None:
    """Delete the kept node ``name`` and verify it is gone (a failed ``up``, or the end of a
    watch); a node that failed its setup or verification is no use for iterating. With
    ``run_id``, only that run's record: another run's node of the same name (two ``up --name
    X`` at once) is that run's."""
    from tpuwizard.words.bill_words import may_still_bill

    entries = [
        e
        for e in session.kept.entries()
        if name in (e.resource.name, e.resource.node_id) and run_id in (None, e.resource.run_id)
    ]
    for result in session.delete([e.resource for e in entries]):
        may = may_still_bill(session.practice)
        verdict = "verified gone" if result.verified else f"NOT verified gone; {may}"
        say(f"{result.resource.name}: {verdict}")


def open_kept(session: Session, node: str | None) -> KeptNode:
    """The kept node to run on. One Google preempted is deleted now (its watchdog died with
    it), and the command ends: exit 3 as for any preemption, 4 if the delete was not verified."""
    from tpuwizard.commands.choosing import say_preempted
    from tpuwizard.session.kept.nodes import KeptPreempted

    with cloud_errors():
        try:
            return session.kept.open(node)
        except KeptPreempted as ended:
            say_preempted(ended.results, session.practice)
            if not ended.verified:
                raise click.exceptions.Exit(EXIT_TEARDOWN) from None
            r = ended.results[0].resource
            flag = " --sandbox" if session.practice else ""
            say(
                f"Start another: tpuwizard up{flag} --accelerator {r.accelerator} "
                f"--zone {r.zone} --route {r.route}"
            )
            raise click.exceptions.Exit(EXIT_CLOUD) from None


def offer_teardown(session: Session, name: str, ask: bool = True) -> None:
    """After ``run``, ``watch`` or ``ssh``: ask whether to tear the kept node down (said, not
    asked, without a terminal or after a hang-up)."""
    from tpuwizard.words.bill_words import keeps_billing, still_running

    sandbox_flag = " --sandbox" if session.practice else ""
    down = f"`tpuwizard down{sandbox_flag} {name}` ends it"
    if not ask or not sys.stdin.isatty():  # no terminal (or it hung up): nobody to ask
        say(f"{name} is {still_running(session.practice)}: {down}.")
        return
    if ask_yes_no(f"Tear down {name} now?"):
        delete_kept(session, name)
    else:
        say(f"{name} {keeps_billing(session.practice)}: {down}.")
