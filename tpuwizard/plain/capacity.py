"""Plain mode's capacity questions: the training state (a size, or parameters and a recipe, or
a program compiled for each slice), then the slice, priced for the route as the wizard's
Capacity step prices it."""

from __future__ import annotations

from typing import Any, Protocol

import questionary

from tpuwizard.core.plan import fit
from tpuwizard.plain.prompt import is_file, size_or_params
from tpuwizard.words.figures import price_cell


class Asker(Protocol):
    """What the questions need of plain mode: its prompts and its way of saying things."""

    io: dict[str, Any]

    def ask(self, question: Any) -> Any: ...
    def select(self, message: str, choices: list[Any], default: Any = None) -> Any: ...
    def text(self, message: str, default: str = "", check: Any = None) -> str: ...
    def say(self, text: str) -> None: ...


class SliceQuestions:
    """The questions that end in a slice to create."""

    def __init__(self, asker: Asker) -> None:
        self.asker = asker

    def ask_state(self, known: str | None = None) -> float:
        """The training state in GiB: a size, or parameters and a recipe (as the wizard asks)."""
        known = known or self.asker.select(
            "What do you know about your training state?",
            [
                questionary.Choice("its size in GiB", "size"),
                questionary.Choice("the model's parameter count", "params"),
            ],
            "size",
        )
        params = ""
        if known == "size":
            size = self.asker.text(
                "Training state size (GiB, or e.g. 51.5GB)", "48", check=size_or_params
            )
            try:
                return fit.parse_size_gib(size)
            except fit.LooksLikeParams as err:
                self.asker.say(str(err))
                if not self.asker.ask(
                    questionary.confirm(
                        f"Use {err.params} as the parameter count?", default=True, **self.asker.io
                    )
                ):
                    return self.ask_state()
                params = err.params
        params = self.asker.text(
            "Parameters (e.g. 7B, 350M)", params or "1B", check=fit.parse_params
        )
        recipe = self.asker.select(
            "Recipe",
            [
                questionary.Choice(f"{k}: {v[0]:g} bytes/param, {v[1]}", k)
                for k, v in fit.RECIPES.items()
            ],
            "bf16-adam",
        )
        return fit.state_from_params(fit.parse_params(params), recipe)

    def choose_slice(self, route: str = "vm") -> str:
        known = self.asker.select(
            "What do you know about your training state?",
            [
                questionary.Choice("its size in GiB", "size"),
                questionary.Choice("the model's parameter count", "params"),
                questionary.Choice(
                    "my program (compile its training step for each slice)", "program"
                ),
            ],
            "size",
        )
        if known == "program":
            program = self.asker.text(
                "Your program's file (it defines tpuwizard_plan)", check=is_file
            )
            return self.choose_slice_from_program(program)
        state = self.ask_state(known)
        # The route's prices, as the wizard's Capacity shows them (Flex-start's as "at most").
        fits = fit.plan(state, fit.select_slices(single_host=True), route=route)
        from tpuwizard.core.handover.larger import verdict_with_larger

        self.asker.say(verdict_with_larger(state, fits, route=route))
        choices = [
            questionary.Choice(
                f"{f.name:<13} {'fits' if f.fits_sharded else 'too small':<9} "
                f"spare {f.headroom_gib:6.1f} GiB/chip  "
                + price_cell(f.price_per_hour_usd, "", f.price_at_most_usd)
                + "/h",
                f.name,
            )
            for f in fits
        ]
        best = fit.preselected(fits)  # the wizard's rule; plain mode asks the slice once
        while True:
            name = self.asker.select(
                "Slice", choices, next(c for c in choices if c.value == best.name)
            )
            chosen = next(f for f in fits if f.name == name)
            if chosen.fits_sharded:
                return name
            self.asker.say(fit.slice_verdict(state, chosen))
            if self.asker.ask(
                questionary.confirm(
                    f"Use {name} anyway? The run will fail.", default=False, **self.asker.io
                )
            ):
                return name

    def choose_slice_from_program(self, program: str) -> str:
        """Compile the program's step for each single-host slice; the rows print as they come."""
        from tpuwizard.core.plan import program_advice, program_fit

        size = program_advice.size_text
        results = []
        from tpuwizard.core.plan.jax_versions import compile_words

        planner = program_fit.ProgramPlanner(program, fit.select_slices(single_host=True))
        # The worker's JAX is asked later: this compares with the table's default.
        self.asker.say(compile_words(None, planner.method == "tpu-compile"))
        counting = planner.method == "shapes-only"  # nothing compiles: no time per slice
        self.asker.say(program_advice.working_words(program, len(planner.slices), planner.method))
        for r in planner.results():
            results.append(r)
            took = "" if counting else f" ({'cached' if r.cached else f'{r.seconds:.1f} s'})"
            self.asker.say(
                f"  {r.name:<13} {'fits' if r.fits else 'too big':<8} peak "
                f"{size(r.per_device_bytes['peak'])} of {size(r.usable_bytes_per_device)}{took}"
            )
        for line in [*program_advice.slice_notes(results), *program_advice.overall(results)]:
            self.asker.say(line)
        choices = [questionary.Choice(r.name, r.name) for r in results]
        best = next((c for c, r in zip(choices, results, strict=True) if r.fits), choices[0])
        return self.asker.select("Slice", choices, best)
