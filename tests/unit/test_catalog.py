import pytest

from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.catalog import UnknownAcceleratorError, parse_accelerator


@pytest.mark.parametrize(
    ("name", "chips", "vms", "per_vm", "devices", "single"),
    [
        ("v5litepod-1", 1, 1, 1, 1, True),
        ("v5litepod-4", 4, 1, 4, 4, True),
        ("v5litepod-8", 8, 1, 8, 8, True),
        ("v5litepod-16", 16, 4, 4, 16, False),
        ("v6e-4", 4, 1, 4, 4, True),
        ("v6e-16", 16, 4, 4, 16, False),
        ("v4-8", 4, 1, 4, 4, True),  # the number counts TensorCores: 4 chips
        ("v4-16", 8, 2, 4, 8, False),
        ("v5p-8", 4, 1, 4, 4, True),
        ("v2-8", 4, 1, 4, 8, True),  # each v2 TensorCore is its own JAX device
        ("v3-32", 16, 4, 4, 32, False),
        ("tpu7x-8", 4, 1, 4, 8, True),
    ],
)
def test_slice_names_parse_into_chips_vms_and_devices(name, chips, vms, per_vm, devices, single):
    s = parse_accelerator(name)
    assert (s.chips, s.vms, s.chips_per_vm, s.devices, s.single_host) == (
        chips,
        vms,
        per_vm,
        devices,
        single,
    )


def test_v5e_multi_host_vms_are_not_physical_hosts():
    s = parse_accelerator("v5litepod-16")
    assert s.vms == 4 and s.physical_hosts == 2


@pytest.mark.parametrize(
    ("bad", "suggestion"),
    [
        ("v5e-4", "v5litepod-4"),
        ("v4-4", "v4-8"),
        ("V5LITEPOD-4", "v5litepod-4"),
        ("tpu-v6e-8", "v6e-8"),
        ("v6e-2", "v6e-1"),
        ("v5litepod4", "v5litepod-4"),
    ],
)
def test_bad_names_suggest_the_nearest_valid_name(bad, suggestion):
    with pytest.raises(UnknownAcceleratorError) as err:
        parse_accelerator(bad)
    assert suggestion in err.value.suggestions
    assert bad in str(err.value)


@pytest.mark.parametrize(
    "bad", ["v4-٨", "v5litepod-４", "v5-litepod-4", "-4", "v4-", "v4_8", "v4-8a"]
)
def test_a_name_is_a_generation_a_hyphen_and_ascii_digits(bad: str) -> None:
    """Digits of another script are no size of Google's (int() would read "٨" as 8)."""
    with pytest.raises(UnknownAcceleratorError):
        parse_accelerator(bad)


def test_v4_4_explains_that_names_count_tensorcores():
    with pytest.raises(UnknownAcceleratorError, match="count TensorCores"):
        parse_accelerator("v4-4")


@pytest.mark.parametrize("bad", ["", "abc", "v9-8", "v5litepod--4", "v5litepod-"])
def test_garbage_is_rejected(bad):
    with pytest.raises(UnknownAcceleratorError):
        parse_accelerator(bad)


def test_every_slice_is_consistent():
    for s in catalog.all_slices():
        gen = s.generation
        assert s.vms * s.chips_per_vm == s.chips, s.name
        assert s.hbm_gib_total == s.chips * gen.hbm_gib_per_chip
        assert s.devices == s.chips * gen.devices_per_chip
        assert parse_accelerator(s.name) == s
        assert gen.name_for_chips(s.chips) == s.name
        if not s.single_host:
            assert s.chips_per_vm == gen.chips_per_vm


def test_every_generation_is_complete_and_its_unconfirmed_fields_exist():
    keys = set(catalog.generations())
    assert keys == {"v2", "v3", "v4", "v5e", "v5p", "v6e", "tpu7x"}
    for gen in catalog.generations().values():
        assert gen.zones and gen.runtime_version and gen.device_kind
        assert set(gen.zones_unconfirmed) <= set(gen.zones)
        for field in gen.unconfirmed:
            assert hasattr(gen, field), (gen.key, field)
    src = catalog.sources()
    assert {"docs", "prices", "hbm", "naming", "price_date"} <= set(src)


def test_prices_scale_with_chips_and_route():
    s = parse_accelerator("v5litepod-4")
    on_demand, spot = s.price_per_hour(), s.price_per_hour("spot")
    assert s.generation.price_on_demand is not None and on_demand is not None
    assert on_demand == pytest.approx(4 * s.generation.price_on_demand)
    assert spot is not None and spot < on_demand
    assert parse_accelerator("tpu7x-8").price_per_hour() is None  # no published figure


