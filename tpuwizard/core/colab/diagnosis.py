"""What went wrong on the Colab route, in plain words, and what to do next."""

from __future__ import annotations

from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.colab.program import ColabCallFailed

INSTALL_WORDS = (
    "Google's colab CLI is not installed (not on PATH): install it with `pip install "
    "google-colab-cli` (it needs Python 3.12 or newer; its first sign-in needs a browser once), "
    "or write a notebook to run by hand: `tpuwizard notebook --platform colab`."
)


def call_failed(err: ColabCallFailed, session: str, practice: bool) -> Diagnosis:
    """The diagnosis for a failed ``colab`` command, by the kind its words show."""
    flag = " --sandbox" if practice else ""
    status = "tpuwizard status" + flag
    match err.kind:
        case "sign-in":
            return Diagnosis(
                kind="colab_sign_in",
                title="The colab CLI is not signed in",
                explanation="It asked for a browser sign-in, which a run cannot answer: "
                + err.detail,
                next_steps=[
                    "Sign in once in a terminal: run `colab sessions`, open the URL it prints in "
                    "a browser and paste the code back; then run this again."
                ],
            )
        case "refused":
            return Diagnosis(
                kind="colab_no_tpu",
                title="Colab gave no TPU runtime",
                explanation=f"colab answered: {err.detail}",
                next_steps=[
                    "Free TPU runtimes come and go: try again later, or stop a session you no "
                    "longer use (`colab sessions` lists them).",
                    "Or run the notebook by hand: `tpuwizard notebook --platform colab`.",
                ],
            )
        case "lost":
            return Diagnosis(
                kind="colab_session_lost",
                title=f"The session {session} vanished while {err.what}",
                explanation=f"colab answered: {err.detail} (Colab reclaims idle or long runtimes).",
                next_steps=["Run it again; what came back so far is in the run folder."],
            )
        case "timeout":
            return Diagnosis(
                kind="colab_timeout",
                title=f"The limit passed while {err.what}",
                explanation="colab exec's --timeout (from --max-run) passed before the code "
                "ended; the code may still have run until the session was stopped.",
                next_steps=["Give a longer --max-run, or make the script shorter."],
            )
        case "silent":
            return Diagnosis(
                kind="colab_silent",
                title=f"The colab CLI stopped answering while {err.what}",
                explanation=err.detail + "; tpuwizard ended its call.",
                next_steps=[
                    f"Check your network; then `{status}` lists the session if it still exists, "
                    f"and `tpuwizard teardown {session}{flag}` stops it."
                ],
            )
    return Diagnosis(
        kind="colab_call",
        title=f"The colab CLI failed while {err.what}",
        explanation=f"It exited {err.code}: {err.detail}",
        next_steps=[f"Try again in a few minutes; `{status}` lists the session if it exists."],
    )


def verifier_failed(expect: str, problems: list[str], code: int | None) -> Diagnosis:
    if expect == "tpu":
        what = "The runtime Colab gave did not show a TPU to JAX"
    else:
        what = f"The verifier did not pass on {expect}"
    exit_words = f" (the verifier exited {code})" if code else ""
    return Diagnosis(
        kind="colab_verification",
        title=what,
        explanation="; ".join(problems) + exit_words + ". Your script was not run.",
        next_steps=["The receipt in the run folder says what JAX saw; run it again later."],
    )


def script_failed(code: int | None) -> Diagnosis:
    said = "left no exit code (see the output above)" if code is None else f"exited {code}"
    return Diagnosis(
        kind="script",
        title=f"Your script {said}",
        explanation="The verifier passed on the runtime; the script itself failed.",
        next_steps=["Its whole output is output.txt in the run folder."],
    )
