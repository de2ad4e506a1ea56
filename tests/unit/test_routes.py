import pytest

from tpuwizard.core.plan.routes import BUDGETS, RUN_LENGTHS, recommend, route_table


def test_the_table_has_the_four_routes_with_every_column():
    table = route_table()
    assert [r.key for r in table] == ["notebook", "vm", "spot", "flex"]
    assert all(r.cost and r.wait and r.max_run and r.chips and r.account for r in table)


def test_no_billing_account_means_the_free_notebook():
    advice = recommend("normal", 4, "1-4 hours", billing_account=False)
    assert advice.route == "notebook" and "Kaggle" in advice.reason


def test_free_budget_single_chip_points_at_colab():
    assert "Colab" in recommend("free", 1, "under 1 hour", True).reason


def test_low_budget_short_runs_take_spot_and_long_runs_flex():
    assert recommend("low", 4, "1-4 hours", True).route == "spot"
    assert recommend("low", 4, "days", True).route == "flex"


def test_normal_budget_takes_on_demand_unless_the_slice_is_large():
    assert recommend("normal", 4, "4-24 hours", True).route == "vm"
    assert recommend("normal", 64, "4-24 hours", True).route == "flex"


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("length", RUN_LENGTHS)
@pytest.mark.parametrize("chips", [1, 4, 8, 16, 64])
@pytest.mark.parametrize("billing", [True, False])
def test_every_answer_gets_a_route_and_a_reason(budget, length, chips, billing):
    advice = recommend(budget, chips, length, billing)
    assert advice.route in {"notebook", "vm", "spot", "flex"} and advice.reason
    if not billing:
        assert advice.route == "notebook"


def test_unknown_answers_are_rejected():
    with pytest.raises(ValueError):
        recommend("lavish", 4, "days", True)


@pytest.mark.parametrize("chips", [1, 4, 16])
def test_the_reason_names_the_answer_that_chose_the_free_notebook(chips):
    free = recommend("free", chips, "1-4 hours", billing_account=True)
    assert free.route == "notebook"
    assert "budget of nothing" in free.reason and "billing account" not in free.reason
    no_account = recommend("normal", chips, "1-4 hours", billing_account=False)
    assert "Without a billing account" in no_account.reason
