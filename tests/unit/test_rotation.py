"""The kill drills' rotation (tests/rotation.py) meets every point over a few turns: a drill
that rotated a point out for good would prove nothing about it."""

from tests.rotation import ALL_ENV, TURN_ENV, rotating

POINTS = ["created", "ready", "bootstrap", "verifier", "teardown"]


def test_every_point_is_met_within_a_few_turns_and_the_always_ones_every_turn(monkeypatch):
    met: set[str] = set()
    for turn in range(3):  # 2 of 4 rotating points a turn: within 2 turns every one
        monkeypatch.setenv(TURN_ENV, str(turn))
        chosen = rotating(POINTS, per_run=2, always=("teardown",))
        assert "teardown" in chosen and len(chosen) == 3
        assert chosen == [p for p in POINTS if p in chosen]  # in the drill's own order
        met.update(chosen)
    assert met == set(POINTS)


def test_asked_for_all_runs_every_point(monkeypatch):
    monkeypatch.setenv(ALL_ENV, "all")
    assert rotating(POINTS, per_run=1) == POINTS


def test_rotating_tests_meet_every_test_of_a_group_within_a_few_turns(monkeypatch):
    from tests.conftest import ROTATING_PER_RUN
    from tests.rotation import rotating_tests

    ids = [f"tests/integration/test_x.py::test_{n}" for n in "dcba"]
    met: set[str] = set()
    for turn in range(2):
        monkeypatch.setenv(TURN_ENV, str(turn))
        chosen = rotating_tests(ids, per_run=2)
        assert len(chosen) == 2 and chosen == rotating_tests(list(reversed(ids)), per_run=2)
        met |= chosen
    assert met == set(ids)  # every test runs within len/per_run turns
    monkeypatch.setenv(ALL_ENV, "all")
    assert rotating_tests(ids, per_run=1) == set(ids)
    assert all(n >= 1 for n in ROTATING_PER_RUN.values())  # no group rotated out for good
