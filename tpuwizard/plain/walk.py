"""The plain prompt mode (``tpuwizard --plain``): the same walk as the wizard, as questions in
the scrolling terminal, over the same core and the same lifecycle events."""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import questionary

from tpuwizard.core.cloud import gcloud_config
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.diagnose.tpu7x_access import access_note
from tpuwizard.core.deadlines import STALL_TIMEOUT_MIN, deadline_bounds_text, deadline_problem
from tpuwizard.core.errors import BadInput, PlanRefused
from tpuwizard.core.evidence import notebook
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT, EXIT_CLOUD, EXIT_INTERRUPTED
from tpuwizard.core.launch.events.launch_events import (
    BootstrapLine,
    Finished,
    ScriptLine,
    VerifierLine,
)
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.parts import Deadline, Guards, Resume, Where, Workload
from tpuwizard.core.plan import catalog, routes
from tpuwizard.core.remote.sync import folder_sent_if_fine
from tpuwizard.core.routes import Route
from tpuwizard.plain.capacity import SliceQuestions
from tpuwizard.plain.prompt import (
    checkpoints_check,
    is_file,
    packages_check,
    stall_check,
    text_question,
    zone_choices,
)
from tpuwizard.session.kept.lines import recorded_kept
from tpuwizard.session.launch_handle import LaunchHandle
from tpuwizard.session.prepare.outcomes import (
    Ask,
    Outlook,
    Prepared,
    Question,
    Ready,
    Refusal,
    Stage,
)
from tpuwizard.session.prepare.pipeline import preview
from tpuwizard.session.session import Session
from tpuwizard.session.signals import exit_code, stop_on_signals
from tpuwizard.session.watchdog import check_words
from tpuwizard.words.choice_words import all_words
from tpuwizard.words.course_text import fetch_note
from tpuwizard.words.event_text import (
    SCRIPT_TAIL,
    describe,
    handed_over_stop_words,
    refusal_text,
)
from tpuwizard.words.figures import count, price_footnote
from tpuwizard.words.guard_text import autocheckpoint_question, stall_question
from tpuwizard.words.preflight_text import before_create_lines
from tpuwizard.words.resume_text import resume_question
from tpuwizard.words.sent_text import folder_lines, size_words
from tpuwizard.words.session_text import practice_words, survey_words
from tpuwizard.words.summary_text import summary_lines
from tpuwizard.words.text_wrap import wrap_paragraph
from tpuwizard.words.typed_numbers import typed_number

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.packages import PackageSpec


