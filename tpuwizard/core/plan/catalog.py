"""The TPU catalog: generations, slice names, zones and prices, read from catalog.toml.

A slice name such as ``v5litepod-16`` or ``v4-8`` is parsed into a :class:`Slice` that says how many
chips, VMs and JAX devices it has. The number in the name counts chips for v5e and v6e but
TensorCores for v2, v3, v4, v5p and tpu7x (two per chip), which is a common source of confusion:
``v4-8`` is four chips.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tpuwizard.core.plan import toml_copy
from tpuwizard.core.routes import Route

# The parsed catalog's copy, beside this module's bytecode (core/plan/toml_copy.py).
COPY_FOLDER, COPY_NAME = Path(__file__).parent / "__pycache__", "catalog.toml.json"
# What the runtime leaves of nominal HBM where the catalog has no sourced figure for a
# generation (memory_stats()["bytes_limit"] was 93-99% of nominal where seen): unconfirmed.
UNSOURCED_RESERVE = 0.06
# What a name's generation part is made of (v5litepod, tpu7x): ASCII, as Google's names are.
_PREFIX_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


class UnknownAcceleratorError(ValueError):
    """An accelerator type name that is not a TPU slice; ``suggestions`` holds valid names."""

    def __init__(self, name: str, reason: str, suggestions: list[str]) -> None:
        self.name = name
        self.reason = reason
        self.suggestions = suggestions
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"'{name}' is not a TPU accelerator type: {reason}.{hint}")


@dataclass(frozen=True)
class Generation:
    """One TPU generation as the catalog describes it: its chips, sizes, zones and prices."""

    key: str  # "v5e"
    prefix: str  # "v5litepod"
    name_counts: str  # "chips" or "tensorcores"
    tensorcores_per_chip: int
    devices_per_chip: int
    hbm_gib_per_chip: float
    hbm_bandwidth_gbps: float
    peak_bf16_tflops: float
    chips_per_vm: int
    single_host_max_chips: int
    chips_per_physical_host: int
    sizes: tuple[int, ...]
    runtime_version: str
    device_kind: str
    zones: tuple[str, ...]
    zones_unconfirmed: tuple[str, ...]
    flex_start_zones: tuple[str, ...]
    price_on_demand: float | None
    # v2 and v3 pods (slice number >= pod_from) exist in fewer zones than their small slices.
    pod_from: int | None
    pod_zones: tuple[str, ...]
    price_spot: float | None
    unconfirmed: tuple[str, ...]
    # Compute Engine: (chips on one VM, machine type) pairs, and the accelerator image family;
    # empty and None for a generation Compute Engine does not serve.
    machine_types: tuple[tuple[int, str], ...] = ()
    image_family: str | None = None
    # AI zones offering it: hidden from zone lists until the project turns on AI zone
    # visibility, but not refused when named (core/cloud/ai_zones.py).
    ai_zones: tuple[str, ...] = ()
    # Usable HBM per JAX device in bytes (the compiler's limit is per device: a TensorCore on
    # v2 and v3), with where it comes from (a chip's bytes_limit, a compile refusal's limit);
    # None where the catalog has none (then nominal x 0.94, unconfirmed).
    usable_hbm_bytes_per_device: int | None = None
    usable_hbm_source: str = ""

    @property
    def usable_bytes_per_device(self) -> int:
        """HBM a program may use on one JAX device: the sourced figure, else nominal less the
        reserve, shared among the chip's devices."""
        sourced = self.usable_hbm_bytes_per_device
        nominal = self.hbm_gib_per_chip * 2**30 / self.devices_per_chip
        return sourced if sourced is not None else int(nominal * (1 - UNSOURCED_RESERVE))

    @property
    def usable_bytes_per_chip(self) -> int:
        """HBM a program may use on a chip: every one of its devices' usable HBM."""
        return self.usable_bytes_per_device * self.devices_per_chip

    @property
    def usable_gib_per_chip(self) -> float:
        return self.usable_bytes_per_chip / 2**30

    @property
    def usable_confirmed(self) -> bool:
        return self.usable_hbm_bytes_per_device is not None

    def chips_for(self, number: int) -> int:
        return number // self.tensorcores_per_chip if self.name_counts == "tensorcores" else number

    def number_for_chips(self, chips: int) -> int:
        """The number in a type's name: chips, or TensorCores for v2-v4."""
        return chips * self.tensorcores_per_chip if self.name_counts == "tensorcores" else chips

    def name_for_chips(self, chips: int) -> str:
        return f"{self.prefix}-{self.number_for_chips(chips)}"

    def price_per_chip_hour(self, route: str = "on-demand") -> float | None:
        """Approximate USD per chip-hour by route.

        Flex-start is billed at its own discounted rate, which the catalog has no figure for:
        None, never spot's (``cost.at_most_hourly`` gives the most it costs).
        """
        if route == Route.FLEX:
            return None
        return self.price_spot if route == Route.SPOT else self.price_on_demand


