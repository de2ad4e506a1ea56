"""Driving the wizard with Textual's Pilot."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, TypeVar

from textual.app import App
from textual.screen import Screen
from textual.widgets import Button, RadioButton

ScreenT = TypeVar("ScreenT", bound=Screen[Any])


async def until(pilot, condition, seconds: float = 60.0, what: str = "") -> None:
    for _ in range(int(seconds * 20)):
        if condition():
            if pilot.app.is_running:
                await pilot.pause()  # until the screen's queues drain: it has finished mounting
            return
        # Plain sleep: the app runs beside us on this loop, and it may be shutting down.
        await asyncio.sleep(0.05)
    state = getattr(pilot.app, "state", None)
    failure = getattr(state, "last_failure", None)  # why a launch ended early, when one did
    log = getattr(pilot.app.screen, "log_text", None)  # a step that streams: its last lines
    shown = "\n".join(log().splitlines()[-25:]) if callable(log) else ""
    raise AssertionError(
        f"timed out waiting for {what}; on {type(pilot.app.screen).__name__}"
        + (f"; the launch failed: {failure}" if failure else "")
        + (f"; its log ends:\n{shown}" if shown else "")
    )


async def on_screen(pilot, name: str, seconds: float = 60.0) -> None:
    await until(pilot, lambda: type(pilot.app.screen).__name__ == name, seconds, name)


def screen_as(app: App[Any], kind: type[ScreenT]) -> ScreenT:
    """The screen on show, which the test knows is a ``kind``: what it reads of it is then
    checked by mypy (``app.screen`` is any ``Screen``)."""
    screen = app.screen
    assert isinstance(screen, kind), f"on {type(screen).__name__}, not {kind.__name__}"
    return screen


class ShownScreens(list):
    """The names of the screens shown, in order; ``objects`` holds the screens themselves (one
    that was replaced can still be read)."""

    def __init__(self) -> None:
        super().__init__()
        self.objects: list = []


def record_screens(app) -> ShownScreens:
    """The names of the screens the app shows from now on, in order. A phase can pass faster
    than a poll on a loaded machine; the record cannot miss one."""
    shown = ShownScreens()
    for method in ("push_screen", "switch_screen"):
        original = getattr(app, method)

        def recording(screen, *args, _original=original, **kwargs):
            if not isinstance(screen, str):
                shown.append(type(screen).__name__)
                shown.objects.append(screen)
            return _original(screen, *args, **kwargs)

        setattr(app, method, recording)
    return shown


async def press(pilot, selector: str) -> None:
    """Press a button (or choose a radio button) as a click would, without screen geometry:
    under a loaded CI machine a click can land where a widget was a frame ago."""
    widget = pilot.app.screen.query(selector).first()
    if isinstance(widget, Button):
        widget.press()
    elif isinstance(widget, RadioButton):
        widget.value = True
    else:
        assert await pilot.click(selector), f"could not click {selector}"
    await pilot.pause()  # until the press has been handled


async def next_step(pilot) -> None:
    """Go on from the step on show: its Next button, or Enter on the route step (no button:
    Enter, or Next in the key bar, goes on with the chosen card)."""
    if pilot.app.screen.query("#next"):
        await press(pilot, "#next")
    else:
        await pilot.press("enter")
        await pilot.pause()


async def walk_to_capacity(pilot) -> None:
    """From the start, through Route and Account as they are, to the Capacity step."""
    for screen in ("RouteScreen", "AccountScreen"):
        await on_screen(pilot, screen)
        await next_step(pilot)
    await on_screen(pilot, "CapacityScreen")


async def walk_to_review(pilot) -> None:
    await walk_to_capacity(pilot)
    await next_step(pilot)
    await on_screen(pilot, "ZonesScreen")
    await until(pilot, lambda: pilot.app.screen.zones, what="the zone survey")
    await next_step(pilot)
    await on_screen(pilot, "ReviewScreen")


def buttons(app) -> list[str]:
    return [str(b.label) for b in app.screen.query(Button)]


def sandbox_nodes(home: Path) -> dict:
    path = home / "sandbox" / "state.json"
    if not path.exists():
        return {}
    state = json.loads(path.read_text())
    return {**state["nodes"], **state["queued"]}


def make_leftover(home: Path) -> str:
    """A node an earlier run of this install left running in the practice sandbox; its name."""
    from tpuwizard.core.cloud.tpu.client import TpuCloud
    from tpuwizard.core.cloud.types import NodeRequest
    from tpuwizard.core.paths import owner_label
    from tpuwizard.core.plan.catalog import parse_accelerator
    from tpuwizard.sandbox.server import make_server
    from tpuwizard.sandbox.serving import start_in_thread
    from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT

    earlier = make_server(home / "sandbox", delay=0)
    start_in_thread(earlier)
    try:
        cloud = TpuCloud(PRACTICE_PROJECT, endpoint=earlier.endpoint)
        request = NodeRequest(
            zone="us-west1-c",
            node_id="forgotten",
            slice=parse_accelerator("v5litepod-1"),
            run_id="20261128-101010-abcd",
            owner=owner_label(),  # an earlier run of this install
        )
        cloud.wait_for_node("us-west1-c", "forgotten", cloud.create_node(request), poll=0.05)
    finally:
        earlier.shutdown()
        earlier.server_close()
    return "forgotten"
