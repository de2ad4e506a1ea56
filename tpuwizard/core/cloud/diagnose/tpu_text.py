"""What a TPU says about itself in a script's or the verifier's output, read with its numbers.

Three kinds of trouble are the chip's, not the script's logic: HBM ran out (at compile time, the
compiler's limit; at run time, the allocator's), an XLA error with a documented code (openxla/xla
``docs/errors/``: ``E1000: ...`` and a link to its page), and a TPU another process holds
(libtpu's lockfile, "already in use by process with pid N", ``/dev/vfio/N`` or ``/dev/accelN``
busy). Each is read from one line, kept whole; :class:`TpuErrorWatch` reads a run's lines as
they come. The texts matched are in tests/unit/data/tpu_errors/ as the chips printed them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import Enum

# XLA prints sizes with tsl's HumanReadableNumBytes: powers of 1024, one letter ("15.75G").
_SCALE = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}
_SIZE = r"([0-9]+(?:\.[0-9]+)?)([KMGTP]?)(?:i?B)?"


class TpuTrouble(Enum):
    HBM_OUT_OF_MEMORY = "hbm_out_of_memory"
    XLA_ERROR = "xla_error"  # a documented code with no numbers read
    HELD = "tpu_held"


class OomWhen(Enum):
    COMPILE = "compile"  # the compiler's accounting: nothing ran
    RUN = "run"  # the runtime's allocator, while the program ran or loaded


@dataclass(frozen=True)
class TpuError:
    trouble: TpuTrouble
    line: str  # the whole line it was read from, as printed
    code: str | None = None  # "E1000", where the text names one or its kind implies one
    needed_bytes: int | None = None  # per device: what the step or the array asked for
    available_bytes: int | None = None  # per device: the limit, or what was free then
    when: OomWhen | None = None
    holder_pid: int | None = None  # the process that holds the TPU, where the text names it
    device_file: str | None = None  # /dev/vfio/0, /dev/accel0

    @property
    def available_is_free_now(self) -> bool:
        """At run time the allocator names what was free then, not the device's limit."""
        return self.when is OomWhen.RUN


def _bytes(number: str, unit: str) -> int:
    return int(float(number) * _SCALE[unit])


# (pattern, code, when, which groups hold (needed, available); a third pair is added to needed)
_OOM_TEXTS: tuple[tuple[re.Pattern[str], str, OomWhen], ...] = (
    # "Ran out of memory in memory space hbm. Used 21.95G of 15.48G hbm."
    (re.compile(rf"Used {_SIZE} of {_SIZE} hbm"), "E1000", OomWhen.COMPILE),
    # "the total memory required for HLO temporaries (15.89G) exceeds available HBM (15.75G)"
    (
        re.compile(
            rf"memory required for HLO temporaries \({_SIZE}\) exceeds available HBM \({_SIZE}\)"
        ),
        "E1000",
        OomWhen.COMPILE,
    ),
    # "Error allocating device buffer: Attempting to allocate 8.00M. ... There are 6.43M free."
    (
        re.compile(
            rf"allocating device buffer: Attempting to allocate {_SIZE}\. .*?There are {_SIZE} free"
        ),
        "E0100",
        OomWhen.RUN,
    ),
    # "Error loading program '...': Attempting to reserve 29.49G at the bottom of memory. ..."
    (
        re.compile(
            rf"Attempting to reserve {_SIZE} at the bottom of memory\. .*?There are {_SIZE} free"
        ),
        "E0101",
        OomWhen.RUN,
    ),
)
# "TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm usage 174.10G, exceeding available bytes:
# 95.74G" (XLA's E1000 sample, v5p)
_TC_SC = re.compile(
    rf"TensorCore Hbm usage:? {_SIZE}, SparseCore Hbm usage:? {_SIZE}, "
    rf"exceeding available bytes:? {_SIZE}"
)
_HELD_PID = re.compile(r"TPU is already in use by process with pid (\d+)")
_HELD_FILE = re.compile(r"(/dev/(?:vfio/\d+|accel\d+))\)?:? Device or resource busy")
_HELD_WORDS = ("libtpu multi-process lockfile", "libtpu.so already in use by another process")
# XLA's numbered errors: "E1200: CompileTimeHostOffloadOutputLocationMismatch:" or the link to the
# page. An absl log line ("E1205 12:34:56.789 ...") has a space, not a colon, after its date.
_CODE = re.compile(r"\b(E[0-9]{4}): [A-Z][A-Za-z]+")
_CODE_LINK = re.compile(r"openxla\.org/xla/errors/error_([0-9]{4})")


def read_tpu_error(line: str) -> TpuError | None:
    """The TPU trouble one line of output names, or None."""
    text = line.strip()
    if (found := _held(text)) is not None:
        return found
    code = _code(text)
    for pattern, implied, when in _OOM_TEXTS:
        if match := pattern.search(text):
            needed, available = _bytes(*match.group(1, 2)), _bytes(*match.group(3, 4))
            return TpuError(
                TpuTrouble.HBM_OUT_OF_MEMORY, text, code or implied, needed, available, when
            )
    if match := _TC_SC.search(text):
        tensor, sparse = _bytes(*match.group(1, 2)), _bytes(*match.group(3, 4))
        available = _bytes(*match.group(5, 6))
        return TpuError(
            TpuTrouble.HBM_OUT_OF_MEMORY,
            text,
            code or "E1000",
            tensor + sparse,
            available,
            OomWhen.COMPILE,
        )
    if code is not None:
        return TpuError(TpuTrouble.XLA_ERROR, text, code)
    return None


def _held(text: str) -> TpuError | None:
    pid = _HELD_PID.search(text)
    busy = _HELD_FILE.search(text)
    if pid is None and busy is None and not any(w in text for w in _HELD_WORDS):
        return None
    return TpuError(
        TpuTrouble.HELD,
        text,
        holder_pid=int(pid.group(1)) if pid else None,
        device_file=busy.group(1) if busy else None,
    )


def _code(text: str) -> str | None:
    if match := _CODE.search(text):
        return match.group(1)
    if match := _CODE_LINK.search(text):
        return f"E{match.group(1)}"
    return None


class TpuErrorWatch:
    """Reads a run's lines as they come and keeps what the TPU said: its first trouble, with the
    numbers a later line adds (an error's code on one line, its HBM figures on the next)."""

    def __init__(self) -> None:
        self.found: TpuError | None = None

    def see(self, text: str) -> None:
        said = read_tpu_error(text)
        if said is None:
            return
        if self.found is None:
            self.found = said
        elif (
            self.found.trouble is TpuTrouble.XLA_ERROR and said.trouble is not TpuTrouble.XLA_ERROR
        ):
            self.found = replace(said, code=self.found.code or said.code)
