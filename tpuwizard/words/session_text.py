"""What every front end says of the session itself: why it is practice, and where a zone survey
came from, in the same words in the wizard, plain mode and the commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV

if TYPE_CHECKING:
    from pathlib import Path

    from tpuwizard.session.decision import Mode, ZoneAnswer


def survey_words(answer: ZoneAnswer) -> str:
    """Where a zone survey came from, in the same words in every front end."""
    if not answer.live:
        return "documented, not live" + (f" ({answer.failure})" if answer.failure else "")
    where = "from the practice sandbox" if answer.practice else "live from the TPU API"
    return where + (", cached" if answer.survey.cached else "")


def practice_words(mode: Mode) -> str:
    """Why this session is practice, in one line every front end says the same way."""
    why = {
        "asked": "practice was asked for (--sandbox)",
        "endpoint": f"{ENDPOINT_ENV} points at a sandbox ({mode.endpoint})",
        "no credentials": "no Google credentials were found",
    }.get(mode.why, "practice was chosen")
    if mode.why == "no credentials" and mode.adc_missing:  # `gcloud auth login` alone: say so
        return (
            "[practice] Using the local sandbox (nothing here is a real Cloud TPU, nothing is "
            f"billed) because {mode.adc_missing}"
        )
    return (
        f"[practice] Using the local sandbox because {why}: nothing here is a real Cloud TPU "
        "and nothing is billed."
    )


def real_words(project: str) -> str:
    """The line a real session starts with: what it creates, Google bills (never guessed: only
    said once the session is real and its project known)."""
    return (
        f"[real] Using Google Cloud, project {project}: what tpuwizard creates here is billed "
        "to that project's billing account."
    )


def read_only_home_words(home: Path, held_in: Path | None) -> str:
    """Said first by ``status``, ``down`` and ``teardown`` working from a read-only home."""
    where = (
        f"in {held_in} (yours alone)"
        if held_in is not None
        else "in this command's memory only (the temporary folder refused them too)"
    )
    return (
        f"TPUWIZARD_HOME {home} is read-only: listing, deleting and verifying go ahead, and "
        f"what this command records in its ledgers (the TPUs', Kaggle's, Colab's) is held "
        f"{where} until a command can write "
        "the home again, which moves it in."
    )