def test_device_kind_lookup_prefers_v5_lite_over_v5():
    found = [
        catalog.generation_for_device_kind(k) for k in ("TPU v5 lite", "TPU v5", "TPU v6 lite")
    ]
    assert [g and g.key for g in found] == ["v5e", "v5p", "v6e"]
    assert catalog.generation_for_device_kind("cpu") is None


def test_documented_zone_table_lists_course_zones():
    table = catalog.documented_zone_table()
    assert "v5litepod-4" in table["us-west1-c"]
    assert "v5litepod-1" in table["us-central1-a"]
    assert "v6e-4" in table["us-east5-b"]


def _zones(accelerator: str) -> list[str]:
    return parse_accelerator(accelerator).offered_zones


def test_v2_and_v3_pods_are_offered_only_where_google_has_pods():
    # google-behaviour.md: v2-32 and larger only in us-central1-a and europe-west4-a; v3-32 and
    # larger only in europe-west4-a. Small slices keep their generation's zones.
    from tpuwizard.core.plan import catalog

    assert _zones("v2-32") == ["us-central1-a", "europe-west4-a"]
    assert _zones("v2-512") == ["us-central1-a", "europe-west4-a"]
    assert "us-central1-a" not in _zones("v2-8")
    assert _zones("v3-32") == _zones("v3-2048") == ["europe-west4-a"]
    assert "us-central1-b" in _zones("v3-8")
    table = catalog.documented_zone_table()
    assert "v3-32" not in table["us-central1-a"] and "v2-32" in table["us-central1-a"]


# -- Compute Engine: machine types and images -------------------------------------------------
@pytest.mark.parametrize(
    ("accelerator", "machine_type"),
    [
        ("v6e-1", "ct6e-standard-1t"),
        ("v6e-4", "ct6e-standard-4t"),
        ("v6e-8", "ct6e-standard-8t"),  # one VM of 8 chips
        ("v5p-8", "ct5p-hightpu-4t"),  # the number counts TensorCores: 4 chips
        ("tpu7x-8", "tpu7x-standard-4t"),  # 4 chips, 8 JAX devices
    ],
)
def test_single_vm_slices_have_their_compute_engine_machine_type(accelerator, machine_type):
    assert catalog.parse_accelerator(accelerator).machine_type == machine_type
    assert catalog.accelerator_for_machine_type(machine_type) == accelerator


@pytest.mark.parametrize(
    "accelerator",
    ["v5litepod-4", "v5litepod-1", "v4-8", "v3-8", "v2-8", "v6e-16", "v5p-16", "tpu7x-16"],
)
def test_no_machine_type_where_compute_engine_has_no_single_vm_for_it(accelerator):
    # v2-v5e: Compute Engine does not serve them; v6e-16, v5p-16, tpu7x-16: several VMs (a MIG).
    assert catalog.parse_accelerator(accelerator).machine_type is None


def test_a_machine_type_read_back_as_a_url_names_its_slice_and_others_name_none():
    url = "zones/us-east5-a/machineTypes/ct6e-standard-8t"
    assert catalog.accelerator_for_machine_type(url) == "v6e-8"
    assert (
        catalog.accelerator_for_machine_type(
            "https://www.googleapis.com/compute/v1/projects/p/zones/us-east5-a/machineTypes/ct6e-standard-1t"
        )
        == "v6e-1"
    )
    for other in ("ct5lp-hightpu-4t", "n2-standard-8", "", "ct6e-standard-2t"):
        assert catalog.accelerator_for_machine_type(other) is None, other


def test_every_machine_type_is_one_vm_of_its_generation():
    for gen in catalog.generations().values():
        for chips, _ in gen.machine_types:
            s = parse_accelerator(gen.name_for_chips(chips))
            assert s.single_host and s.chips_per_vm == chips, (gen.key, chips)
        # A generation Compute Engine serves has an image to boot; the others neither.
        assert bool(gen.machine_types) == (gen.image_family is not None), gen.key


@pytest.mark.parametrize(
    ("accelerator", "family"),
    [
        ("v6e-4", "ubuntu-accel-2204-amd64-tpu-v5e-v5p-v6e"),
        ("v6e-16", "ubuntu-accel-2204-amd64-tpu-v5e-v5p-v6e"),
        ("v5p-8", "ubuntu-accel-2204-amd64-tpu-v5e-v5p-v6e"),
        ("tpu7x-8", "ubuntu-accel-2404-amd64-tpu-tpu7x"),
        ("v5litepod-4", None),
        ("v4-8", None),
    ],
)
def test_each_generation_names_its_accelerator_image_family(accelerator, family):
    generation = catalog.parse_accelerator(accelerator).generation
    assert generation.image_family == family
    source = catalog.image_source(generation)
    expected = f"projects/ubuntu-os-accelerator-images/global/images/family/{family}"
    assert source == (None if family is None else expected)
