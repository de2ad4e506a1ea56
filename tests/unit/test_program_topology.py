"""Slices as libtpu's compile-only topologies, and the small parsers of `fit --program`."""

import pytest

from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog, program_fit, program_result


@pytest.mark.parametrize(
    ("name", "topology", "bounds"),
    [
        ("v5litepod-1", "v5e:1x1", (1, 1, 1)),
        ("v5litepod-4", "v5e:2x2", (2, 2, 1)),
        ("v5litepod-8", "v5e:2x4", (2, 4, 1)),
        ("v5litepod-16", "v5e:4x4", (2, 2, 1)),
        ("v5litepod-256", "v5e:16x16", (2, 2, 1)),
        ("v6e-8", "v6e:2x4", (2, 4, 1)),
        ("v4-8", "v4:2x2x1", (2, 2, 1)),
        ("v4-16", "v4:2x2x2", (2, 2, 1)),
        ("v4-128", "v4:4x4x4", (2, 2, 1)),
        ("v5p-8", "v5p:2x2x1", (2, 2, 1)),
        ("v5p-32", "v5p:2x2x4", (2, 2, 1)),
        ("v2-8", "v2:2x2", (2, 2, 1)),
        ("v3-32", "v3:4x4", (2, 2, 1)),
        ("tpu7x-8", "tpu7x:2x2x1", (2, 2, 1)),
    ],
)
def test_slices_map_to_topologies(name, topology, bounds):
    target = program_fit.target_for(catalog.parse_accelerator(name))
    assert (target.topology, target.host_bounds) == (topology, bounds)


def test_three_d_grids_double_the_smallest_side():
    grids = [program_fit.topology_grid(4 * 2**k, True) for k in range(8)]
    assert grids == [
        (2, 2, 1),
        (2, 2, 2),
        (2, 2, 4),
        (2, 4, 4),
        (4, 4, 4),
        (4, 4, 8),
        (4, 8, 8),
        (8, 8, 8),
    ]


def test_mesh_text():
    assert program_fit.parse_mesh(None) == [("data", None)]
    assert program_fit.parse_mesh("data=4,model=2") == [("data", 4), ("model", 2)]
    assert program_fit.parse_mesh("data, model=2") == [("data", None), ("model", 2)]
    with pytest.raises(BadInput, match="only one axis"):
        program_fit.parse_mesh("data,model")
    with pytest.raises(BadInput, match="must be a whole number"):
        program_fit.parse_mesh("data=\uff14")  # a full-width 4: int() would take it


def test_bytes_a_compile_said_it_needed():
    message = (
        "RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory required for HLO "
        "temporaries (24.00G) exceeds available HBM (15.75G)."
    )
    assert program_result.needed_bytes(message) == 24 * 2**30
    assert program_result.needed_bytes("something else") is None


def test_peak_is_arguments_outputs_temporaries_less_aliased_plus_code():
    numbers = {"arguments": 100, "outputs": 40, "temporaries": 7, "aliased": 30, "code": 5}
    assert program_result.peak_bytes(numbers) == 122
