"""Error types shared by the core and the front ends."""

from __future__ import annotations


class BadInput(ValueError):
    """Something the user typed is wrong. The message says what was wrong and what to type instead.

    Front ends show the message and exit with code 2; nothing has been sent to the cloud.
    """
