"""An error in plain mode's event loop (a failed callback) is logged and the question goes on.

prompt_toolkit's own handler prints it and waits for Enter in a prompt of its own; where that
prompt cannot read (stdin piped away, as under pytest or `tpuwizard plain < answers`), it fails,
its failure reaches the handler again, and so on without end, memory growing: a test worker grew
to 10 GB that way and was killed. Run in a child with a memory cap, so the old behaviour fails the
test instead of the machine.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import REPO

CHILD = textwrap.dedent(
    """
    import asyncio, io, resource, sys, threading
    resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000))
    import questionary
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from tpuwizard.plain.walk import PlainWizard

    class Unreadable(io.TextIOBase):  # stdin as pytest's capture leaves it
        def fileno(self):
            raise io.UnsupportedOperation("stdin has no fileno()")

    sys.stdin = Unreadable()

    def failing_callback():
        raise RuntimeError("a callback failed in the loop")

    with create_pipe_input() as keys:
        question = questionary.text("Name?", input=keys, output=DummyOutput())
        question.application.pre_run_callables.append(
            lambda: asyncio.get_running_loop().call_soon(failing_callback)
        )
        threading.Timer(0.5, lambda: keys.send_text("tpu-one\\r")).start()
        wizard = PlainWizard(input=keys, output=DummyOutput(), echo=print)
        print("answer:", wizard.ask(question))
    """
)


def test_an_error_in_the_event_loop_is_logged_and_the_question_is_answered():
    try:
        child = subprocess.run(
            [sys.executable, "-c", CHILD], cwd=REPO, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired as hung:
        raise AssertionError("plain mode hung on an error in its event loop") from hung
    assert child.returncode == 0, child.stderr[-2000:]
    assert "answer: tpu-one" in child.stdout
    assert "a callback failed in the loop" in child.stderr  # said, not swallowed
    assert "Press ENTER" not in child.stdout + child.stderr
