"""The check before create that decides whether the watchdog is armed by default: the rule alone,
with no call (core/cloud/iam.py decide)."""

from tpuwizard.core.cloud.iam import DELETE_ROLES, decide, default_account

P = "my-project"
ACCOUNT = default_account(123456789012)


def policy(*bindings):
    return {"version": 1, "bindings": [dict(b) for b in bindings]}


def grant(role, member=f"serviceAccount:{ACCOUNT}", **extra):
    return {"role": role, "members": [member], **extra}


def test_an_account_with_a_delete_role_and_act_as_can_arm():
    for role in DELETE_ROLES:
        check = decide(P, ACCOUNT, True, policy(grant(role)), is_default=True)
        assert check.can_arm is True and check.arm_by_default
        assert role in check.reason


def test_no_delete_role_says_no_with_the_grant_naming_the_real_account():
    check = decide(P, ACCOUNT, True, policy(grant("roles/viewer")), is_default=True)
    assert check.can_arm is False and not check.arm_by_default
    assert "May 2024" in check.reason
    assert check.fix == (
        f"gcloud projects add-iam-policy-binding {P} "
        f"--member=serviceAccount:{ACCOUNT} --role=roles/tpu.admin"
    )


def test_a_delete_role_granted_to_someone_else_does_not_count():
    check = decide(P, ACCOUNT, True, policy(grant("roles/owner", "user:me@example.com")))
    assert check.can_arm is False


def test_without_act_as_it_says_no_and_how_to_get_service_account_user():
    check = decide(P, "wd@p.iam.gserviceaccount.com", False, policy(grant("roles/tpu.admin")))
    assert check.can_arm is False
    assert "iam.serviceAccounts.actAs" in check.reason
    assert check.fix is not None and "roles/iam.serviceAccountUser" in check.fix
    assert "wd@p.iam.gserviceaccount.com" in check.fix


def test_an_unreadable_policy_is_unknown_and_still_arms():
    check = decide(P, ACCOUNT, True, None)
    assert check.can_arm is None and check.arm_by_default
    assert "could not be read" in check.reason and check.fix is None


def test_conditional_or_custom_roles_are_unknown_not_no():
    conditional = grant("roles/tpu.admin", condition={"expression": "request.time < x"})
    assert decide(P, ACCOUNT, True, policy(conditional)).can_arm is None
    custom = grant("projects/my-project/roles/tpuDeleter")
    assert decide(P, ACCOUNT, True, policy(custom)).can_arm is None


def test_act_as_unknown_with_delete_rights_is_unknown():
    check = decide(P, ACCOUNT, None, policy(grant("roles/editor")))
    assert check.can_arm is None and check.arm_by_default