class PlainWizard:
    def __init__(
        self, sandbox: bool = False, run_dir: Path | None = None, **prompt_io: Any
    ) -> None:
        # prompt_io (input=, output=) lets tests drive the prompts through a pipe.
        self.sandbox, self.io = sandbox, prompt_io
        self.runs = run_dir  # the base of run folders asked for; the session says the default
        self.session: Session | None = None  # made when the walk starts (run)
        echo = prompt_io.pop("echo", None)
        self.out = echo or print  # a line as it is (the script's own output)
        # Its own paragraphs are fitted to the terminal at word boundaries; lines captured by a
        # test (echo=) stay whole unless the test gives a width.
        self.width: int | None = prompt_io.pop("width", None)
        self.wraps = echo is None or self.width is not None

    def say(self, text: str) -> None:
        """One of plain mode's own paragraphs, wrapped to the terminal's width."""
        if not self.wraps:
            self.out(text)
            return
        self.out(wrap_paragraph(text, self.width or shutil.get_terminal_size((80, 24)).columns))

    def ask(self, question: Any) -> Any:
        """The answer; Ctrl+C raises KeyboardInterrupt instead of returning None.

        Run without prompt_toolkit's own handler of event-loop errors: that one prints the error
        and waits for Enter in a prompt of its own, which, where it cannot read (piped or closed
        input), fails in turn, and each failure reaches the handler again, without end and with
        memory growing. asyncio's default handler logs the error and the question goes on."""
        if question.should_skip_question:
            return question.default
        return question.application.run(set_exception_handler=False)

    def select(self, message: str, choices: list[Any], default: Any = None) -> Any:
        return self.ask(questionary.select(message, choices=choices, default=default, **self.io))

    def text(self, message: str, default: str = "", check=None) -> str:
        """A typed answer; Enter alone takes ``default`` (shown greyed, replaced by typing)."""
        return self.ask(text_question(message, default, check, self.io)) or default

    def run(self) -> int:
        ctx = gcloud_config.discover()
        session = self.session = Session.for_walk(self.sandbox, self.runs, ctx)
        try:
            return self.walk(session, ctx)
        finally:
            # However the walk ends (done, an error, Ctrl+C), no launch of it runs by now
            # (create waits for its thread); in practice, what is kept or left lives on.
            session.close()

    def walk(self, session: Session, ctx: gcloud_config.GcloudContext) -> int:
        """The questions, from the route to the launch; returns the exit code."""
        if session.practice:
            self.say(practice_words(session.mode))
        self.say_kept()  # an earlier `up` may still be billing: say so before anything else
        route = self.choose_route()
        if route == "notebook":
            return self.notebook_route(session)
        project = self.choose_project(ctx, session)
        session.switch(session.practice, project)
        self.read_prices(session)
        asked = self.choose_where(session, Route(route), project, ctx.zone)
        outlook = self.look_ahead(session, asked)
        asked = self.ask_the_rest(asked, outlook)
        answers, draft = self.agreed(session, asked, outlook)
        if not self.ready_to_create(answers, draft):
            self.say("Nothing was created.")
            return 0
        return self.create(session, answers, outlook)

    def choose_where(
        self, session: Session, route: Route, project: str, current: str | None
    ) -> LaunchAnswers:
        """The slice, the zone, the name and the deadline: where and for how long."""
        accelerator = self.choose_slice(route)
        slice_ = catalog.parse_accelerator(accelerator)  # plain mode's answer, parsed once
        zone = self.choose_zone(session, slice_, current, route)
        name = (
            self.text(
                "Name (empty for tpuwizard-<run id>)",
                check=lambda t: t and gcloud_config.validate_node_name(t),
            )
            or None
        )
        minutes = float(
            self.text(
                f"Deadline in minutes ({deadline_bounds_text()})",
                f"{Deadline().max_run(route):g}",  # the route's default
                check=_minutes,
            )
        )
        where = Where(slice_, zone, project, route, name=name)
        return LaunchAnswers(where, deadline=Deadline(minutes))

    def look_ahead(self, session: Session, answers: LaunchAnswers) -> Outlook:
        """What the session decides of the answers so far (the backend, reading Compute
        Engine's quota where auto waits on it; the watchdog's check): said where it is news."""
        outlook = session.look_ahead(answers)
        if outlook.refusal is not None:  # a type no backend serves this way (multi-host TPU7x)
            raise PlanRefused(list(outlook.refusal.reasons))
        assert outlook.backend is not None
        if outlook.backend.backend == Backend.COMPUTE:
            self.say(f"Made through Compute Engine: {outlook.backend.reason}")
            if note := access_note(answers.where.slice):  # TPU7x: through the account team
                self.say(f"{note}.")
        return outlook

    def ask_the_rest(self, answers: LaunchAnswers, outlook: Outlook) -> LaunchAnswers:
        """The watchdog (where the route and backend have one), the deeper checks, the script
        and what it writes, its checkpoints (and Autocheckpoint), the stall guard, packages and
        JAX."""
        watchdog = False  # no watchdog to ask about: Google's deadline, or none on this route
        if outlook.asks_watchdog:
            if outlook.watchdog_check is not None:
                self.say(check_words(outlook.watchdog_check))
            watchdog = self.ask_watchdog(outlook.watchdog_default)
        deep = self.ask(
            questionary.confirm(
                "Deeper checks: a precision profile and a profiler trace, in the run folder?",
                default=False,
                **self.io,
            )
        )
        script = self.text(
            "Your script to run after the verifier (empty for none)",
            check=lambda t: is_file(t) if t else None,
        )
        fetch = (
            self.text("Files it writes, to copy back (e.g. reports/*.json; empty for none)")
            if script
            else ""
        )
        if note := fetch_note(fetch.split(",")):
            self.say(note)
        checkpoints = self.ask_checkpoints(outlook.offers_resume, script)
        resume = Resume(checkpoints)
        if outlook.offers_autocheckpoint(answers.where, resume):
            resume = Resume(checkpoints, autocheckpoint=self.ask_autocheckpoint())
        stall_minutes = self.ask_stall(script)
        packages, jax = self.ask_packages(script)
        return replace(
            answers,
            workload=Workload(
                script=Path(script) if script else None,
                fetch=tuple(p.strip() for p in fetch.split(",") if p.strip()),
                packages=packages,
                jax=jax,
                precision=deep,
                trace=deep,
            ),
            deadline=replace(answers.deadline, watchdog=watchdog),
            resume=resume,
            guards=Guards(stall_minutes=stall_minutes),
        )

    def ask_packages(self, script: str) -> tuple[tuple[PackageSpec, ...], str | None]:
        """Packages beside the pinned JAX (a requirements.txt beside the script is said), and
        the worker's JAX: asked where there is a script."""
        from tpuwizard.core.launch.plan.packages import (
            COURSE_PACKAGES,
            gather_packages,
            specs_from_field,
        )
        from tpuwizard.core.plan.jax_versions import DEFAULT, check_jax, versions

        packages = gather_packages((), (), Path(script) if script else None)
        if packages.auto_words():
            self.say(packages.auto_words() or "")
        if not script:
            return packages.specs, None
        # As the wizard's Packages field: beside the pinned JAX, checked when typed.
        typed = self.text(
            f"Packages to add, separated by spaces (the course's: {' '.join(COURSE_PACKAGES)}"
            "; empty for none)",
            check=packages_check,
        )
        # The course's programs behave differently across JAX versions: asked with them.
        jax = self.text(f"The worker's JAX ({', '.join(versions())})", DEFAULT.version, check_jax)
        return (*packages.specs, *specs_from_field(typed)), jax.strip() or None

    def agreed(
        self, session: Session, answers: LaunchAnswers, outlook: Outlook
    ) -> tuple[LaunchAnswers, Prepared]:
        """The answers every rule lets through (the session's preview: nothing is called yet);
        where only the watchdog stands in the way (an account you may not attach), it is
        asked again. Returns them, with the preview that let them through."""
        while True:
            draft = preview(answers, outlook, session.runs_base, session.practice)
            if not draft.reasons:
                return answers, draft
            for problem in all_words(draft.reasons, "plain"):
                self.say(problem)
            outcome = draft.outcome
            if not (isinstance(outcome, Question) and outcome.ask is Ask.WITHOUT_WATCHDOG):
                raise PlanRefused(list(draft.reasons))
            deadline = replace(answers.deadline, watchdog=self.ask_watchdog(False))
            answers = replace(answers, deadline=deadline)

    def ready_to_create(self, answers: LaunchAnswers, draft: Prepared) -> bool:
        """The deadline in words and what goes to the workers, then "Create?"."""
        assert draft.watchdog is not None
        self.say(draft.watchdog.deadline_line())
        sent = folder_sent_if_fine(answers.workload.script)  # above 50 MB the question says it
        for line in folder_lines(sent, "to each worker"):
            self.say(line)
        large = f", and send {size_words(sent.size)} to it," if sent and sent.large else ""
        create = f"Create {answers.where.slice.name} in {answers.where.zone}{large} now?"
        return bool(self.ask(questionary.confirm(create, default=not large, **self.io)))

    def create(self, session: Session, answers: LaunchAnswers, outlook: Outlook) -> int:
        """The session's pipeline before create, as launch's, up's and the wizard's: the
        preflight's lines (a FAIL: nothing created, exit 3), then the launch."""
        prepared = session.prepare(answers, found=outlook)
        if prepared.preflight is not None:
            for line in before_create_lines(prepared.preflight):
                self.say(line)
        if isinstance(prepared.outcome, Ready):
            return self.launch(session.start_launch(prepared.outcome.checked))
        if isinstance(prepared.outcome, Refusal) and prepared.outcome.stage is Stage.PREFLIGHT:
            return EXIT_CLOUD
        raise PlanRefused(list(prepared.reasons))

    def ask_checkpoints(self, offered: bool, script: str) -> str | None:
        """A spot run with a script: the folder it saves checkpoints in, to resume after a
        preemption (the wizard's field on Review); None: it does not resume."""
        if not offered or not script:
            return None
        return self.text(resume_question(), check=checkpoints_check).strip() or None

    def ask_autocheckpoint(self) -> bool | None:
        """Where the session's look ahead offers it (a run that resumes from checkpoints on a
        node that can have it): Google's Autocheckpoint, on unless answered no (None: the
        plan's default)."""
        wanted = self.ask(questionary.confirm(autocheckpoint_question(), default=True, **self.io))
        return None if wanted else False

    def ask_stall(self, script: str) -> float | None:
        """A run with a script: the stall guard's minutes (the wizard's F4 on Review); None:
        its default. Without one only the verifier runs, under the default."""
        if not script:
            return None
        default = f"{STALL_TIMEOUT_MIN}"
        typed = self.text(stall_question(STALL_TIMEOUT_MIN), default, check=stall_check)
        return None if typed.strip() == default else float(typed)

    def ask_watchdog(self, default: bool) -> bool:
        words = "Watchdog: the VM deletes itself at the deadline, even if this computer is off?"
        return bool(self.ask(questionary.confirm(words, default=default, **self.io)))

    def choose_route(self) -> str:
        budget = self.select("Budget?", list(routes.BUDGETS), "normal")
        chip_choices = [questionary.Choice(count(c, "chip"), c) for c in routes.CHIP_COUNTS]
        chips = self.select("Chips needed?", chip_choices, chip_choices[1])
        length = self.select("How long will it run?", list(routes.RUN_LENGTHS), "1-4 hours")
        billing = self.select("Do you have a billing account?", ["yes", "no"], "yes") == "yes"
        advice = routes.recommend(budget, chips, length, billing)
        self.say(f"Recommended: {routes.route_title(advice.route)}. {advice.reason}")
        table = routes.route_table()
        choices = [
            questionary.Choice(f"{r.title}: {r.cost}, runs {r.max_run}", r.key) for r in table
        ]
        default = next(c for c in choices if c.value == advice.route)
        return self.select("Route", choices, default)

    def notebook_route(self, session: Session) -> int:
        choices = [
            questionary.Choice("Write a Colab notebook", "colab"),
            questionary.Choice("Write a Kaggle notebook", "kaggle"),
            questionary.Choice("Run it on Kaggle for me (followed here, checked)", "kaggle-run"),
            questionary.Choice("Run it on Colab for me (followed here, checked)", "colab-run"),
        ]
        key = self.select("The free notebook route", choices, choices[0])
        if key in ("kaggle-run", "colab-run"):
            return self.free_run(session, key.removesuffix("-run"))
        path = notebook.write_notebook(key, session.runs_base.parent / f"tpuwizard-{key}.ipynb")
        plat = notebook.get_platform(key)
        self.say(f"Wrote {path}. Then, in {plat.title}:")
        for i, step in enumerate(notebook.walk_steps(plat), 1):
            self.say(f"  {i}. {notebook.plain(step)}")
        self.say(f"Then check it: {notebook.check_command(key)}")
        return 0

    def free_run(self, session: Session, where: str) -> int:
        """The script run on Kaggle's TPU or a Colab TPU runtime (the stand-ins in practice)
        through the session, as the wizard's "Run it on ... for me": its lines as `launch
        --route kaggle|colab` prints them, then the summary. Returns the run's exit code."""
        title = {"kaggle": "Kaggle's TPU", "colab": "a Colab TPU"}[where]
        script = Path(self.text(f"Your script to run on {title}", check=is_file))
        route: Any
        if where == "kaggle":
            from tpuwizard.session.free.kaggle import kaggle_route_for

            route = kaggle_route_for(script, self.sandbox, session.runs_base)
        else:  # no colab program (real): BadInput says how to install it, exit 2, nothing run
            from tpuwizard.session.free.colab import colab_route_for

            route = colab_route_for(script, self.sandbox, session.runs_base)

        def show(event: Any) -> None:
            for line in describe(event, "plain"):
                (self.out if isinstance(event, ScriptLine) else self.say)(line)

        code = int(route.follow(show, self.say))  # its summary folded by the route, as saved
        for line in summary_lines(route.summary, "plain"):
            (self.out if line.startswith(SCRIPT_TAIL) else self.say)(line)
        return code

    def choose_project(self, ctx: gcloud_config.GcloudContext, session: Session) -> str:
        if session.practice and session.project:
            return session.project  # the session's practice project
        for what, command in ctx.problems:
            self.say(f"{what}: {command}")
        return self.text("Project id", session.project or "", check=gcloud_config.validate_project)

    def choose_slice(self, route: str = "vm") -> str:
        return SliceQuestions(self).choose_slice(route)

    def choose_zone(
        self, session: Session, slice_: catalog.Slice, current: str | None, route: str = "vm"
    ) -> str:
        """The zones offering the type as the wizard's Zones step lists them: the route's usable
        ones first, the cheapest first, each with its price; one the route cannot use is shown
        with why, and cannot be chosen, so no answer is refused later."""
        from tpuwizard.core.cloud import zones

        accelerator = slice_.name
        answer = session.zone_survey(strict=False)  # a failed live survey: the catalog, said so
        offering = answer.survey.offering(accelerator)
        if not offering:
            raise BadInput(f"No zone offers {accelerator}.")
        rows = answer.route_rows(slice_, route)
        where = survey_words(answer)
        self.say(f"Zones offering {accelerator} ({where}). {zones.OFFERED_NOTE}")
        choices = zone_choices(rows)
        footnote = price_footnote([r.price.note for r in rows])
        if footnote:
            self.say(footnote)
        usable = [r.zone for r in rows if not r.unusable]
        if not usable:
            raise BadInput(f"No zone offering {accelerator} serves this route: {rows[0].unusable}.")
        start = current if current in usable else usable[0]
        return self.select("Zone", choices, start)

    def launch(self, handle: LaunchHandle) -> int:
        code = 3
        with stop_on_signals(handle, self.say, handed_over_stop_words) as received:
            for event in handle.events():
                raw = isinstance(event, BootstrapLine | VerifierLine | ScriptLine)
                for line in describe(event, "plain"):
                    (self.out if raw else self.say)(line)  # the worker's own lines as they are
                if isinstance(event, Finished):
                    code = event.exit_code
            for line in summary_lines(handle.summary, "plain"):
                (self.out if line.startswith(SCRIPT_TAIL) else self.say)(line)
        self.say_kept()
        return exit_code(received, code)

    def read_prices(self, session: Session) -> None:
        """Price the walk from the Billing Catalog (the cached read, else read now), as the
        wizard does; said, with its date, or why the offline table's figures stand."""
        from tpuwizard.session.prices import use_catalog_prices

        self.say(f"Prices: {use_catalog_prices(session)}.")

    def say_kept(self) -> None:
        """One line per kept node, from the ledger (what `status` checks with the cloud)."""
        try:
            infos = recorded_kept()
        except Exception:  # a ledger that cannot be read costs these lines, not the walk
            return
        from tpuwizard.words.kept_end import kept_info_line

        for info in infos:
            self.say(kept_info_line(info))


def _minutes(text: str) -> None:
    """The core's deadline bounds, as every front end checks them."""
    minutes = typed_number(text, f"a number of minutes from {deadline_bounds_text()}")
    problem = deadline_problem(minutes)
    if problem:
        raise BadInput(problem)


def run_plain(sandbox: bool = False) -> int:
    try:
        return PlainWizard(sandbox).run()
    except KeyboardInterrupt:
        print("Stopped before anything was created.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BadInput as err:
        print(f"Error: {refusal_text(err, 'plain')}", file=sys.stderr)
        return EXIT_BAD_INPUT
