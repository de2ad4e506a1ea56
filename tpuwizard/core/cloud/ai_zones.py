"""AI zones: zones for accelerator capacity (us-central1-ai1a, ...) that Google hides from zone
lists, gcloud and the REST API until the project turns on AI zone visibility, a preview setting
(docs.cloud.google.com/compute/docs/regions-zones/manage-ai-zones, read 2026-12-02). Hidden is
not refused: "turning off AI zone visibility doesn't restrict API endpoints", so a launch that
names one is made there. Which generation each offers is the catalog's ``ai_zones`` (a report).
"""

from __future__ import annotations

from collections.abc import Iterable

from tpuwizard.core.plan import catalog

MANAGE_PAGE = "https://docs.cloud.google.com/compute/docs/regions-zones/manage-ai-zones"
HOW_TO_SEE = (
    "Google hides AI zones from zone lists until the project turns on AI zone visibility "
    f"(a preview setting: {MANAGE_PAGE})"
)


def catalog_ai_zones(slice_: catalog.Slice | None) -> list[str]:
    """The AI zones the catalog lists for ``slice_``'s generation (every AI zone without
    one)."""
    if slice_ is not None:
        return list(slice_.generation.ai_zones)
    return list(catalog.documented_ai_zone_table())


def with_ai_zones(listed: Iterable[str]) -> list[str]:
    """``listed`` (a zone list, which hides AI zones unless visible) and every AI zone the
    catalog lists: a scan for what is ours by its labels must look where a launch may have
    named one, seen or not."""
    zones = list(listed)
    return zones + [z for z in catalog.documented_ai_zone_table() if z not in zones]


def visible_ai_zones(slice_: catalog.Slice | None, listed: Iterable[str]) -> list[str]:
    """The catalog's AI zones for ``slice_`` that a live zone list (``listed``) shows."""
    seen = set(listed)
    return [z for z in catalog_ai_zones(slice_) if z in seen]


def hidden_ai_zones(slice_: catalog.Slice | None, listed: Iterable[str], source: str) -> list[str]:
    """The catalog's AI zones for ``slice_`` that a live survey did not list: hidden from
    this project (empty for the catalog's own survey, which lists none of them as rows)."""
    if source != "live":
        return []
    seen = set(listed)
    return [z for z in catalog_ai_zones(slice_) if z not in seen]


def ai_zone_line(slice_: catalog.Slice | None, listed: Iterable[str], source: str) -> str | None:
    """One line, said once under a zone list: the AI zones a live survey could not see and how
    to see them, or (the catalog's survey) the catalog's AI zones, labelled; None when neither."""
    what = slice_.name if slice_ is not None else "TPUs"
    if source == "live":
        hidden = hidden_ai_zones(slice_, listed, source)
        if not hidden:
            return None
        kind = "AI zones" if len(hidden) > 1 else "an AI zone"
        return (
            f"Not visible to this project: {', '.join(hidden)}, {kind} the catalog lists for "
            f"{what}. {HOW_TO_SEE}; a launch may still name one (--zone {hidden[0]})."
        )
    zones = catalog_ai_zones(slice_)
    if not zones:
        return None
    return (
        f"AI zones the catalog lists for {what} (not rows above): {', '.join(zones)}. "
        f"{HOW_TO_SEE}; a launch may name one (--zone {zones[0]})."
    )
