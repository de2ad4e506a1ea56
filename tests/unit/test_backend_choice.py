"""Which backend serves a launch: the support matrix, each impossible pair, the auto rule by
quota, the Compute Engine quota a route draws on, and the documented per-zone offer."""

import pytest

from tpuwizard.core.cloud import backend_choice as bc
from tpuwizard.core.cloud.backends import COMPUTE, TPU_API
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog


def sliced(name: str) -> catalog.Slice:
    return catalog.parse_accelerator(name)


# -- the matrix: one cell per generation, each sourced ------------------------------------------
@pytest.mark.parametrize(
    ("accelerator", "backends"),
    [
        ("v2-8", (TPU_API,)),
        ("v3-8", (TPU_API,)),
        ("v4-8", (TPU_API,)),
        ("v5litepod-4", (TPU_API,)),
        ("v5p-8", (TPU_API, COMPUTE)),
        ("v6e-4", (TPU_API, COMPUTE)),
        ("tpu7x-8", (COMPUTE,)),
    ],
)
def test_each_cell_of_the_matrix_says_who_serves_it_and_where_google_says_so(accelerator, backends):
    cell = bc.support_for(sliced(accelerator))
    assert cell.backends == backends
    assert "google.com/" in cell.source and "google.com/" in cell.cite and cell.why


def test_v5e_is_legacy_api_only():
    assert "legacy API only" in bc.support_for(sliced("v5litepod-4")).why


def test_the_matrix_and_the_catalogs_machine_types_agree():
    assert set(bc.SUPPORT) == set(catalog.generations())
    for key, gen in catalog.generations().items():
        assert (COMPUTE in bc.SUPPORT[key].backends) == bool(gen.machine_types), key


# -- asked for one: that one, unless the pair is impossible -------------------------------------
@pytest.mark.parametrize(
    ("accelerator", "asked"),
    [("v6e-4", COMPUTE), ("v6e-4", TPU_API), ("v5p-8", COMPUTE), ("v4-8", TPU_API)],
)
def test_a_possible_pair_is_what_was_asked(accelerator, asked):
    choice = bc.choose_backend(sliced(accelerator), "spot", asked, compute_quota_chips=None)
    assert choice.backend == asked
    assert (
        "--backend" in choice.reason and choice.source == bc.support_for(sliced(accelerator)).source
    )


@pytest.mark.parametrize(
    ("accelerator", "generation"),
    [("v5litepod-4", "v5e"), ("v2-8", "v2"), ("v3-8", "v3"), ("v4-8", "v4")],
)
def test_compute_for_a_tpu_api_generation_says_why_and_what_to_type(accelerator, generation):
    with pytest.raises(BadInput) as err:
        bc.choose_backend(sliced(accelerator), "vm", COMPUTE, compute_quota_chips=64)
    said = str(err.value)
    assert said.startswith(f"{accelerator} has no Compute Engine machine type")
    assert f"Google serves {generation} through the TPU API only" in said
    assert said.endswith("Use --backend tpu-api or --backend auto.")


def test_tpu_api_for_tpu7x_says_why_and_what_to_type():
    with pytest.raises(BadInput) as err:
        bc.choose_backend(sliced("tpu7x-8"), "vm", TPU_API, compute_quota_chips=None)
    said = str(err.value)
    assert "tpu7x-8 is not served by the TPU API" in said and "Compute Engine or GKE" in said
    assert said.endswith("Use --backend compute or --backend auto.")


@pytest.mark.parametrize("accelerator", ["v6e-16", "v5p-16", "v6e-64"])
def test_a_multi_host_slice_is_served_on_compute_when_asked_for(accelerator):
    chosen = bc.choose_backend(sliced(accelerator), "spot", COMPUTE, compute_quota_chips=256)
    assert chosen.backend == COMPUTE


def test_auto_keeps_a_multi_host_slice_on_the_tpu_api_and_says_why():
    chosen = bc.choose_backend(sliced("v6e-16"), "vm", "auto", compute_quota_chips=256)
    assert chosen.backend == TPU_API
    assert "MIG" in chosen.reason and "--backend compute" in chosen.reason


@pytest.mark.parametrize("asked", [COMPUTE, "auto"])
def test_a_multi_host_tpu7x_slice_goes_to_compute_engine_its_only_backend(asked):
    assert (
        bc.choose_backend(sliced("tpu7x-16"), "vm", asked, compute_quota_chips=None).backend
        == COMPUTE
    )


@pytest.mark.parametrize(("asked", "route"), [("gke", "vm"), ("auto", "notebook")])
def test_an_unknown_backend_or_route_is_bad_input(asked, route):
    with pytest.raises(BadInput):
        bc.choose_backend(sliced("v6e-4"), route, asked, compute_quota_chips=None)


# -- auto --------------------------------------------------------------------------------------
@pytest.mark.parametrize("accelerator", ["v2-8", "v3-8", "v4-8", "v5litepod-4", "v5litepod-16"])
def test_auto_takes_the_tpu_api_for_the_generations_only_it_serves(accelerator):
    choice = bc.choose_backend(sliced(accelerator), "spot", "auto", compute_quota_chips=1024)
    assert choice.backend == TPU_API and choice.reason.startswith("auto: the TPU API: ")


