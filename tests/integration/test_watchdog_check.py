"""The check before create against the sandbox, which answers IAM's actAs test, Resource Manager's
projects.get and getIamPolicy as Google does (google-behaviour.md "actAs", "On the VM")."""

import pytest

from tests.plans import launch_plan
from tpuwizard.core.cloud.iam import check_watchdog, default_account
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox.google import project_number
from tpuwizard.session.session import Session
from tpuwizard.session.watchdog import choose_watchdog


def ask(server, cloud, account=None):
    return check_watchdog(
        cloud.credentials, cloud.project, account, server.endpoint, server.endpoint, 10
    )


def test_the_default_account_with_editor_can_arm(sandbox):
    server, cloud = sandbox(delay=0)
    check = ask(server, cloud)
    assert check.can_arm is True
    assert check.account == default_account(project_number("practice-project"))


def test_an_account_without_delete_rights_is_not_armed(sandbox):
    server, cloud = sandbox("sa_no_delete=1", delay=0)
    check = ask(server, cloud)
    assert check.can_arm is False
    assert check.fix is not None and check.account in check.fix
    assert "roles/tpu.admin" in check.fix


def test_an_unreadable_policy_is_unknown(sandbox):
    server, cloud = sandbox("policy_unreadable=1", delay=0)
    check = ask(server, cloud)
    assert check.can_arm is None and check.arm_by_default


def test_without_act_as_it_is_not_armed(sandbox):
    server, cloud = sandbox("no_act_as=1", delay=0)
    check = ask(server, cloud)
    assert check.can_arm is False and "actAs" in check.reason


def _session_on(cloud):
    session = Session(True, cloud.project)
    session.clouds.use(cloud)  # the test's sandbox, not a practice one started here
    return session


def _plan(tmp_path, route="vm"):
    return launch_plan("v5litepod-1", "us-central1-a", "practice-project", "r1", tmp_path, route)


def test_the_session_arms_by_default_where_the_check_says_yes(sandbox, tmp_path):
    _server, cloud = sandbox(delay=0)
    choice = choose_watchdog(_session_on(cloud), _plan(tmp_path), None)
    assert choice.plan.watchdog
    assert "even if this laptop sleeps" in choice.lines(0)[-1]


def test_where_it_says_no_the_launch_goes_on_without_it_and_says_why(sandbox, tmp_path):
    _server, cloud = sandbox("sa_no_delete=1", delay=0)
    session = _session_on(cloud)
    choice = choose_watchdog(session, _plan(tmp_path, "spot"), None)
    assert not choice.plan.watchdog
    lines = choice.lines(0)
    assert lines[0].startswith("Watchdog off:") and "add-iam-policy-binding" in lines[0]
    assert "only while tpuwizard runs, because" in lines[-1]
    with pytest.raises(BadInput, match="cannot run"):
        choose_watchdog(session, _plan(tmp_path), True)  # --watchdog insists: exit 2


def test_where_it_is_unknown_it_is_armed_and_says_so(sandbox, tmp_path):
    _server, cloud = sandbox("policy_unreadable=1", delay=0)
    choice = choose_watchdog(_session_on(cloud), _plan(tmp_path), None)
    assert choice.plan.watchdog and choice.lines(0)[0].startswith("Watchdog on:")


def test_the_sandbox_refuses_a_create_attaching_an_account_without_act_as(sandbox):
    from google.api_core import exceptions

    from tpuwizard.core.cloud.types import NodeRequest

    _server, cloud = sandbox("no_act_as=1", delay=0)
    zone, run = "us-central1-a", "20261130-011500-ab12"
    attached = NodeRequest(
        zone=zone,
        node_id="sa",
        slice=parse_accelerator("v5litepod-1"),
        run_id=run,
        cloud_platform_scope=True,
    )
    with pytest.raises(exceptions.Forbidden, match="serviceAccountUser"):
        cloud.create_node(attached)
    plain = NodeRequest(
        zone=zone, node_id="plain", slice=parse_accelerator("v5litepod-1"), run_id=run
    )
    assert cloud.create_node(plain) is not None


def test_without_act_as_the_watchdog_is_off_and_insisting_is_the_plans_own_problem(
    sandbox, tmp_path
):
    from tpuwizard.core.errors import PlanRefused

    _server, cloud = sandbox("no_act_as=1", delay=0)
    session = _session_on(cloud)
    choice = choose_watchdog(session, _plan(tmp_path), None)
    assert not choice.plan.watchdog and choice.plan.problems() == []  # goes on without it
    assert choice.check is not None and choice.check.may_attach is False
    with pytest.raises(PlanRefused, match="Google would refuse the create"):
        choose_watchdog(session, _plan(tmp_path), True)  # --watchdog: exit 2, before create
