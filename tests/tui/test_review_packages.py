"""Review's Packages field: the course's list one key away, a requirements.txt beside the script
said on the field, a jax line refused with Create disabled, and all of it inside 80x24."""

from __future__ import annotations

import pytest
from textual.widgets import Button, Input

from tests.tui.pilot_helpers import on_screen, screen_as, until
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.plan.packages import COURSE_PACKAGES, PackageSpec
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.tui.state import WizardState
from tpuwizard.tui.widgets.key_bar import KeyBar


def review_state(**extra) -> WizardState:
    return WizardState(
        practice=True,
        project="tpuwizard-practice",
        zone="us-central1-a",
        accelerator="v5litepod-4",
        **extra,
    )


def whole_on_screen(app, selector: str) -> bool:
    region = app.screen.query_one(selector).region
    return region.height > 0 and region.y >= 1 and region.bottom <= app.size.height - 1


@pytest.mark.parametrize("size", [(80, 24), (100, 32)])
async def test_f2_puts_the_course_packages_into_the_field_and_the_plan(size):
    from tpuwizard.tui.screens.review import ReviewScreen

    state = review_state(
        workload=Workload(packages=(PackageSpec("tinypkg", "the Packages field"),))
    )
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=size) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        screen = screen_as(app, ReviewScreen)
        for selector in ("#packages", "#name", "#max-run", "#create"):
            assert whole_on_screen(app, selector), selector
        assert "f2" in app.screen.query_one(KeyBar).render().plain.lower()
        await pilot.press("f2")
        field = screen.query_one("#packages", Input)
        assert field.value.split() == ["tinypkg", *COURSE_PACKAGES]
        await pilot.press("f2")  # a second press adds nothing twice
        assert field.value.split() == ["tinypkg", *COURSE_PACKAGES]
        plan = state.reviewed(screen.answers()).preview()
        assert [p.text for p in plan.workload.packages] == ["tinypkg", *COURSE_PACKAGES]
        assert not screen.query_one("#create", Button).disabled


async def test_a_jax_package_disables_create_with_the_reason():
    from tpuwizard.tui.screens.review import ReviewScreen

    state = review_state()
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        screen = screen_as(app, ReviewScreen)
        screen.query_one("#packages", Input).value = "optax jax[tpu]==0.4"
        create = screen.query_one("#create", Button)
        await until(pilot, lambda: create.disabled, 30, "Create disabled")
        error = str(screen.query_one("#error").render())
        assert "names jax" in error and "Remove that line" in error, error
        assert whole_on_screen(app, "#error")


async def test_a_requirements_file_beside_the_script_is_said_on_the_field(tmp_path):
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "main.py"
    script.write_text("import tinypkg\n")
    (tmp_path / "requirements.txt").write_text("tinypkg  # from the wheel folder\n")
    state = review_state(workload=Workload(script=script))
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        screen = screen_as(app, ReviewScreen)
        field = screen.query_one("#packages", Input)
        await until(pilot, lambda: field.border_subtitle, 30, "the file said on the field")
        assert "requirements.txt" in str(field.border_subtitle)
        plan = state.reviewed(screen.answers()).preview()
        assert [(p.text, p.origin) for p in plan.workload.packages] == [
            ("tinypkg", "requirements.txt beside the script, line 1")
        ]