@dataclass(frozen=True)
class Slice:
    """One accelerator type (``v5litepod-4``): a generation, its chips and the VMs holding them."""

    name: str
    generation: Generation
    chips: int
    vms: int
    chips_per_vm: int

    @property
    def zones(self) -> tuple[str, ...]:
        """Documented zones offering this slice size: a v2 or v3 pod only where pods exist."""
        gen = self.generation
        number = self.chips * gen.tensorcores_per_chip if gen.name_counts == "tensorcores" else 0
        if gen.pod_from is not None and number >= gen.pod_from:
            return gen.pod_zones
        return gen.zones

    @property
    def devices(self) -> int:
        """Global JAX device count: chips, or TensorCores where each is its own device."""
        return self.chips * self.generation.devices_per_chip

    @property
    def devices_per_vm(self) -> int:
        return self.chips_per_vm * self.generation.devices_per_chip

    @property
    def single_host(self) -> bool:
        return self.vms == 1

    @property
    def one_vm(self) -> Slice:
        """One of its VMs as a slice of its own (a multi-host slice's instance template)."""
        return _make_slice(self.generation, self.generation.number_for_chips(self.chips_per_vm))

    @property
    def physical_hosts(self) -> int:
        """Physical machines; v5e and v6e pack two 4-chip VMs of a multi-host slice on one host."""
        per_host = self.generation.chips_per_physical_host
        if self.single_host:
            return 1
        return max(1, self.chips // per_host) if per_host else self.vms

    @property
    def hbm_gib_total(self) -> float:
        return self.chips * self.generation.hbm_gib_per_chip

    def price_per_hour(self, route: str = "on-demand") -> float | None:
        per_chip = self.generation.price_per_chip_hour(route)
        return None if per_chip is None else round(per_chip * self.chips, 4)

    @property
    def offered_zones(self) -> list[str]:
        """Documented zones offering this slice (not a promise of free capacity), its AI zones
        last."""
        return [*self.zones, *(z for z in self.generation.ai_zones if z not in self.zones)]

    @property
    def machine_type(self) -> str | None:
        """Compute Engine's machine type of a single-VM slice (``v6e-4`` -> ``ct6e-standard-4t``),
        or None where Compute Engine has none: a generation it does not serve, or a multi-host
        slice (several VMs, which Compute Engine makes as a managed instance group)."""
        if not self.single_host:
            return None
        return dict(self.generation.machine_types).get(self.chips)


@cache
def _raw() -> dict[str, Any]:
    # Package data beside this module (pyproject's package-data); read as a plain file, since
    # importlib.resources costs the wizard's first screen a millisecond to import.
    here = Path(__file__).parent
    return toml_copy.parsed((here / "catalog.toml").read_text("utf-8"), COPY_FOLDER / COPY_NAME)


@cache
def generations() -> dict[str, Generation]:
    """Every generation in the catalog, keyed by its short name (``v5e``)."""
    out: dict[str, Generation] = {}
    for key, g in _raw()["generations"].items():
        out[key] = Generation(
            key=key,
            prefix=g["prefix"],
            name_counts=g["name_counts"],
            tensorcores_per_chip=g["tensorcores_per_chip"],
            devices_per_chip=g["devices_per_chip"],
            hbm_gib_per_chip=float(g["hbm_gib_per_chip"]),
            hbm_bandwidth_gbps=float(g["hbm_bandwidth_gbps"]),
            peak_bf16_tflops=float(g["peak_bf16_tflops"]),
            chips_per_vm=g["chips_per_vm"],
            single_host_max_chips=g["single_host_max_chips"],
            chips_per_physical_host=g.get("chips_per_physical_host", 0),
            sizes=tuple(g["sizes"]),
            runtime_version=g["runtime_version"],
            device_kind=g["device_kind"],
            zones=tuple(g["zones"]),
            zones_unconfirmed=tuple(g.get("zones_unconfirmed", [])),
            flex_start_zones=tuple(g.get("flex_start_zones", [])),
            pod_from=g.get("pod_from"),
            pod_zones=tuple(g.get("pod_zones", [])),
            price_on_demand=g.get("price_on_demand"),
            price_spot=g.get("price_spot"),
            unconfirmed=tuple(g.get("unconfirmed", [])),
            machine_types=tuple(
                sorted((int(chips), name) for chips, name in g.get("machine_types", {}).items())
            ),
            image_family=g.get("image_family"),
            ai_zones=tuple(g.get("ai_zones", [])),
            usable_hbm_bytes_per_device=g.get("usable_hbm_bytes_per_device"),
            usable_hbm_source=g.get("usable_hbm_source", ""),
        )
    return out


def price_table(section: str) -> dict[str, Any]:
    """A price section of the catalog (``zone_prices``, ``pod_prices``), keyed by generation."""
    return dict(_raw().get(section, {}))


def sources() -> dict[str, str]:
    """Where the catalog's figures come from, and when they were read."""
    return dict(_raw()["sources"])


def peak_bf16_tflops_per_device() -> dict[str, float]:
    """Peak dense bf16 TFLOP/s of one JAX device, by ``device_kind``: a TPU chip's peak divided
    by its JAX devices, and the catalog's other accelerators (``[devices]``) as listed."""
    peaks = {g.device_kind: g.peak_bf16_tflops / g.devices_per_chip for g in generations().values()}
    for kind, entry in _raw().get("devices", {}).items():
        peaks[kind] = float(entry["peak_bf16_tflops"])
    return peaks


def _by_prefix() -> dict[str, Generation]:
    return {g.prefix: g for g in generations().values()}


def _make_slice(gen: Generation, number: int) -> Slice:
    chips = gen.chips_for(number)
    if chips <= gen.single_host_max_chips:
        chips_per_vm, vms = chips, 1
    else:
        chips_per_vm, vms = gen.chips_per_vm, chips // gen.chips_per_vm
    return Slice(
        name=f"{gen.prefix}-{number}",
        generation=gen,
        chips=chips,
        vms=vms,
        chips_per_vm=chips_per_vm,
    )


def all_slices() -> list[Slice]:
    return [_make_slice(g, n) for g in generations().values() for n in g.sizes]


def all_names() -> list[str]:
    return [s.name for s in all_slices()]


def _nearest_sizes(gen: Generation, number: int) -> list[str]:
    ranked = sorted(gen.sizes, key=lambda n: (abs(n - number), n))
    return [f"{gen.prefix}-{n}" for n in sorted(ranked[:2])]


def _name_parts(raw: str) -> tuple[str, int] | None:
    """``v5litepod-4`` -> ("v5litepod", 4): lower-case letters and digits, a hyphen, a number in
    ASCII digits; None for anything else. String methods, not a pattern: every command that
    reads a slice name starts faster without compiling one."""
    prefix, _, number = raw.rpartition("-")
    if prefix and _PREFIX_CHARS.issuperset(prefix) and number.isascii() and number.isdigit():
        return prefix, int(number)
    return None


def parse_accelerator(name: str) -> Slice:
    """Parse an accelerator type name into a :class:`Slice`.

    Raises :class:`UnknownAcceleratorError` with the nearest valid names when ``name`` is not one.
    """
    raw = name.strip()
    if raw.lower() != raw or raw.startswith("tpu-"):
        # Google's names are lower case and carry no "tpu-" prefix (SkyPilot writes tpu-v6e-8).
        fixed = raw.lower().removeprefix("tpu-")
        try:
            suggestion = [parse_accelerator(fixed).name]
        except UnknownAcceleratorError as err:
            suggestion = err.suggestions
        raise UnknownAcceleratorError(
            raw, "accelerator types are lower case, without 'tpu-'", suggestion
        )
    parts = _name_parts(raw)
    if parts is None:
        import difflib  # only for a name that is wrong: a command's start does without it

        close = difflib.get_close_matches(raw, all_names(), n=3, cutoff=0.6)
        raise UnknownAcceleratorError(
            raw, "a TPU type looks like v5litepod-4, v6e-8 or v4-8 (generation-number)", close
        )
    prefix, number = parts
    by_prefix = _by_prefix()
    aliases = {
        "v5e": "v5litepod",
        "v5lite": "v5litepod",
        "v5litepod": "v5litepod",
        "v6": "v6e",
        "v5": "v5p",
        "v7x": "tpu7x",
        "tpu7": "tpu7x",
        "v7": "tpu7x",
    }
    gen = by_prefix.get(prefix)
    if gen is None:
        import difflib

        target = aliases.get(prefix) or next(
            iter(difflib.get_close_matches(prefix, list(by_prefix), n=1, cutoff=0.5)), None
        )
        suggestions = []
        if target is not None:
            g = by_prefix[target]
            suggestions = (
                [f"{g.prefix}-{number}"] if number in g.sizes else _nearest_sizes(g, number)
            )
        known = ", ".join(by_prefix)
        raise UnknownAcceleratorError(
            raw, f"there is no TPU generation called '{prefix}' (known: {known})", suggestions
        )
    if number not in gen.sizes:
        if gen.name_counts == "tensorcores":
            reason = (
                f"{gen.prefix} names count TensorCores ({gen.tensorcores_per_chip} per chip), "
                f"so the smallest slice is {gen.prefix}-{gen.sizes[0]} "
                f"({gen.chips_for(gen.sizes[0])} chips)"
            )
        else:
            reason = f"{gen.prefix} slices come in {', '.join(map(str, gen.sizes))} chips"
        raise UnknownAcceleratorError(raw, reason, _nearest_sizes(gen, number))
    return _make_slice(gen, number)


def generation_for_device_kind(device_kind: str) -> Generation | None:
    """The generation whose JAX ``device_kind`` matches (``TPU v5 lite`` before ``TPU v5``)."""
    kind = device_kind.strip().lower()
    for gen in sorted(generations().values(), key=lambda g: -len(g.device_kind)):
        if kind == gen.device_kind.lower():
            return gen
    return None


def documented_ai_zone_table() -> dict[str, list[str]]:
    """AI zone -> accelerator types the catalog lists there (hidden from zone lists unless the
    project turns on AI zone visibility)."""
    table: dict[str, list[str]] = {}
    for s in all_slices():
        for zone in s.generation.ai_zones:
            table.setdefault(zone, []).append(s.name)
    return dict(sorted(table.items()))


def documented_zone_table() -> dict[str, list[str]]:
    """Zone -> accelerator types the documentation lists there."""
    table: dict[str, list[str]] = {}
    for s in all_slices():
        for zone in s.zones:
            table.setdefault(zone, []).append(s.name)
    return dict(sorted(table.items()))


def accelerator_for_machine_type(machine_type: str) -> str | None:
    """The slice one VM of ``machine_type`` is (``ct5p-hightpu-4t`` -> ``v5p-8``), or None for a
    machine type that is no TPU type of the catalog. A URL (``zones/Z/machineTypes/NAME``), as
    Compute Engine reads an instance back, is accepted."""
    name = machine_type.rsplit("/", 1)[-1]
    for gen in generations().values():
        for chips, known in gen.machine_types:
            if known == name:
                return gen.name_for_chips(chips)
    return None


def image_source(gen: Generation) -> str | None:
    """The boot disk's ``sourceImage`` for the generation: its image family in Google's
    accelerator image project, or None where Compute Engine does not serve it."""
    family = gen.image_family
    if family is None:
        return None
    project = _raw()["compute_engine"]["image_project"]
    return f"projects/{project}/global/images/family/{family}"
