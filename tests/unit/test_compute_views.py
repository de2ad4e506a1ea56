"""Compute Engine's JSON read into compute_views (the plain REST reads) gives what
google-cloud-compute's messages give: every field named as compute.v1.json names it, of its kind
there, and an instance and a slice's parts read into the same nodes, fields left out included."""

from __future__ import annotations

import json
from dataclasses import fields
from functools import cache

import pytest

from tests.integration.discovery import document
from tests.unit.test_compute_cloud import INSTANCE
from tpuwizard.core.cloud.compute import (
    read as compute_read,
)
from tpuwizard.core.cloud.compute import (
    slice_body as compute_slice_body,
)
from tpuwizard.core.cloud.compute import (
    views as compute_views,
)
from tpuwizard.core.cloud.compute.slice_reads import slice_info
from tpuwizard.core.cloud.compute.views import json_key, read


@cache
def schemas() -> dict:
    return document("v1", api="compute")["schemas"]


@pytest.mark.parametrize("view", compute_views.VIEWS, ids=lambda v: v.__name__)
def test_every_field_is_compute_v1_json_s_of_its_kind_there(view):
    properties = schemas()[view.SCHEMA]["properties"]
    for f in fields(view):
        key = json_key(f.name, f.metadata)
        assert key in properties, f"{view.SCHEMA} has no {key}"
        there = properties[key]
        if "one" in f.metadata:
            assert there["$ref"] == f.metadata["one"].SCHEMA, key
        elif "many" in f.metadata:
            assert there["type"] == "array", key
            assert there["items"]["$ref"] == f.metadata["many"].SCHEMA, key
        elif f.type == "int":
            assert (there["type"], there.get("format")) == ("string", "uint64"), key
        elif f.type == "dict[str, str]":
            assert there["type"] == "object", key
        else:
            assert there["type"] == "string", key


def test_a_machine_type_s_name_is_where_a_zone_s_is():
    assert schemas()["MachineType"]["properties"]["name"]["type"] == "string"


SPARSE = {"name": "tpu-b", "status": "PROVISIONING"}  # what a fresh insert may answer


@pytest.mark.parametrize(
    "body",
    [
        INSTANCE,
        SPARSE,
        dict(INSTANCE, networkInterfaces=[{"networkIP": "10.0.0.6"}], scheduling={}),
        dict(INSTANCE, scheduling={"provisioningModel": "FLEX_START"}, resourceStatus={}),
    ],
)
def test_an_instance_reads_into_the_node_the_library_s_message_gives(body):
    from google.cloud import compute_v1

    theirs = compute_v1.Instance.from_json(json.dumps(body), ignore_unknown_fields=True)
    ours = read(compute_views.Instance, body)
    assert compute_read.node_info(ours, "z") == compute_read.node_info(theirs, "z")
    stamp = ours.resource_status.scheduling.termination_timestamp
    assert stamp == theirs.resource_status.scheduling.termination_timestamp


def slice_parts(note: str) -> tuple[dict, dict, dict, list[dict]]:
    mig = {
        "name": "tpuwizard-r1",
        "id": "77",
        "description": note,
        "creationTimestamp": "2026-12-01T10:00:00.000-08:00",
        "status": {
            "appliedAcceleratorTopologies": [{"acceleratorTopology": "4x4", "state": "ACTIVE"}]
        },
    }
    template = {
        "name": "tpuwizard-r1-it",
        "description": note,
        "creationTimestamp": "2026-12-01T10:00:00.000-08:00",
        "properties": {"labels": {"managed-by": "tpuwizard", "tpuwizard-run": "r1"}},
    }
    policy = {"name": "tpuwizard-r1-wp", "description": note}
    vms = [
        dict(INSTANCE, name=f"tpuwizard-r1-{i}", scheduling={"provisioningModel": "FLEX_START"})
        for i in range(4)
    ]
    return mig, template, policy, vms


@pytest.mark.parametrize("left", ["all", "template only", "nothing said"])
def test_a_slice_s_parts_read_into_the_node_the_library_s_messages_give(left):
    from google.cloud import compute_v1

    from tests.unit.test_compute_slices import request

    note = compute_slice_body.template_body(request())["description"]
    mig, template, policy, vms = slice_parts(note if left != "nothing said" else "")
    if left == "template only":
        mig, policy, vms = None, None, []
    library = (
        compute_v1.InstanceGroupManager,
        compute_v1.InstanceTemplate,
        compute_v1.ResourcePolicy,
    )
    views = (
        compute_views.InstanceGroupManager,
        compute_views.InstanceTemplate,
        compute_views.ResourcePolicy,
    )

    def theirs(kind, body):
        return None if body is None else kind.from_json(json.dumps(body))

    def ours(kind, body):
        return None if body is None else read(kind, body)

    parts = (mig, template, policy)
    expected = slice_info(
        "us-east5-b",
        "tpuwizard-r1",
        *(theirs(k, b) for k, b in zip(library, parts, strict=True)),
        [theirs(compute_v1.Instance, v) for v in vms],
    )
    got = slice_info(
        "us-east5-b",
        "tpuwizard-r1",
        *(ours(k, b) for k, b in zip(views, parts, strict=True)),
        [read(compute_views.Instance, v) for v in vms],
    )
    assert got == expected
    if left == "all":
        assert got.state == "RUNNING" and got.flex and got.uid == "77" and len(got.endpoints) == 4
