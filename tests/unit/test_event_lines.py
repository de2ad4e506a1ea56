"""The lines printed for lifecycle events (the CLI, plain mode and the wizard's logs)."""

from tests.lifecycle_events import planned
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.words.event_text import describe


def test_the_creating_line_says_the_deadline_in_whole_minutes_or_that_there_is_none():
    assert "deadline 120 min." in describe(planned(max_run_minutes=120.0))[0]
    assert "deadline 2.5 min." in describe(planned(max_run_minutes=2.5))[0]
    assert "no deadline." in describe(planned(max_run_minutes=None))[0]
    assert "None" not in describe(planned(max_run_minutes=None))[0]


def test_the_queued_request_is_explained_where_its_name_first_appears():
    queued = ev.ResourceExists(
        "tpuwizard-r1-qr", "queued", "us-central1-a", "v5litepod-4", "spot", "r1"
    )
    line = " ".join(describe(queued))
    assert "tpuwizard-r1-qr" in line and "queued request" in line
    assert "deleted with the node" in line
    # A node made directly has no request to explain.
    node = ev.ResourceExists("tpuwizard-r1", "node", "us-central1-a", "v5litepod-4", "vm", "r1")
    assert describe(node) == []


def test_a_flex_start_wait_names_queue_wait_as_its_bound_and_spot_names_ready_timeout():
    # issue 39, item 11: a Flex-start wait said --ready-timeout, which does not bound it.
    waiting = ev.Provisioning("WAITING_FOR_RESOURCES", 30.0, 0.0, "us-central1-a", "flex")
    (line,) = describe(waiting)
    assert "--queue-wait bounds the wait" in line and "--ready-timeout" not in line
    (line,) = describe(ev.Provisioning("WAITING_FOR_RESOURCES", 30.0, 0.0, "us-east5-a", "spot"))
    assert "--ready-timeout bounds the wait" in line
    (line,) = describe(waiting, "wizard")
    assert "Ctrl+Q stops the wait" in line


def test_route_2b_s_build_states_name_the_parts_made_and_that_they_go_with_the_node():
    said = " ".join(describe(ev.Provisioning("CREATING_MIG", 4.0, 0.0, "us-east5-b"), "cli"))
    assert "instance template and the MIG (managed instance group)" in said
    assert "not billing yet" in said and "deleted with it" in said
    said = " ".join(describe(ev.Provisioning("REQUESTING", 5.0, 0.0, "us-east5-b"), "cli"))
    assert "resize request" in said and "deleted with it" in said
    said = " ".join(describe(ev.Provisioning("PROVISIONING", 6.0, 0.0), "cli"))
    assert said.endswith("(not billing yet)")


def test_a_verified_delete_speaks_for_its_launch_alone():
    """A node kept earlier may still bill: the delete's line says nothing of this launch bills,
    never that nothing bills at all (a newcomer's walk, round 5)."""
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.words.event_text import describe

    [line] = describe(ev.TeardownVerified("tpu-a", "node", 12.0, 0.02, "us-central1-a"))
    assert "Nothing of this launch is billing." in line and "Nothing is billing" not in line
