"""Error types shared by the core and the front ends."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Every command and the wizard's first frame import this module; the choices only a refused
    # plan needs (issue 38: start-up).
    from tpuwizard.core.choices import Said
    from tpuwizard.core.cloud.diagnose.tpu_text import TpuError


class BadInput(ValueError):
    """Something the user typed is wrong. The message says what was wrong and what to type instead.

    Front ends show the message and exit with code 2; nothing has been sent to the cloud.
    """


class PlanRefused(BadInput):
    """A launch plan breaks rules (``LaunchPlan.problems()``). ``problems`` may name choices,
    which each front end words (words/choice_words.py); ``str()`` is only the fallback."""

    def __init__(self, problems: list[Said]) -> None:
        from tpuwizard.core.choices import Phrase

        self.problems = list(problems)
        super().__init__(" ".join(p.text if isinstance(p, Phrase) else p for p in problems))


class LedgerUnwritable(OSError):
    """The record that must come before a create (or a push, or a session) could not be
    written, so nothing was created: what no record names could be lost after a crash."""

    def __init__(self, ledger: object, err: OSError) -> None:
        super().__init__(err.errno, err.strerror or str(err), str(ledger))
        self.ledger = str(ledger)


class CreateFailed(Exception):
    """A create operation ended with an error; ``error`` is the google.api_core exception.

    ``route`` is "spot" when it was a spot create: Google refuses those with codes (13, 5) that
    mean "no capacity" only there.
    """

    def __init__(self, error: Exception, route: str | None = None) -> None:
        super().__init__(str(error))
        self.error, self.route = error, route


class QueueExpired(CreateFailed):
    """A queued request waited for capacity as long as it was allowed and got none: Google failed
    it at its ``queueingPolicy.validUntilDuration`` ("unavailability of resources within the
    constraints of the request", the v2 discovery document's FAILED), or this client's wait, of
    the same length, ended first while it was still queued. On Compute Engine: a Flex-start VM
    or a Flex-start slice's BULK MIG that got no capacity in its wait."""

    def __init__(
        self,
        name: str,
        state: str,
        waited_s: float | None,
        error: Exception,
        route: str | None,
        bound: str | None = None,
    ) -> None:
        super().__init__(error, route)
        self.name, self.state, self.waited_s = name, state, waited_s
        # What bounded the wait, in words (None: the TPU API's validUntilDuration); on Compute
        # Engine a Flex-start VM's requestValidForDuration, or for a BULK MIG tpuwizard's own
        # --queue-wait (Google sets none there).
        self.bound = bound


class QueueSuspended(CreateFailed):
    """A queued request went SUSPENDED before its node was used: its VMs were deleted.
    ``initiator`` is Google's ``stateInitiator`` (USER or SERVICE), when it says."""

    def __init__(self, name: str, initiator: str | None, route: str | None) -> None:
        super().__init__(RuntimeError(f"the queued resource {name} is SUSPENDED"), route)
        self.name, self.initiator = name, initiator


class WaitTimedOut(TimeoutError):
    def __init__(self, what: str, state: str, seconds: float) -> None:
        super().__init__(f"{what} was still {state} after {seconds:.0f} s")
        self.what, self.state, self.seconds = what, state, seconds


class RemoteError(RuntimeError):
    """A remote command could not be run (not: it ran and exited non-zero)."""


class ScriptFailed(RemoteError):
    """The user's own script ran on the workers and exited non-zero: nothing of tpuwizard's
    failed, so its diagnosis points at the script's output, not at SSH."""

    def __init__(
        self,
        code: int,
        missing_module: str | None = None,
        package: str | None = None,
        tpu_error: TpuError | None = None,
    ) -> None:
        # A ModuleNotFoundError in its output: the module, and the package that provides it.
        self.code, self.missing_module, self.package = code, missing_module, package
        # What the TPU itself said in its output (HBM ran out, an XLA code, a held TPU).
        self.tpu_error = tpu_error
        super().__init__(f"your script exited with code {code}")


class VerifierTpuError(RemoteError):
    """The verifier failed with the TPU's own words in its output (a held TPU, HBM, an XLA
    code): tpuwizard's own short program, so the trouble is the worker's TPU."""

    def __init__(self, worker: int, tpu_error: TpuError) -> None:
        self.worker, self.tpu_error = worker, tpu_error
        super().__init__(f"the verifier failed on worker {worker}: {tpu_error.line}")


class PackagesFailed(RemoteError):
    """The packages asked for could not be installed on a worker (before the script ran):
    ``kind`` is no_route, not_found, conflict or failed (core/remote/packages.py)."""

    def __init__(self, worker: int, kind: str, why: str, fix: str) -> None:
        self.worker, self.kind, self.why, self.fix = worker, kind, why, fix
        super().__init__(f"installing the packages on worker {worker} failed: {why}")


class NodeGone(RemoteError):
    """A command on a node failed because the node itself went away: the API no longer knows it
    (``state`` None) or says it is no longer READY (DELETING, STOPPED...)."""

    def __init__(self, node: str, state: str | None, doing: str, why: str) -> None:
        self.node, self.state, self.doing, self.why = node, state, doing, why
        now = "no longer exists" if state is None else f"is {state}"
        super().__init__(f"{node} {now} ({doing}: {why})")


class HeartbeatFailed(RemoteError):
    """A heartbeat to a kept node that is still READY did not land on its worker 0."""

    def __init__(self, node: str, why: str) -> None:
        self.node, self.why = node, why
        super().__init__(why)  # front ends put the node's name and "heartbeat not sent" first


class Unreachable(RemoteError):
    """A READY node whose workers have no address this computer can reach."""

    def __init__(self, node: str, workers: list[int], why: str) -> None:
        self.node, self.workers, self.why = node, workers, why
        names = ", ".join(f"w{w}" for w in workers)
        super().__init__(f"{node}: no reachable address for {names} ({why})")


class StalledIn(StrEnum):
    """Which of tpuwizard's jobs the stall guard watched when it ended a run."""

    VERIFIER = "verifier"  # before the user's script: the verifier (and its join)
    SCRIPT = "script"

    @property
    def words(self) -> str:
        return "the verifier" if self is StalledIn.VERIFIER else "the script"

    @property
    def report_file(self) -> str:
        """Where the whole report is kept in the run folder: the script's at the end of its
        output (OUTPUT_FILE), the verifier's in a file of its own."""
        return "verifier-stall.txt" if self is StalledIn.VERIFIER else "output.txt"


class WorkersStalled(RemoteError):
    """The stall guard ended the run: ``stalled`` printed nothing and used no CPU time for the
    stall timeout, in ``phase``'s job; ``report`` says what each worker printed last and its
    whole stack, ``lines`` the same one fact per line (stacks shortened)."""

    def __init__(
        self,
        stalled: list[int],
        report: str,
        lines: list[str],
        phase: StalledIn = StalledIn.SCRIPT,
    ) -> None:
        self.stalled, self.report, self.lines, self.phase = stalled, report, lines, phase
        names = ", ".join(f"w{w}" for w in stalled)
        super().__init__(f"{phase.words} stalled on {names}: the stall guard ended the run")


class SliceIncomplete(RuntimeError):
    """Some workers never joined the slice."""

    def __init__(self, missing: list[int], waited: list[int], timeout: float) -> None:
        self.missing, self.waited, self.timeout = missing, waited, timeout
        names = ", ".join(f"w{w}" for w in missing)
        super().__init__(f"{names} never joined the slice")


class VersionMismatch(RuntimeError):
    """Workers run different jax / jaxlib / libtpu: a pod would hang or fail obscurely."""


def shown(text: str, limit: int = 40) -> str:
    """``text`` quoted for a message: control characters escaped and a long value cut, so a
    pasted newline or 300 characters cannot break the message that names them."""
    escaped = repr(text)[1:-1] if not text.isprintable() else text
    if len(escaped) > limit:
        escaped = f"{escaped[:limit]}... ({len(text)} characters)"
    return f"'{escaped}'"
