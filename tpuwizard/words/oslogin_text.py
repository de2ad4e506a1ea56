"""OS Login in words: how the launch will log in (said before the create), and what became of
the key it imported (said after the verified teardown)."""

from __future__ import annotations

from tpuwizard.core.launch.events import launch_events as ev

# The choice made before the create, where the preflight found OS Login on and tpuwizard's own
# SSH is used (with --transport gcloud, the preflight's line says gcloud logs in through it).
IMPORT_CHOSEN = (
    "OS Login is on: tpuwizard imports its SSH key into your OS Login profile until the "
    "launch's deadline, logs in as your POSIX user, and deletes the key after teardown "
    "(--transport gcloud would log in through gcloud instead)."
)


def login_key_words(event: ev.LoginKeyForgotten) -> str:
    short = event.fingerprint[:12]
    if event.still_used_by is not None:
        return (
            f"tpuwizard's SSH key {short} stays in your OS Login profile: "
            f"{event.still_used_by} still logs in with it (its teardown deletes the key)."
        )
    if event.problem is None:
        return f"Deleted tpuwizard's SSH key {short} from your OS Login profile."
    return (
        f"The SSH key {short} stays in your OS Login profile until the launch's deadline "
        f"({event.problem}); the teardown above was verified all the same. To delete it now: "
        f"gcloud compute os-login ssh-keys remove --key={event.fingerprint}"
    )
