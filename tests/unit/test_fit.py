import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tpuwizard.commands.options.fit import named_slices
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog, fit


@pytest.mark.parametrize(
    ("text", "gib"),
    [
        ("48", 48),
        ("48GiB", 48),
        ("12 GiB", 12),
        ("51.5GB", 51.5e9 / 2**30),
        ("512MiB", 0.5),
        ("1.5TiB", 1536),
        ("0.25", 0.25),
        ("1e1", 10),
    ],
)
def test_sizes_parse_to_gib(text, gib):
    assert fit.parse_size_gib(text) == pytest.approx(gib)


@pytest.mark.parametrize("text", ["abc", "", "-3", "0", "nan", "inf", "48 parsecs", "1e999"])
def test_bad_sizes_say_what_to_type(text):
    with pytest.raises(BadInput, match="48"):
        fit.parse_size_gib(text)


@pytest.mark.parametrize(
    "text",
    [
        "48",
        " 48 ",
        "0048",
        "48\n",
        "\t7\v",
        "48 GiB",
        "\u300048",
        "48\u3000",
        "٤٨",
        "４８",
        "",
        " ",
    ],
)
def test_a_bare_number_read_without_the_pattern_reads_as_the_pattern_reads_it(text: str) -> None:
    """The shortcut for a whole number (fit's start compiles no pattern for ``fit 48``) gives
    what the pattern gives, and refuses what it refuses (an ideographic space, Arabic-Indic
    or full-width digits)."""
    import re

    match = re.match(fit._SIZE_PATTERN, text, re.IGNORECASE | re.ASCII)
    assert fit._size_parts(text) == ((match.group(1), match.group(2)) if match else None)


@pytest.mark.parametrize(
    ("text", "count"),
    [("7B", 7e9), ("350M", 350e6), ("1.5e9", 1.5e9), ("125000000", 1.25e8), ("70b", 70e9)],
)
def test_param_counts_parse(text, count):
    assert fit.parse_params(text) == pytest.approx(count)


def test_recipes_give_bytes_per_param():
    assert fit.bytes_per_param("adam-fp32") == 16
    assert fit.bytes_per_param("bf16-adam") == 12
    assert fit.bytes_per_param("mixed-adam") == 18
    assert fit.bytes_per_param("inference-bf16") == 2
    assert fit.bytes_per_param("inference-int8") == 1
    assert fit.state_from_params(1e9, "adam-fp32") == pytest.approx(16e9 / 2**30)
    with pytest.raises(BadInput, match="adam-fp32"):
        fit.bytes_per_param("sgd")


def test_a_training_state_is_a_size_or_a_count_under_its_recipe():
    assert fit.training_state("51.5GB", None, "adam-fp32") == fit.TrainingState(51.5e9 / 2**30)
    from_params = fit.training_state(None, "7B", "adam-fp32")
    assert from_params == fit.TrainingState(7e9 * 16 / 2**30, 16, "adam-fp32")
    with pytest.raises(fit.LooksLikeParams):
        fit.training_state("7B", None, "adam-fp32")  # a size that reads as a count
    with pytest.raises(BadInput, match="Unknown recipe"):  # said before the count is read
        fit.training_state(None, "seven", "sgd")


# A real TPU v5 lite chip's memory_stats()["bytes_limit"] (tpuwizard issue 45), in GiB.
V5E_USABLE = 16_909_336_064 / 2**30


def test_the_course_table_holds():
    names = ["v5litepod-1", "v5litepod-4", "v5litepod-8", "v6e-4"]
    fits = {f.name: f for f in fit.plan(48, fit.select_slices(named_slices(names)))}
    assert [n for n in names if fits[n].fits_total] == ["v5litepod-4", "v5litepod-8", "v6e-4"]
    assert [n for n in names if fits[n].fits_sharded] == ["v5litepod-4", "v5litepod-8", "v6e-4"]
    assert fits["v5litepod-4"].total_hbm_gib == 64
    assert fits["v6e-4"].total_hbm_gib == 128
    assert fits["v5litepod-4"].headroom_gib == pytest.approx(V5E_USABLE - 12, abs=1e-3)
    assert not any(f.fits_replicated for f in fits.values())


def test_plan_is_ordered_by_price_with_unknown_prices_last():
    fits = fit.plan(10, fit.default_slices())
    prices = [f.price_per_hour_usd for f in fits]
    known = [p for p in prices if p is not None]
    assert known == sorted(known)
    assert prices[len(known) :] == [None] * (len(prices) - len(known))


def test_default_slices_are_single_host_plus_common_multi_host():
    names = {s.name for s in fit.default_slices()}
    assert {"v5litepod-1", "v5litepod-8", "v6e-8", "v2-8", "v5litepod-16"} <= names
    assert "v5litepod-256" not in names


