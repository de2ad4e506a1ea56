"""After a teardown, the zone's TPU list as the course checks it (issue 27, item 7): ours, and,
labelled, TPUs tpuwizard did not make (a node made by hand with the course's commands), which it
never deletes."""

from __future__ import annotations

from tests.fakes import MemoryCloud
from tests.memory_world import foreign_node
from tests.unit.test_launch_safety import ZONE, launch
from tpuwizard.core.cloud.types import MANAGED_BY, OWNER_LABEL
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.teardown.zone_list import NOT_OURS, OTHER_USERS, YOURS, zone_listed
from tpuwizard.words.event_text import describe

COURSE_TPU = "jax-course-tpu-01"  # the course's own `gcloud compute tpus tpu-vm create` name


def test_every_tpu_of_the_zone_is_listed_with_who_made_it():
    cloud = MemoryCloud()
    cloud.add(foreign_node(ZONE, COURSE_TPU, {}, "v5litepod-1"))
    cloud.add(foreign_node(ZONE, "tpuwizard-mine", {**MANAGED_BY, OWNER_LABEL: "me"}))
    cloud.add(foreign_node(ZONE, "tpuwizard-theirs", {**MANAGED_BY, OWNER_LABEL: "them"}))
    cloud.add(foreign_node("europe-west4-a", "elsewhere", {}))  # another zone: not listed
    listed = zone_listed(cloud, ZONE, "me", practice=False)
    assert [(t.name, t.made_by) for t in listed.tpus] == [
        (COURSE_TPU, NOT_OURS),
        ("tpuwizard-mine", YOURS),
        ("tpuwizard-theirs", OTHER_USERS),
    ]
    text = describe(listed)
    assert text[0] == (
        f"The TPU list of {ZONE} now (as `gcloud compute tpus tpu-vm list --zone {ZONE}` shows "
        "it): 3 TPUs."
    )
    (course,) = [line for line in text if COURSE_TPU in line]
    assert "not made by tpuwizard: tpuwizard never deletes it; it bills until you do" in course
    assert f"gcloud compute tpus tpu-vm delete {COURSE_TPU} --zone {ZONE}" in course


def test_an_empty_zone_says_so_in_words():
    listed = zone_listed(MemoryCloud(), ZONE, "me", practice=True)
    assert listed.tpus == () and listed.command == ""
    assert describe(listed) == [
        f"The TPU list of {ZONE} now: empty. No TPU, yours or anyone's, is there."
    ]


def test_a_launchs_teardown_ends_with_the_zone_list_and_leaves_a_hand_made_tpu_alone(tmp_path):
    cloud = MemoryCloud()
    cloud.add(foreign_node(ZONE, COURSE_TPU, {}, "v5litepod-1"))
    outcome = launch(tmp_path, cloud)
    names = outcome.names
    assert names.index("TeardownVerified") < names.index("ZoneListed") < names.index("Finished")
    (listed,) = [e for e in outcome.events if isinstance(e, ev.ZoneListed)]
    assert [(t.name, t.made_by) for t in listed.tpus] == [(COURSE_TPU, NOT_OURS)]
    assert cloud.get_node(ZONE, COURSE_TPU) is not None  # never deleted
