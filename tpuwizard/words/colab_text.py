"""The Colab route's events in words (event_text.describe hands them here)."""

from __future__ import annotations

from tpuwizard.core.launch.events.colab import (
    ColabPlanned,
    ColabSessionReady,
    ColabSessionStopped,
)

ColabEvent = ColabPlanned | ColabSessionReady | ColabSessionStopped


def colab_lines(event: ColabEvent) -> list[str]:
    match event:
        case ColabPlanned():
            if event.practice:
                where = "[practice] Asking the Colab stand-in (on this computer) for"
            else:
                where = "Asking Colab (through Google's colab CLI) for"
            return [
                f"{where} the session {event.session} with a TPU {event.tpu}; your script's limit "
                f"{event.max_run_minutes:g} min; receipt expected on {event.expect}. "
                f"Run {event.run_id}."
            ]
        case ColabSessionReady():
            hardware = f" ({event.hardware})" if event.hardware else ""
            return [
                f"Session {event.session} is ready{hardware}: uploading your script's folder, "
                "then the verifier, then your script. It is stopped at the end, whatever happens."
            ]
        case ColabSessionStopped():
            if event.verified:
                return [f"Stopped {event.session}: colab sessions no longer lists it."]
            return [
                f"{event.session} was NOT verified stopped: {event.detail}. It spends your Colab "
                f"usage until it stops: `tpuwizard teardown {event.session}` tries again."
            ]
    return []