def test_filters():
    assert {s.generation.key for s in fit.select_slices(generations=["v5e", "v6e"])} == {
        "v5e",
        "v6e",
    }
    assert all(s.single_host for s in fit.select_slices(single_host=True))
    assert all(s.chips <= 4 for s in fit.select_slices(max_chips=4))
    assert {s.generation.key for s in fit.select_slices(generations=["v5litepod"])} == {"v5e"}
    with pytest.raises(BadInput, match="v5litepod-4"):
        fit.select_slices(named_slices(["v5e-4"]))
    with pytest.raises(BadInput, match="Choose from"):
        fit.select_slices(generations=["v9"])


def test_verdict_names_the_cheapest_fitting_slice_or_says_none_fits():
    fits = fit.plan(48, fit.select_slices(named_slices(["v5litepod-1", "v5litepod-4", "v6e-4"])))
    assert "v5litepod-4" in fit.verdict(48, fits)
    tiny = fit.plan(1000, fit.select_slices(named_slices(["v5litepod-1"])))
    assert fit.verdict(1000, tiny) == "None of the slices above holds 1000.0 GiB sharded."


def test_the_spare_figure_names_the_usable_hbm_it_comes_from():
    """64 GiB less 48 is 16, 4 a chip, by the course's arithmetic; what is left is counted from
    each chip's usable HBM, and the verdict names that figure so the two can be squared."""
    fits = fit.plan(48, fit.select_slices(named_slices(["v5litepod-4"])))
    said = " ".join(fit.verdict(48, fits).split())
    assert "leaving 3.7 GiB per chip (of 15.75 usable) for activations." in said
    assert "(of 15.75 usable)" in fit.slice_verdict(48, fits[0])


SLICES = catalog.all_slices()
sizes = st.floats(min_value=0.01, max_value=1e5, allow_nan=False, allow_infinity=False)


@given(sizes, sizes, st.sampled_from(SLICES))
def test_fitting_is_monotonic_in_state_size(a, b, slice_):
    small, large = sorted((a, b))
    fs, fl = fit.fit_slice(small, slice_), fit.fit_slice(large, slice_)
    assert fl.fits_sharded <= fs.fits_sharded
    assert fl.fits_replicated <= fs.fits_replicated
    assert fl.fits_total <= fs.fits_total
    assert fl.headroom_gib <= fs.headroom_gib


@given(sizes, st.sampled_from(SLICES), st.floats(min_value=0, max_value=0.5))
def test_sharded_implies_total_and_replicated_implies_sharded(state, slice_, reserve):
    f = fit.fit_slice(state, slice_, reserve)
    if f.fits_sharded:
        assert f.fits_total
    if f.fits_replicated:
        assert f.fits_sharded
    assert math.isclose(f.headroom_gib, f.usable_gib_per_chip - state / f.chips, abs_tol=2e-3)


# -- what a replicated copy and usable HBM do to the answer ---------------------------------------
# v2 and v3 chips hold two TensorCores, and each TensorCore is its own JAX device with half the
# chip's HBM; v4 and v5p chips also hold two TensorCores but show them as one device (megacore).
# Usable HBM per device is the catalog's sourced figure (v5e: a real chip's bytes_limit; the others:
# the limit compile refusals name); a generation without one keeps nominal x 0.94, unconfirmed.


@pytest.mark.parametrize(
    ("accelerator", "per_device_usable"),
    [
        ("v2-8", 7.48),
        ("v3-8", 15.48),
        ("v4-8", 30.75),
        ("v5litepod-4", V5E_USABLE),
        ("v6e-4", 31.25),
        ("v5p-8", 95.74),
        ("tpu7x-8", 192 * 0.94 / 2),
    ],
)
def test_a_replicated_copy_must_fit_one_device_of_usable_hbm(accelerator, per_device_usable):
    slice_ = catalog.parse_accelerator(accelerator)
    assert fit.fit_slice(per_device_usable * 0.999, slice_).fits_replicated
    assert not fit.fit_slice(per_device_usable * 1.001, slice_).fits_replicated


def test_v2_and_v3_replicate_per_tensorcore_not_per_chip():
    # 10 GiB fits a v2 chip's 15 GiB usable, but not one of its 7.5 GiB TensorCores.
    v2 = fit.fit_slice(10, catalog.parse_accelerator("v2-8"))
    assert v2.fits_sharded and not v2.fits_replicated
    v3 = fit.fit_slice(20, catalog.parse_accelerator("v3-8"))
    assert v3.fits_sharded and not v3.fits_replicated
    # A v4 chip's two TensorCores are one device: the whole chip holds the copy.
    assert fit.fit_slice(20, catalog.parse_accelerator("v4-8")).fits_replicated