def test_auto_takes_compute_engine_for_tpu7x_whatever_the_quota_reading():
    choice = bc.choose_backend(sliced("tpu7x-8"), "flex", "auto", compute_quota_chips=None)
    assert choice.backend == COMPUTE
    assert choice.reason.startswith("auto: Compute Engine: Google serves tpu7x only there")


@pytest.mark.parametrize("room", [4, 64])
def test_auto_takes_compute_engine_when_its_quota_covers_the_chips(room):
    choice = bc.choose_backend(
        sliced("v6e-4"), "spot", "auto", compute_quota_chips=room, region="us-east5"
    )
    assert choice.backend == COMPUTE
    assert choice.reason == (
        "auto: v6e-4 on Compute Engine: its spot quota in us-east5 covers 4 chips "
        f"(room for {room})"
    )


def test_auto_takes_the_tpu_api_when_compute_engine_quota_falls_short():
    choice = bc.choose_backend(
        sliced("v5p-8"), "vm", "auto", compute_quota_chips=3, region="us-east5"
    )
    assert choice.backend == TPU_API
    assert choice.reason == (
        "auto: the TPU API: Compute Engine's on-demand quota for v5p in us-east5 has room for "
        "3 chips, and v5p-8 needs 4"
    )


def test_auto_takes_the_tpu_api_without_a_quota_reading():
    choice = bc.choose_backend(sliced("v6e-4"), "flex", "auto", compute_quota_chips=None)
    assert choice.backend == TPU_API
    assert choice.reason == (
        "auto: the TPU API: no Compute Engine quota reading for v6e in this region"
    )


def test_auto_takes_the_tpu_api_for_a_multi_host_slice_even_with_quota():
    choice = bc.choose_backend(sliced("v6e-16"), "spot", "auto", compute_quota_chips=1024)
    assert choice.backend == TPU_API and "multi-host slice (4 VMs)" in choice.reason


# -- the quota a route draws on ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("accelerator", "route", "metric", "dimensions"),
    [
        ("v6e-4", "spot", "PREEMPTIBLE-TPU-V6E-per-project-region", {}),
        ("v6e-8", "flex", "PREEMPTIBLE-TPU-V6E-per-project-region", {}),
        ("v6e-1", "vm", "TPUS-PER-TPU-FAMILY-per-project-region", {"tpu_family": "CT6E"}),
        ("v5p-8", "spot", "PREEMPTIBLE-TPU-V5P-per-project-region", {}),
        ("v5p-8", "vm", "TPU-V5P-per-project-region", {}),
    ],
)
def test_each_route_names_the_compute_engine_quota_it_draws_on(
    accelerator, route, metric, dimensions
):
    assert bc.compute_quota_metric(sliced(accelerator), route) == (metric, dimensions)


@pytest.mark.parametrize("accelerator", ["tpu7x-8", "v5litepod-4", "v4-8"])
def test_no_metric_where_no_source_names_one(accelerator):
    assert bc.compute_quota_metric(sliced(accelerator), "spot") is None


def test_the_dimensions_given_are_the_callers_own():
    metric = bc.compute_quota_metric(sliced("v6e-4"), "vm")
    assert metric is not None
    _, dims = metric
    dims["region"] = "us-east5"
    assert bc.compute_quota_metric(sliced("v6e-4"), "vm") == (
        "TPUS-PER-TPU-FAMILY-per-project-region",
        {"tpu_family": "CT6E"},
    )


# -- which backend offers it, per zone -----------------------------------------------------------
def test_zone_offers_join_the_surveys_tpu_api_zones_and_compute_engines_documented_ones():
    offers = {o.zone: o.backends for o in bc.zone_offers(sliced("v6e-4"), ["us-east5-a"], "live")}
    assert offers["us-east5-a"] == ((TPU_API, "live"), (COMPUTE, "documented"))
    # The survey did not find it in us-east5-b; the catalog documents v6e there.
    assert offers["us-east5-b"] == ((COMPUTE, "documented"),)
    assert set(offers) == set(catalog.parse_accelerator("v6e-4").zones)  # AI zones: not listed


def test_zone_offers_leave_out_the_backend_that_does_not_serve_it():
    tpu7x = bc.zone_offers(sliced("tpu7x-8"), ["us-central1-c"], "live")
    assert [(o.zone, o.backends) for o in tpu7x] == [("us-central1-c", ((COMPUTE, "documented"),))]
    v5e = bc.zone_offers(sliced("v5litepod-4"), ["us-west1-c"], "documented")
    assert [(o.zone, o.backends) for o in v5e] == [("us-west1-c", ((TPU_API, "documented"),))]
    # A multi-host slice is a MIG of the generation's VMs: Compute Engine offers it where the
    # catalog documents v6e, beside the TPU API's live zone.
    v6e16 = {o.zone: o.backends for o in bc.zone_offers(sliced("v6e-16"), ["us-east5-a"], "live")}
    assert v6e16["us-east5-a"] == ((TPU_API, "live"), (COMPUTE, "documented"))


@pytest.mark.parametrize(("asked", "name"), [(COMPUTE, "Compute Engine"), (TPU_API, "the TPU API")])
def test_the_backend_asked_for_is_said_as_a_sentence(asked, name):
    choice = bc.choose_backend(sliced("v6e-4"), "vm", asked, compute_quota_chips=None)
    assert choice.reason == f"{name} (you asked for it with --backend)"  # after "Backend: "
