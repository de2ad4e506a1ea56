"""The TPU's own trouble in plain words: HBM out of memory, XLA's numbered errors, a held TPU.

What each code means and what helps come from openxla/xla's ``docs/errors/`` pages (read
2026-12-06), worded here; a code without a page read here is named with its page's address
and nothing more. The numbers come from the text the chip printed (tpu_text.py); fit's answer
for a compile-time need comes from the catalog's usable HBM for the slice's generation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.cloud.diagnose.tpu_text import OomWhen, TpuError, TpuTrouble

if TYPE_CHECKING:
    from tpuwizard.core.choices import Said
    from tpuwizard.core.plan.catalog import Slice

XLA_ERRORS_PAGE = "https://openxla.org/xla/errors/error_{number}"
# What a code means, then what to do; each from its page in openxla/xla docs/errors/.
XLA_CODES: dict[str, tuple[str, str]] = {
    "E0100": (
        "the TPU runtime found no room in HBM for an array (one put on the device, or a "
        "program's output)",
        "use a smaller batch or shorter sequences, shard the parameters over more devices, "
        "donate inputs you no longer need, and drop references to arrays you are done with",
    ),
    "E0101": (
        "the compiled program itself did not fit in the HBM left free by the arrays already "
        "on the device",
        "keep fewer arrays alive (a smaller batch, donated inputs) and fewer different jitted "
        "functions loaded at once",
    ),
    "E0102": (
        "an array's size in memory differs from what the compiled program expects, most often "
        "a checkpoint written under another JAX, libtpu or XLA flags",
        "save the checkpoint again with the code and versions you run now, and check the XLA "
        "flags match",
    ),
    "E0200": (
        "a TPU core halted: a hardware, network or power fault, or a check the compiler or a "
        "custom kernel put in the program failed",
        "run it again; if it halts again in the same place, check a Pallas kernel's indices "
        "and semaphores, or report it to openxla/xla",
    ),
    "E1000": (
        "the compiler found that the step needs more HBM than the device has",
        "donate the arrays a step replaces (donate_argnums), recompute activations "
        "(jax.checkpoint) or use a smaller batch; tpuwizard fit --program SCRIPT shows the "
        "step's need per slice",
    ),
    "E1001": (
        "a kernel's scoped vector memory (VMEM, on the chip beside the cores) is over its limit",
        "use smaller block sizes in the kernel, or raise its vmem_limit_bytes",
    ),
    "E1002": (
        "TensorCore and SparseCore use together more HBM than the device has",
        "shard the embedding tables over every chip and lower what each SparseCore keeps",
    ),
    "E1200": (
        "an array moved to host memory is returned from the program, whose output was "
        "declared in device memory",
        "move it back to the device before returning it, or declare that output in host memory",
    ),
    "E2001": (
        "a matrix multiply in a kernel uses an operand type this TPU generation cannot multiply",
        "cast the operands to float32 or bfloat16 inside the kernel first",
    ),
    "E2002": (
        "a kernel's block shape does not line up with the data type's tiling on this TPU",
        "make the block's last two dimensions multiples of the tiling the error names",
    ),
    "E2003": (
        "the compiler cannot prove that a kernel's dynamic index is aligned to the tiling",
        "state the alignment (pl.multiple_of) or load an aligned tile and shift it",
    ),
    "E3000": (
        "the SparseCore compiler found no room for a buffer in one of its memories",
        "check how the embedding tables are sharded and lower max_ids_per_partition",
    ),
    "E3001": (
        "the SparseCore compiler found no way to split the batch that fits its scratchpad",
        "give max_nz_per_row estimates closer to the data, or use a smaller batch",
    ),
}
HBM_REMEDIES = (
    "Donate the arrays a step replaces (jax.jit(step, donate_argnums=...)): their memory holds "
    "the outputs.",
    "Recompute instead of keeping activations (jax.checkpoint around each layer).",
    "Use a smaller batch (then retune the learning rate), or micro-batches that accumulate "
    "gradients.",
)


def _gib(count: int) -> str:
    return f"{count / 2**30:.2f} GiB"


def tpu_error_diagnosis(
    found: TpuError, slice_: Slice | None, who: str = "Your script", kept: bool = False
) -> Diagnosis:
    """``found`` (what the chip said, in ``who``'s output) in plain words, with what to do next:
    on a kept node, fix and run again there; after a launch, launch again."""
    again = "Then tpuwizard run again on the kept node." if kept else "Then launch again."
    if found.trouble is TpuTrouble.HELD:
        return _held(found, who, kept)
    if found.trouble is TpuTrouble.HBM_OUT_OF_MEMORY:
        return _out_of_memory(found, slice_, who, again)
    return _coded(found, who, again)


def _held(found: TpuError, who: str, kept: bool) -> Diagnosis:
    if found.holder_pid or found.device_file:
        holder = f"process {found.holder_pid}" if found.holder_pid else "another process"
        busy = f" ({found.device_file} was busy)" if found.device_file else ""
        why = f"{holder} on the worker holds it{busy}"
    else:  # libtpu's lockfile: it names no process
        why = (
            "libtpu could not take its lockfile, most often because another process on the "
            "worker still holds the TPU"
        )
    steps: list[Said] = (
        [
            "An earlier run on this node may still hold it: end that run first (tpuwizard ssh, "
            "then kill its process), then tpuwizard run again.",
            "Or tpuwizard down, then tpuwizard up for a fresh node.",
        ]
        if kept
        else ["Launch again for a fresh node: nothing of this one is kept."]
    )
    if found.holder_pid is None and found.device_file is None:
        steps.append(
            "If no other process runs there (a lockfile left by one that crashed), libtpu's "
            "own advice is to remove /tmp/libtpu_lockfile."
        )
    return Diagnosis(
        "tpu_held",
        "Another process holds the TPU",
        f"{who} could not start JAX on the TPU: {why}, and only one process at a time may "
        "use a TPU. This is not a fault in your code.",
        [*steps, f"The chip's words: {found.line}"],
    )


def _out_of_memory(found: TpuError, slice_: Slice | None, who: str, again: str) -> Diagnosis:
    needed, available = found.needed_bytes or 0, found.available_bytes or 0
    gen = slice_.generation if slice_ is not None else None
    on = f" on {slice_.name}" if slice_ is not None else ""
    if found.when is OomWhen.COMPILE:
        explanation = (
            f"XLA refused a step of {who.lower()}{on}: its memory plan needs {_gib(needed)} "
            f"of HBM on each device, and the limit there is {_gib(available)}. That step did "
            "not run."
        )
    else:
        limit = (
            f" (a {gen.key} device holds {_gib(gen.usable_bytes_per_device)} in all)" if gen else ""
        )
        explanation = (
            f"The TPU ran out of HBM while {who.lower()} ran{on}: it asked for {_gib(needed)} "
            f"on a device where {_gib(available)} was free then{limit}."
        )
    steps: list[Said] = []
    if found.when is OomWhen.COMPILE and slice_ is not None:
        steps.append(fit_answer(needed, slice_))
    steps += [
        "tpuwizard fit --program SCRIPT compiles your step for each slice, and with --measure "
        "runs it on a TPU and shows its peak HBM.",
        *HBM_REMEDIES,
        again,
        f"The chip's words: {found.line}",
    ]
    title = "The TPU ran out of memory (HBM)"
    code = found.code or "E1000"
    return Diagnosis(
        "tpu_out_of_memory",
        title,
        f"{explanation} XLA calls this {code}: {XLA_ERRORS_PAGE.format(number=code[1:])}",
        steps,
    )


def fit_answer(needed_per_device: int, slice_: Slice) -> str:
    """fit's answer for a step that needs ``needed_per_device`` on each device of ``slice_``:
    the smallest slice of its generation that holds that need sharded, for a step on one
    device and for one already spread over all of ``slice_``'s devices."""
    from tpuwizard.core.plan import catalog, fit

    gen = slice_.generation
    one = needed_per_device / 2**30
    whole = one * slice_.devices

    same = [s for s in catalog.all_slices() if s.generation.key == gen.key]

    def smallest(state_gib: float) -> str:
        fits = fit.plan(state_gib, same)
        holding = sorted((f for f in fits if f.fits_sharded), key=lambda f: f.chips)
        return holding[0].name if holding else f"no single {gen.key} slice"

    return (
        f"fit's answer, sharded: {one:.2f} GiB split evenly over every chip fits "
        f"{smallest(one)}; if the step already spreads over all {slice_.devices} devices of "
        f"{slice_.name}, the whole is {whole:.2f} GiB and {smallest(whole)} holds it "
        f"({_gib(gen.usable_bytes_per_device)} usable per {gen.key} device)."
    )


def _coded(found: TpuError, who: str, again: str) -> Diagnosis:
    code = found.code or ""
    page = XLA_ERRORS_PAGE.format(number=code[1:])
    known = XLA_CODES.get(code)
    if known is None:
        return Diagnosis(
            "tpu_xla_error",
            f"XLA error {code}",
            f"{who} stopped on XLA's error {code}, whose page is {page}.",
            [f"Read {page}, then fix the script.", again, f"The chip's words: {found.line}"],
        )
    meaning, remedy = known
    return Diagnosis(
        "tpu_xla_error",
        f"XLA error {code} on the TPU",
        f"{who} stopped on XLA's error {code}: {meaning}. ({page})",
        [remedy[:1].upper() + remedy[1:] + ".", again, f"The chip's words: {found.line}"],
    )