@pytest.mark.parametrize(
    ("key", "per_device", "source"),
    [
        ("v2", int(7.48 * 2**30), "sokrypton/ColabFold/issues/62"),
        ("v3", int(15.48 * 2**30), "LargeWorldModel/LWM/issues/60"),
        ("v4", int(30.75 * 2**30), "maxtext/pull/4117"),
        ("v5e", 16_909_336_064, "bytes_limit of a TPU v5 lite chip, measured"),
        ("v5p", int(95.74 * 2**30), "openxla/xla docs/errors/error_1000.md"),
        ("v6e", int(31.25 * 2**30), "Enzyme-JAX/pull/2422"),
    ],
)
def test_usable_hbm_per_device_is_the_compilers_limit_with_its_source(key, per_device, source):
    gen = catalog.generations()[key]
    assert gen.usable_bytes_per_device == per_device
    # A v2 or v3 chip is two JAX devices (TensorCores), each with its own limit.
    assert gen.usable_bytes_per_chip == per_device * gen.devices_per_chip
    assert gen.usable_confirmed and source in gen.usable_hbm_source
    assert "usable_hbm_bytes_per_device" not in gen.unconfirmed


def test_only_tpu7x_keeps_nominal_less_the_reserve_marked_unconfirmed():
    unsourced = [g for g in catalog.generations().values() if not g.usable_confirmed]
    assert [g.key for g in unsourced] == ["tpu7x"]
    for gen in unsourced:
        per_device = gen.hbm_gib_per_chip * 2**30 / gen.devices_per_chip
        assert gen.usable_bytes_per_device == int(per_device * 0.94)
        assert "usable_hbm_bytes_per_device" in gen.unconfirmed, gen.key
    assert fit.fit_slice(1, catalog.parse_accelerator("tpu7x-8")).usable_from == "unconfirmed"


def test_a_state_that_fit_v2_by_nominal_less_6_percent_is_refused_by_the_compilers_limit():
    v2 = catalog.parse_accelerator("v2-8")  # 4 chips, 8 TensorCores
    # 60 GiB is 15 GiB a chip: under the old 15.04 (16 x 0.94), over the compiler's 2 x 7.48.
    assert fit.fit_slice(60, v2, reserve=0.06).fits_sharded
    sharded = fit.fit_slice(60, v2)
    assert not sharded.fits_sharded and sharded.usable_from == "catalog"
    assert sharded.usable_gib_per_chip == pytest.approx(2 * 7.48, abs=1e-3)
    # 7.5 GiB replicated on every TensorCore: under the old 7.52, over 7.48.
    assert fit.fit_slice(7.5, v2, reserve=0.06).fits_replicated
    assert not fit.fit_slice(7.5, v2).fits_replicated


def test_a_92_gib_per_chip_state_fits_v5p_8():
    fits = fit.plan(4 * 92, fit.select_slices(generations=["v5p"]))
    best = fit.cheapest_fitting(fits)
    # nominal x 0.94 (89.3 GiB a chip) sent it to a larger slice.
    assert best is not None and best.name == "v5p-8"
    assert best.fits_sharded and best.usable_gib_per_chip == pytest.approx(95.74, abs=1e-3)
    assert not fit.fit_slice(4 * 92, best.slice, reserve=0.06).fits_sharded


def test_a_15_5_gib_state_fits_v5litepod_1():
    one = fit.fit_slice(15.5, catalog.parse_accelerator("v5litepod-1"))
    # Under the 15.75 GiB a real chip leaves (nominal x 0.94 would say 15.04 GiB: no).
    assert one.usable_gib_per_chip == pytest.approx(V5E_USABLE, abs=1e-3)
    assert one.fits_sharded and one.fits_replicated and one.usable_from == "catalog"
    assert one.headroom_gib == pytest.approx(V5E_USABLE - 15.5, abs=1e-3)
    assert not fit.fit_slice(15.8, catalog.parse_accelerator("v5litepod-1")).fits_sharded
    # And it is what the verdict suggests: v5e's price, not v6e-1's.
    fits = fit.plan(15.5, fit.select_slices(named_slices(["v5litepod-1", "v6e-1"])))
    cheapest = fit.cheapest_fitting(fits)
    assert cheapest is not None and cheapest.name == "v5litepod-1"
    assert "fits sharded on v5litepod-1" in fit.verdict(15.5, fits)


def test_usable_overrides_the_catalog_for_every_generation():
    one = catalog.parse_accelerator("v5litepod-1")
    f = fit.fit_slice(15.5, one, reserve=0.06)
    assert f.usable_gib_per_chip == pytest.approx(16 * 0.94) and f.usable_from == "usable"
    assert not f.fits_sharded
    assert fit.fit_slice(15.5, one, measured_gib_per_chip=15.0).usable_from == "receipt"


