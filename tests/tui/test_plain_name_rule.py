"""Plain mode's name rule is shown whole, wrapped at word boundaries, not cut at the terminal's
edge (issue 27, item 14): prompt_toolkit draws a validation message in one row by default."""

from __future__ import annotations

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.application.current import set_app
from prompt_toolkit.data_structures import Size
from prompt_toolkit.document import Document
from prompt_toolkit.filters import has_validation_error
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.layout.containers import ConditionalContainer
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.validation import ValidationError

from tpuwizard.core.cloud import gcloud_config
from tpuwizard.plain.prompt import text_question


class HundredColumns(DummyOutput):
    def get_size(self) -> Size:
        return Size(rows=30, columns=100)


def test_the_name_rule_is_wrapped_at_words_and_its_row_grows_to_hold_it():
    output = HundredColumns()
    with create_pipe_input() as keys, create_app_session(input=keys, output=output):
        question = text_question(
            "Name", "", gcloud_config.validate_node_name, {"input": keys, "output": output}
        )
        app = question.application
        (toolbar,) = [
            c
            for c in app.layout.walk()
            if isinstance(c, ConditionalContainer) and c.filter is has_validation_error
        ]
        with set_app(app), pytest.raises(ValidationError) as refused:
            # As while the question is asked: the terminal is 100 columns wide.
            app.current_buffer.validator.validate(Document("Bad_Name"))
        message = refused.value.message
        lines = message.splitlines()
        assert len(lines) > 1 and all(len(line) < 100 for line in lines)
        assert " ".join(lines).endswith("not ending with a hyphen (e.g. jax-course-tpu-01).")
        # The row is as tall as the message: prompt_toolkit's own is one row, cut at the edge.
        app.current_buffer.validation_error = refused.value
        with set_app(app):
            assert toolbar.content.preferred_height(100, 30).preferred == len(lines)
