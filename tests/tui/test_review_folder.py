"""Review says how much of the script's folder goes to each worker (on the script field's border)
and names the secrets that stay here; over 50 MB, Create asks first (issue 49, item 7; issue 48,
item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from tests.tui.pilot_helpers import on_screen, press, until
from tests.tui.test_review_packages import review_state
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.plan.parts import Workload


def lesson(tmp_path: Path, data_bytes: int) -> Path:
    folder = tmp_path / "lesson"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_ed25519").write_text("SECRET\n")
    (folder / "main.py").write_text("print(1)\n")
    with open(folder / "data.bin", "wb") as data:
        data.truncate(data_bytes)  # sparse: its size without the disk
    return folder / "main.py"


@pytest.mark.parametrize("size", [(80, 24), (100, 32)])
async def test_a_large_folder_is_said_and_asked_about_on_create(tmp_path, size):
    from tpuwizard.tui.screens.review import ReviewScreen

    state = review_state(workload=Workload(script=lesson(tmp_path, 60_000_000)))
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=size) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        review = app.screen
        field = review.query_one("#script", Input)
        await until(pilot, lambda: "sent" in str(field.border_subtitle), 30, "the size")
        assert str(field.border_subtitle) == "2 files, 60 MB sent; 1 secret kept here"
        await until(pilot, lambda: app._notifications, 30, "the secrets' note")
        said = " ".join(str(n.message) for n in app._notifications)
        assert ".ssh/" in said and "stay on this computer" in said
        await press(pilot, "#create")
        await on_screen(pilot, "ConfirmScreen", 30)
        question = str(app.screen.query_one("#question", Static).render())
        assert "60 MB" in question and ".tpuwizardignore" in question
        await press(pilot, "#no")  # Back: still on Review, nothing decided
        await on_screen(pilot, "ReviewScreen", 30)
        assert app.screen is review
        await press(pilot, "#create")
        await on_screen(pilot, "ConfirmScreen", 30)
        await press(pilot, "#yes")
        await until(pilot, lambda: review not in app.screen_stack, 30, "Review dismissed")


async def test_a_small_folder_creates_without_a_question(tmp_path):
    from tpuwizard.tui.screens.review import ReviewScreen

    state = review_state(workload=Workload(script=lesson(tmp_path, 1000)))
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        review = app.screen
        field = review.query_one("#script", Input)
        await until(pilot, lambda: "sent" in str(field.border_subtitle), 30, "the size")
        assert str(field.border_subtitle) == "2 files, 1 kB sent; 1 secret kept here"
        await press(pilot, "#create")
        await until(pilot, lambda: review not in app.screen_stack, 30, "Review dismissed")
        assert "ConfirmScreen" not in [type(s).__name__ for s in app.screen_stack]
