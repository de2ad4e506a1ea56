"""The free route: write a Colab or Kaggle notebook, then check the receipt it gives back."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence import notebook
from tpuwizard.core.evidence.receipt import check_receipt, load_receipt
from tpuwizard.core.launch.events.colab import COLAB_FREE_TPU
from tpuwizard.core.launch.plan.packages import PackageSpec, specs_from_field
from tpuwizard.core.routes import Route
from tpuwizard.session.free.packages import NoPackagesHere, free_route_packages
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.typed_input import TypedInput
from tpuwizard.words.colab_text import NO_PACKAGES, colab_chip

PLATFORMS = {
    "colab": f"Google Colab ({colab_chip(COLAB_FREE_TPU)})",
    "kaggle": "Kaggle (TPU VM v5e-8)",
}


def platform_label(title: str, chosen: bool) -> str:
    return f"{title} (chosen)" if chosen else title


class NotebookScreen(WizardScreen[tuple[str, Path, tuple[PackageSpec, ...]]]):
    """Dismissed with where to run the script ("kaggle" or "colab"), the script and the packages
    to install first (Kaggle's only: "Run it on Kaggle for me", "Run it on Colab for me"), or
    BACK."""

    STEP = "Notebook"
    HELP = (
        "Write a notebook, upload it to Colab (File → Upload notebook) or Kaggle (File → Import "
        "Notebook), switch the runtime to TPU and run every cell. Then give the downloaded "
        "receipt.json here to check that it proves a TPU run. Or let tpuwizard run your script "
        "on Kaggle's TPU for you (Kaggle credentials needed; without them it practises against "
        "a local stand-in), or on Colab's through Google's colab CLI (without it, and without "
        "its sign-in, it practises against a local stand-in). Kaggle installs the Packages "
        "you give (and a requirements.txt beside the script) at the kernel's start, beside its "
        "own JAX; Colab's CLI installs none."
    )

    def __init__(self, folder: Path, script: Path | None = None) -> None:
        super().__init__()
        self.folder = folder
        self.script = script

    def on_mount(self) -> None:
        self.query_one("#platform", RadioSet).focus()

    def compose_body(self) -> ComposeResult:
        yield Static("[b]A free TPU in a hosted notebook[/b]", classes="title")
        with RadioSet(id="platform"):
            for key, title in PLATFORMS.items():
                yield RadioButton(platform_label(title, key == "colab"), key == "colab", name=key)
        yield Button("Write the notebook", id="write", variant="primary")
        yield Static(id="steps")
        yield Label("Downloaded receipt")
        with Horizontal(id="receipt-row"):
            yield TypedInput(placeholder="~/Downloads/receipt.json", id="receipt")
            yield Button("Check the receipt", id="check")
        yield Static(id="result")
        yield Label("Or your script, run on Kaggle's (or Colab's) TPU by tpuwizard")
        packages = TypedInput(placeholder="optax, flax (Kaggle only)", id="free-packages")
        packages.border_title = "Packages: Kaggle installs them; Colab cannot"
        yield packages
        with Horizontal(id="kaggle-row"):
            default = str(self.script) if self.script else "main.py"
            yield TypedInput(value=default, placeholder="main.py", id="kaggle-script")
            yield Button("Run it on Kaggle for me", id="kaggle-run")
            yield Button("Run it on Colab for me", id="colab-run")
        yield Static(id="kaggle-said")

    @on(RadioSet.Changed, "#platform")
    def mark_platform(self) -> None:
        # The chosen one in words: both buttons draw the same dot, in different colours.
        for button in self.query_one("#platform", RadioSet).query(RadioButton):
            button.label = platform_label(PLATFORMS[str(button.name)], button.value)

    def platform(self) -> str:
        pressed = self.query_one(RadioSet).pressed_button
        return pressed.name if pressed is not None and pressed.name else "colab"

    @on(Button.Pressed, "#write")
    def write(self) -> None:
        key = self.platform()
        path = notebook.write_notebook(key, self.folder / f"tpuwizard-{key}.ipynb")
        plat = notebook.get_platform(key)
        steps = "\n".join(
            f"  {i}. {notebook.plain(s)}" for i, s in enumerate(notebook.walk_steps(plat), 1)
        )
        self.query_one("#steps", Static).update(
            Text.assemble(("Wrote ", ""), (str(path), "bold"), f"\n{steps}\n{plat.limits}")
        )

    @on(Button.Pressed, "#check")
    @on(Input.Submitted, "#receipt")
    def check(self) -> None:
        key = self.platform()
        result = self.query_one("#result", Static)
        try:
            receipt = load_receipt(Path(self.query_one("#receipt", Input).value).expanduser())
            outcome = check_receipt(receipt, "tpu", notebook.get_platform(key).accelerator)
        except BadInput as err:
            result.update(f"[b]Cannot check:[/b] {err}")
            return
        if outcome.ok:
            result.update("[b]PASS:[/b] this receipt proves a TPU run. " + "; ".join(outcome.facts))
        else:
            result.update("[b]REJECTED:[/b] " + "; ".join(outcome.problems))

    @on(Button.Pressed, "#kaggle-run")
    @on(Input.Submitted, "#kaggle-script")
    def run_on_kaggle(self) -> None:
        self.run_on("kaggle")

    @on(Button.Pressed, "#colab-run")
    def run_on_colab(self) -> None:
        self.run_on("colab")

    def run_on(self, where: str) -> None:
        typed = self.query_one("#kaggle-script", Input).value.strip()
        script = Path(typed).expanduser()
        said = self.query_one("#kaggle-said", Static)
        if not typed or not script.is_file():
            said.update(
                f"[b]No such file:[/b] {typed or '(empty)'}. Give the path of your Python script."
            )
            return
        asked = specs_from_field(self.query_one("#free-packages", Input).value)
        try:
            packages = free_route_packages(Route(where), asked, (), script).specs
        except NoPackagesHere:  # Colab's: the field to clear
            said.update(f"[b]Not run:[/b] {NO_PACKAGES}")
            return
        except BadInput as err:
            said.update(f"[b]Not run:[/b] {err}")
            return
        self.dismiss((where, script, packages))
