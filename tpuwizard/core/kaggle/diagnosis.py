"""What went wrong on the Kaggle route, in plain words, and what to do next."""

from __future__ import annotations

from tpuwizard.core.choices import Said
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.kaggle.credentials import NoCredentials

ISSUE_PINNED_IMAGE = "https://github.com/Kaggle/kaggle-cli/issues/1197"


def no_credentials(missing: NoCredentials) -> Diagnosis:
    return Diagnosis(
        kind="kaggle_credentials",
        title="No Kaggle credentials were found",
        explanation="Looked at (as Kaggle's own client does): " + "; ".join(missing.looked_at),
        next_steps=[
            "Create a token at https://www.kaggle.com/settings/api and save it as "
            "~/.kaggle/access_token (or export KAGGLE_API_TOKEN), then run this again.",
            "Or practise first: add --sandbox (nothing reaches Kaggle).",
        ],
    )


def call_failed(what: str, detail: str, status: int | None, kernel: str | None = None) -> Diagnosis:
    """``kernel``: the kernel whose push had started, which may exist on Kaggle now."""
    if status is None:
        return no_answer(what, detail, kernel)
    if status in (401, 403) and what == "sign-in":
        return Diagnosis(
            kind="kaggle_credentials",
            title="Kaggle did not accept the credentials",
            explanation=f"Kaggle answered: {detail}",
            next_steps=["Create a new token at https://www.kaggle.com/settings/api."],
        )
    return Diagnosis(
        kind="kaggle_call",
        title=f"Kaggle failed while {what}",
        explanation=f"Kaggle answered{f' (HTTP {status})' if status else ''}: {detail}",
        next_steps=["Try again in a few minutes; https://www.kaggle.com/code shows your kernels."],
    )


def push_not_listed(detail: str, kernel: str) -> Diagnosis:
    """The push was not answered and Kaggle did not list the kernel right after: its record is
    closed, so ``status`` no longer asks for it; a push answered late may still land."""
    return Diagnosis(
        kind="kaggle_no_answer",
        title="Kaggle did not answer the push",
        explanation=(
            f"No answer came ({detail}), and Kaggle does not list {kernel} now, so tpuwizard "
            "takes it as not pushed and no longer follows it. A push Kaggle answers late can "
            "still land, its session then spending your weekly TPU quota."
        ),
        next_steps=[
            f"In a few minutes, open https://www.kaggle.com/code/{kernel} (or run `kaggle "
            "kernels list --mine`); if it is there, delete it on that page.",
            "Then run this again.",
        ],
    )


def no_answer(what: str, detail: str, kernel: str | None) -> Diagnosis:
    """Kaggle (or the way to it) gave no answer: a network down, or a server that accepted the
    connection and never answered (each call is bounded: TPUWIZARD_KAGGLE_TIMEOUT)."""
    if kernel is None:
        return Diagnosis(
            kind="kaggle_no_answer",
            title=f"Kaggle did not answer while {what}",
            explanation=f"No answer came ({detail}). Nothing was pushed.",
            next_steps=["Check this computer's network, then run this again."],
        )
    return Diagnosis(
        kind="kaggle_no_answer",
        title=f"Kaggle did not answer while {what}",
        explanation=(
            f"No answer came ({detail}). {kernel} was pushed, or its push had started: it may "
            "be on Kaggle, its session running there and spending your weekly TPU quota."
        ),
        next_steps=[
            f"Run `tpuwizard status`: it asks Kaggle for {kernel}, and `tpuwizard teardown "
            f"{kernel}` deletes it once its session ended.",
            f"Its page, if it was pushed: https://www.kaggle.com/code/{kernel}",
        ],
    )


def quota_exhausted(left_s: float, allowed_s: float) -> Diagnosis:
    return Diagnosis(
        kind="kaggle_quota",
        title="Your weekly Kaggle TPU quota is used up",
        explanation=(
            f"{left_s / 3600:.1f} h of {allowed_s / 3600:.0f} h left this week: a TPU kernel "
            "would not start. Nothing was pushed."
        ),
        next_steps=[
            "Wait for the weekly reset (Kaggle shows when, under Settings → Quotas), or "
            "practise meanwhile with --sandbox."
        ],
    )


def push_refused(error: str) -> Diagnosis:
    needs_phone = "phone" in error.lower() or "verif" in error.lower()
    steps: list[Said] = (
        [
            "Verify your phone number at https://www.kaggle.com/settings (Kaggle asks for it "
            "before accelerators and internet), then run this again."
        ]
        if needs_phone
        else ["Read Kaggle's words above; https://www.kaggle.com/code shows your kernels."]
    )
    return Diagnosis(
        kind="kaggle_unverified" if needs_phone else "kaggle_push",
        title="Kaggle refused the kernel",
        explanation=f"Kaggle answered: {error}. No session was started.",
        next_steps=steps,
    )


def not_on_expected_platform(
    expect: str, problems: list[str], docker_image: str | None
) -> Diagnosis:
    cause = (
        f" The kernel's metadata pins the Docker image {docker_image}: a kernel with a pinned "
        f"image runs on CPU although a TPU was asked for ({ISSUE_PINNED_IMAGE})."
        if docker_image
        else ""
    )
    steps: list[Said] = (
        [
            "Unpin the environment in the kernel's settings on kaggle.com (use the latest "
            "environment) and run again; tpuwizard itself never pins one."
        ]
        if docker_image
        else ["Check the kernel's accelerator on its page on kaggle.com, then run again."]
    )
    return Diagnosis(
        kind="kaggle_cpu_run",
        title=f"The kernel did not run on {expect.upper()}",
        explanation="The receipt says: " + "; ".join(problems) + "." + cause,
        next_steps=steps,
    )


def no_receipt(state: str, failure: str | None) -> Diagnosis:
    said = f" Kaggle says: {failure}." if failure else ""
    return Diagnosis(
        kind="kaggle_kernel_error",
        title="The kernel ended without a receipt",
        explanation=f"Its session ended {state}.{said} The log is in the run folder.",
        next_steps=["Read kernel.log in the run folder, fix the cause, and run again."],
    )


def script_failed(state: str, failure: str | None) -> Diagnosis:
    said = f" Kaggle says: {failure}." if failure else ""
    return Diagnosis(
        kind="kaggle_kernel_error",
        title="Your script failed on Kaggle",
        explanation=f"The verifier passed; the session ended {state}.{said}",
        next_steps=["Read output.txt in the run folder, fix the script, and run again."],
    )


def connection_lost(what: str, detail: str, kernel: str, ends_by: float, url: str) -> Diagnosis:
    """The network dropped after the push: the kernel may still run on Kaggle."""
    import time

    until = time.strftime("%H:%M", time.localtime(ends_by))
    return Diagnosis(
        kind="kaggle_connection_lost",
        title=f"The connection to Kaggle was lost while {what}",
        explanation=(
            f"No answer came ({detail}). {kernel} was pushed, and may still run on Kaggle until "
            f"about {until} (its session limit), spending your weekly TPU quota."
        ),
        next_steps=[
            "Check this computer's network, then run `tpuwizard status`: it asks Kaggle "
            "for the kernel's state.",
            f"Its page shows its log and output meanwhile: {url}",
        ],
    )