def test_usable_hbm_applies_to_sharded_state_on_every_chip():
    four = catalog.parse_accelerator("v5litepod-4")
    # 63.5 GiB over 4 chips is 15.875 GiB a chip: under the 64 GiB total, over what is usable.
    f = fit.fit_slice(63.5, four)
    assert f.fits_total and not f.fits_sharded
    assert fit.fit_slice(62, four).fits_sharded  # 15.5 GiB a chip
    # With no reserve asked for, the label's figure is usable.
    assert fit.fit_slice(63.5, four, reserve=0).fits_sharded


def test_a_reserve_given_applies_to_each_tensorcore_of_a_v2_chip():
    v2 = catalog.parse_accelerator("v2-8")
    # 7.8 GiB is under half a chip's 16 GiB, over half of 16 x 0.94.
    assert not fit.fit_slice(7.8, v2, reserve=0.06).fits_replicated
    assert fit.fit_slice(7.8, v2, reserve=0).fits_replicated


@pytest.mark.parametrize(
    ("text", "params"),
    [("7B", "7B"), ("350M", "350M"), ("1.5K", "1.5K"), ("70b", "70B"), ("2T", "2T")],
)
def test_what_looks_like_a_parameter_count_is_refused_as_a_size(text, params):
    with pytest.raises(fit.LooksLikeParams) as caught:
        fit.parse_size_gib(text)
    assert caught.value.params == params
    assert caught.value.cli_line == f"--params {params} --recipe adam-fp32"


def test_a_bare_number_of_a_million_gib_is_taken_for_parameters():
    with pytest.raises(fit.LooksLikeParams) as caught:
        fit.parse_size_gib("7000000000")
    assert caught.value.params == "7000000000"
    assert fit.parse_size_gib("999999") == 999999


def test_a_bare_number_under_one_mib_is_refused():
    with pytest.raises(BadInput, match="under 1 MiB"):
        fit.parse_size_gib("0.0005")
    assert fit.parse_size_gib("0.001") == pytest.approx(0.001)


@pytest.mark.parametrize(
    ("text", "gib"), [("1e30GiB", 1e30), ("7kb", 7e3 / 2**30), ("1KiB", 2**-20)]
)
def test_an_explicit_unit_is_taken_at_its_word(text, gib):
    assert fit.parse_size_gib(text) == pytest.approx(gib)


def test_the_suggestion_is_the_cheapest_current_generation_slice_that_fits():
    fits = fit.plan(48, fit.select_slices(single_host=True))
    assert fits[0].name == "v5litepod-1" and not fits[0].fits_sharded
    # v2-8 is cheaper and fits, but v2 is an older generation: a beginner gets v5e.
    cheapest = fit.cheapest_fitting(fits)
    assert cheapest is not None and cheapest.name == "v5litepod-4"
    assert "v5litepod-4" in fit.verdict(48, fits)
    old_only = fit.plan(48, fit.select_slices(named_slices(["v2-8", "v5litepod-1"])))
    cheapest = fit.cheapest_fitting(old_only)
    assert cheapest is not None and cheapest.name == "v2-8"
    assert fit.cheapest_fitting(fit.plan(1e30, fit.select_slices(single_host=True))) is None


@pytest.mark.parametrize(
    ("state_gib", "chosen", "expected"),
    [
        (48, None, "v5litepod-4"),  # nothing chosen yet: the cheapest current one that fits
        (48, "v6e-4", "v6e-4"),  # the slice chosen before, while it still fits
        (48, "v2-8", "v2-8"),  # chosen before, though the suggestion passes over v2
        (48, "v5litepod-1", "v5litepod-4"),  # chosen before, too small now: the cheapest
        (48, "v9-1", "v5litepod-4"),  # a name the table does not hold: as if none
        (1e30, "v6e-4", "v6e-4"),  # nothing fits: the one chosen before stands
        (1e30, None, "v5litepod-1"),  # nothing fits, nothing chosen: the first row
    ],
)
def test_the_slice_question_starts_on_the_slice_chosen_while_it_fits(state_gib, chosen, expected):
    fits = fit.plan(state_gib, fit.select_slices(single_host=True))
    assert fit.preselected(fits, chosen).name == expected


def test_a_slice_that_does_not_fit_says_by_how_much():
    state = fit.state_from_params(7e9, "adam-fp32")
    small = fit.fit_slice(state, catalog.parse_accelerator("v5litepod-4"))
    text = fit.slice_verdict(state, small)
    assert "104.3 GiB does NOT fit v5litepod-4" in text
    assert f"{-small.headroom_gib:.1f} GiB per chip short" in text
    big = fit.fit_slice(state, catalog.parse_accelerator("v5litepod-8"))
    assert "fits sharded on v5litepod-8" in fit.slice_verdict(state, big)
