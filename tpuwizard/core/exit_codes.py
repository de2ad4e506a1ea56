"""The exit codes every front end ends with, as DESIGN.md fixes them: one table, so the wizard,
plain mode and the commands cannot drift apart."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1  # verification (or the user's script) failed
EXIT_BAD_INPUT = 2  # what was typed is wrong; nothing was asked of the cloud
EXIT_CLOUD = 3  # the cloud refused or failed; a diagnosis says why
EXIT_TEARDOWN = 4  # something could not be verified gone: it may still bill
SIGNAL_BASE = 128  # a process ended by signal N exits 128 + N, as shells report it
# The stop signals' numbers, as POSIX's kill gives them (Linux and macOS alike): importing
# ``signal`` for them cost every command's start 0.5 ms (issue 38); test_imports.py checks them.
SIGHUP, SIGINT, SIGTERM = 1, 2, 15


def for_signal(signum: int) -> int:
    """The code after the stop signal ``signum``: 128 + N (130 for Ctrl+C)."""
    return SIGNAL_BASE + signum


EXIT_INTERRUPTED = for_signal(SIGINT)  # Ctrl+C: 130

# What each code means, as the reference page says it (generated from this table, never retyped).
MEANINGS: tuple[tuple[str, str], ...] = (
    (str(EXIT_OK), "done; also when you answer no at a question and nothing is deleted"),
    (
        str(EXIT_FAILED),
        "the verifier or your script failed, or a `--fetch` file did not come back whole, "
        "or a node to keep (`up`, `launch --keep`) could not be kept with its watchdog and "
        "was deleted instead, or a run on a kept node was refused because another run or "
        "another process (without `--even-if-held`) holds it",
    ),
    (str(EXIT_BAD_INPUT), "bad input: what was typed is wrong; nothing was asked of the cloud"),
    (str(EXIT_CLOUD), "the cloud refused or failed; a diagnosis says why and what to do"),
    (
        str(EXIT_TEARDOWN),
        "something could not be verified gone (or checked): it may still bill; or a node was "
        "kept whose ledger record the disk refused (said where it is held)",
    ),
    (
        f"{SIGNAL_BASE}+N",
        f"stopped by signal N: {EXIT_INTERRUPTED} Ctrl+C (SIGINT), "
        f"{for_signal(SIGTERM)} SIGTERM, {for_signal(SIGHUP)} SIGHUP "
        "(a closed terminal or a dropped SSH session)",
    ),
)
