"""OS Login keys: the POSIX user and fingerprint read from a recorded Google answer, the import's
request, and the key's delete after the verified teardown (never before, never hiding it)."""

import json
from pathlib import Path

import pytest

from tests.fakes import MemoryCloud
from tests.unit.test_launch_safety import make_plan, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.cloud.oslogin import (
    LoginKey,
    OsLoginError,
    OsLoginKeys,
    fingerprint_of,
    posix_username,
)
from tpuwizard.core.exit_codes import EXIT_FAILED, EXIT_TEARDOWN
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.words.event_text import describe

# users.importSshPublicKey's answer as Google's reference shapes it (ImportSshPublicKeyResponse):
# two POSIX accounts, the primary one second; two keys, ours the second.
ANSWER = json.loads((Path(__file__).parents[1] / "data" / "oslogin_import_answer.json").read_text())
OURS = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINkKayT+z56Rqueg5gMWke7fQQssStS01JhIKMeNxqJM me@laptop"
OUR_FINGERPRINT = "9c1b2a3d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd01"


def test_the_posix_user_is_the_primary_accounts_not_the_first_nor_the_email():
    assert posix_username(ANSWER["loginProfile"]) == "jane_doe_example_com"


def test_without_a_primary_account_the_named_one_is_used():
    profile = {"posixAccounts": [{"username": "only_one", "uid": "1"}]}
    assert posix_username(profile) == "only_one"


def test_a_profile_without_a_posix_account_says_what_to_do():
    with pytest.raises(OsLoginError, match="--transport gcloud"):
        posix_username({"name": "jane.doe@example.com"})


def test_our_key_is_found_by_type_and_blob_whatever_its_comment():
    assert fingerprint_of(ANSWER["loginProfile"], OURS) == OUR_FINGERPRINT
    with pytest.raises(OsLoginError):
        fingerprint_of(ANSWER["loginProfile"], "ssh-ed25519 AAAAnotours")


class Recorded:
    """An AuthorizedSession that answers each call with a recorded body."""

    def __init__(self, status, body):
        self.status, self.body, self.asked = status, body, []

    def request(self, method, url, **kwargs):
        self.asked.append((method, url, kwargs.get("params"), kwargs.get("json")))
        status, body = self.status, self.body

        class Response:
            status_code, reason = status, "Forbidden"

            def json(self):
                return body

        return Response()


def keys_answering(status, body):
    keys = OsLoginKeys.__new__(OsLoginKeys)
    keys.session, keys.project = Recorded(status, body), "my-project"
    keys.endpoint, keys.timeout = "http://127.0.0.1:1", 5.0
    return keys


def test_the_import_asks_for_the_deadline_and_answers_the_posix_user():
    keys = keys_answering(200, ANSWER)
    key = keys.import_key("jane.doe@example.com", OURS, 1764600000.0)
    assert key == LoginKey(
        "jane.doe@example.com", "jane_doe_example_com", OUR_FINGERPRINT, 1764600000.0
    )
    method, url, params, body = keys.session.asked[0]
    assert (method, params) == ("POST", {"projectId": "my-project"})
    assert url == "http://127.0.0.1:1/v1/users/jane.doe@example.com:importSshPublicKey"
    assert body == {"key": OURS, "expirationTimeUsec": "1764600000000000"}


def test_a_refused_import_is_a_diagnosis_not_a_traceback():
    keys = keys_answering(403, {"error": {"code": 403, "message": "Permission denied."}})
    with pytest.raises(OsLoginError, match=r"HTTP 403: Permission denied.*--transport gcloud"):
        keys.import_key("jane.doe@example.com", OURS, 1.0)


def launch_forgetting(tmp_path, cloud, forget):
    plan, rt = make_plan(tmp_path), make_runtime(tmp_path, cloud)
    rt.login_key, rt.forget_login_key = OUR_FINGERPRINT, forget
    events: list[ev.Event] = []
    code = run_launch(plan, rt, events.append, CancelToken())
    return code, events


def test_the_key_is_deleted_after_the_verified_teardown_and_said(tmp_path):
    cloud, when = MemoryCloud(), []
    code, events = launch_forgetting(tmp_path, cloud, lambda: when.append(dict(cloud.nodes)))
    assert when == [{}]  # once, with the node already gone
    names = [type(e).__name__ for e in events]
    assert (
        names.index("TeardownVerified") < names.index("LoginKeyForgotten") < names.index("Finished")
    )
    forgot = next(e for e in events if isinstance(e, ev.LoginKeyForgotten))
    assert forgot == ev.LoginKeyForgotten(OUR_FINGERPRINT)
    assert code == EXIT_FAILED  # the workers here run nothing; the delete changes no code


def test_a_refused_delete_is_said_and_the_verified_teardown_stands(tmp_path):
    def refuse():
        raise OsLoginError("OS Login refused to delete tpuwizard's SSH key (HTTP 503)")

    code, events = launch_forgetting(tmp_path, MemoryCloud(), refuse)
    assert code == EXIT_FAILED and any(isinstance(e, ev.TeardownVerified) for e in events)
    forgot = next(e for e in events if isinstance(e, ev.LoginKeyForgotten))
    (line,) = describe(forgot)
    assert "HTTP 503" in line and "verified all the same" in line and OUR_FINGERPRINT in line


def test_no_delete_while_the_node_may_still_exist(tmp_path):
    called = []
    code, events = launch_forgetting(
        tmp_path, MemoryCloud.faulty("lying_delete=100"), lambda: called.append(1)
    )
    assert code == EXIT_TEARDOWN and called == []
    assert not any(isinstance(e, ev.LoginKeyForgotten) for e in events)
