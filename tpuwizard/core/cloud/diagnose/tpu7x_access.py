"""TPU7x's access rule, in the words every front end and the preflight share, and the diagnosis
of a refusal that may mean a project without it.

Google's TPU7x training page (docs.cloud.google.com/tpu/docs/tpu7x-training, read 2026-12-01)
asks, before anything else: "Get access to TPU7x. For more information, contact your account
team." What Google answers a project that has no access is on no page we have. tpuwizard assumes
the code (HTTP 403, or a zero quota) and never the text: the diagnosis keys on the code alone, and
says the link between the two is unconfirmed.
"""

from __future__ import annotations

from tpuwizard.core.cloud.diagnose.diagnosis import Context, Diagnosis
from tpuwizard.core.plan import catalog

ACCESS_PAGE = "https://docs.cloud.google.com/tpu/docs/tpu7x-training"
ACCESS_NOTE = (
    "TPU7x needs access that Google grants through your account team "
    f"({ACCESS_PAGE}); a project without it is refused at create"
)


def is_tpu7x(slice_: catalog.Slice | None) -> bool:
    return slice_ is not None and slice_.generation.key == "tpu7x"


def access_note(slice_: catalog.Slice | None) -> str | None:
    """The account-team note for a TPU7x slice (Review, the plan line, the preflight), else
    None."""
    return ACCESS_NOTE if is_tpu7x(slice_) else None


def http_code(err: BaseException) -> int | None:
    """The HTTP status of a refused call (api_core's ``code``), or of a failed operation."""
    code = getattr(err, "code", None)
    if isinstance(code, int):
        return code
    status = getattr(err, "http_status", None)
    return status if isinstance(status, int) else None


def access_diagnosis(err: BaseException, ctx: Context) -> Diagnosis | None:
    """A 403 on a TPU7x create: most likely a project without TPU7x access. Keyed on the code
    (Google's words for it are unpublished); None for any other error or type."""
    if not is_tpu7x(ctx.slice) or http_code(err) != 403:
        return None
    message = str(getattr(err, "message", None) or err)
    project = ctx.project or "PROJECT_ID"
    return Diagnosis(
        "tpu7x_access",
        "Compute Engine refused TPU7x (403)",
        f"Google answered 403 to creating {ctx.accelerator} in {project} ({message}). "
        f"{ACCESS_NOTE[:1].upper()}{ACCESS_NOTE[1:]}. That a project without access gets a 403 "
        "is tpuwizard's assumption (unconfirmed: Google publishes no text for it); a missing "
        "role answers 403 too.",
        [
            f"Ask your Google Cloud account team for TPU7x access for {project} ({ACCESS_PAGE}).",
            "If the project has access, check your role: Compute Instance Admin "
            "(roles/compute.instanceAdmin.v1).",
            "Or choose another generation, such as v6e, that needs no such grant.",
        ],
    )
