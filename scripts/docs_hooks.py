"""MkDocs hooks: the reference tables generated from the code (so the documentation cannot drift
from it), and the screenshots, which live in the repository's own `screenshots/` folder."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
MARKERS = {
    "<!-- generated: events -->": "events_table",
    "<!-- generated: exit-codes -->": "exit_codes_table",
}


def events_table() -> str:
    from tpuwizard.core.launch.events import colab, kaggle
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.events.guide import EVENT_GUIDE

    classes = {
        c.event_name(): c
        for module in (ev, kaggle, colab)  # a launch's events; the free routes' own
        for c in vars(module).values()
        if isinstance(c, type) and issubclass(c, ev.Event) and c is not ev.Event
    }
    rows = ["| event | when it comes | fields | commands |", "|---|---|---|---|"]
    for name, (when, commands) in EVENT_GUIDE.items():
        fields = ", ".join(f"`{f.name}`" for f in dataclasses.fields(classes[name]))
        rows.append(f"| `{name}` | {when} | {fields} | {', '.join(commands) or '—'} |")
    return "\n".join(rows)


def exit_codes_table() -> str:
    from tpuwizard.core.exit_codes import MEANINGS

    return "\n".join(
        ["| code | meaning |", "|---|---|", *(f"| {code} | {what} |" for code, what in MEANINGS)]
    )


def on_page_markdown(markdown: str, page: Any = None, **_: Any) -> str:
    for marker, name in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, globals()[name]())
    if page is not None:
        # A page links the repository's screenshots/ as the Markdown read in the repository
        # finds it (docs/guides/x.md: ../../screenshots/); the site holds them at its root.
        depth = page.file.src_uri.count("/") + 1
        markdown = markdown.replace(
            "](" + "../" * depth + "screenshots/", "](" + "../" * (depth - 1) + "screenshots/"
        )
    return markdown


def on_files(files: Files, config: Any, **_: Any) -> Files:
    for svg in sorted((ROOT / "screenshots").glob("*.svg")):
        files.append(
            File(
                f"screenshots/{svg.name}",
                src_dir=str(ROOT),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    return files
