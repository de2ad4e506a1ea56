"""How ``launch``'s and ``up``'s workers are reached and as whom the node runs: the transport,
internal addresses only, the service account; the groups hand the command its ``Reach`` part as
``reach``. reach_rules.py says which combinations no transport can reach."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import Words
from tpuwizard.commands.options.group import option_group
from tpuwizard.core.cloud.backends import Transport

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Reach

# Here, not in commands/common.py: every command's start imports that module (see where.py).
transport_option = click.option(
    "--transport",
    type=Words(Transport),
    default=Transport.SSH.value,
    show_default=True,
    help="gcloud for projects that enforce OS Login.",
)


def asked_reach(transport: Transport, internal_ips: bool, service_account: str | None) -> Reach:
    from tpuwizard.core.launch.plan.parts import Reach

    return Reach(transport, internal_ips, service_account)


reach_options = option_group(
    "reach",
    [
        transport_option,
        click.option(
            "--internal-ips",
            is_flag=True,
            help="No external addresses (then only --transport gcloud, through IAP, reaches the "
            "VMs).",
        ),
        click.option(
            "--service-account",
            metavar="EMAIL",
            help="The node's service account (the watchdog deletes with it); default: the "
            "project's Compute Engine default account, which has no roles in organisations made "
            "since May 2024.",
        ),
    ],
    asked_reach,
)
up_reach_options = option_group(
    "reach",
    [
        transport_option,
        click.option(
            "--internal-ips",
            is_flag=True,
            help="No external address (Compute Engine: SSH reaches its internal address, from "
            "inside its network; the TPU API: only --transport gcloud, through IAP).",
        ),
        click.option("--service-account", metavar="EMAIL", help="The VM's service account."),
    ],
    asked_reach,
)
