"""Which user and key SSH logs in with, chosen once (session/login.py) for launch and up and
recorded in the ledger for a kept node's later commands: the key imported again only where it is
not in the profile long enough, the recorded way read back (old records: the metadata way), and
the key deleted after the verified teardown unless another recorded resource still uses it."""

import copy
import json
from pathlib import Path

from tests.fakes import MemoryCloud
from tests.unit.test_launch_safety import make_plan, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.cloud.oslogin import METADATA, OS_LOGIN, LoginChoice, LoginKey, OsLoginKeys
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.records.ledger import Entry, Ledger, Resource
from tpuwizard.core.launch.teardown.verified import TeardownResult
from tpuwizard.session import login
from tpuwizard.words.event_text import describe

ANSWER = json.loads((Path(__file__).parents[1] / "data" / "oslogin_import_answer.json").read_text())
PROFILE = ANSWER["loginProfile"]
OURS = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINkKayT+z56Rqueg5gMWke7fQQssStS01JhIKMeNxqJM me@laptop"
FP = "9c1b2a3d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd01"
HELD_UNTIL = 1764600000.0  # the recorded answer's expirationTimeUsec, in seconds
USER = "jane.doe@example.com"


class Scripted:
    """An AuthorizedSession answering loginProfile with ``profile`` and an import with the
    recorded answer; every call is logged."""

    def __init__(self, profile):
        self.profile, self.asked = profile, []

    def request(self, method, url, **kwargs):
        self.asked.append((method, url.rsplit("/", 1)[-1], kwargs.get("json")))
        body = self.profile if method == "GET" else ANSWER if method == "POST" else {}

        class Response:
            status_code, reason = 200, "OK"

            def json(self):
                return body

        return Response()


def keys_holding(profile):
    keys = OsLoginKeys.__new__(OsLoginKeys)
    keys.session, keys.project = Scripted(profile), "my-project"
    keys.endpoint, keys.timeout = "http://127.0.0.1:1", 5.0
    return keys


def methods(keys):
    return [m for m, _, _ in keys.session.asked]


def test_a_key_held_long_enough_is_used_as_it_is(monkeypatch):
    monkeypatch.setattr("time.time", lambda: HELD_UNTIL - 3600)
    keys = keys_holding(PROFILE)
    key = keys.ensure_key(USER, OURS, HELD_UNTIL - 60)
    assert key == LoginKey(USER, "jane_doe_example_com", FP, HELD_UNTIL)
    assert methods(keys) == ["GET"]  # read, not imported again


def test_a_removed_expired_or_too_short_key_is_imported_again_until_the_deadline(monkeypatch):
    removed = {k: v for k, v in PROFILE.items() if k != "sshPublicKeys"}
    for profile, wanted in ((removed, HELD_UNTIL), (PROFILE, HELD_UNTIL + 3600)):
        keys = keys_holding(profile)
        assert keys.ensure_key(USER, OURS, wanted).fingerprint == FP
        assert methods(keys) == ["GET", "POST"]
        assert keys.session.asked[1][2]["expirationTimeUsec"] == str(int(wanted * 1_000_000))
    # Past its expiry the VM refuses it, whatever is wanted; a node no deadline ends asks for
    # a key that does not expire.
    monkeypatch.setattr("time.time", lambda: HELD_UNTIL + 1)
    keys = keys_holding(PROFILE)
    keys.ensure_key(USER, OURS, None)
    assert keys.session.asked[1][2] == {"key": OURS}


def test_the_choice_is_recorded_and_read_back_and_old_records_mean_metadata():
    choice = LoginChoice(OS_LOGIN, "jane_doe_example_com", USER, FP)
    assert LoginChoice.from_record(choice.record()) == choice
    assert LoginChoice.from_record(None) == LoginChoice(METADATA)
    assert LoginChoice.from_record({"way": "telnet"}) == LoginChoice(METADATA)
    assert LoginChoice("gcloud").transport == "gcloud" and choice.transport == "ssh"


def resource(name):
    return Resource("node", "my-project", "us-east5-a", name, "v6e-1", f"run-{name}")


def test_a_kept_node_logs_in_as_up_recorded_until_its_deadline():
    choice = LoginChoice(OS_LOGIN, "jane_doe_example_com", USER, FP)
    entry = Entry(resource("a"), "kept", 0, 0, {"login": choice.record(), "deadline": 1800.5})
    assert login.recorded_login(entry) == (choice, login.OsLoginAsk(1800.5))
    no_deadline = Entry(resource("a"), "kept", 0, 0, {"login": choice.record(), "deadline": None})
    assert login.recorded_login(no_deadline)[1] == login.OsLoginAsk(None)
    old = Entry(resource("a"), "kept", 0, 0, {})
    assert login.recorded_login(old) == (LoginChoice(METADATA), None)


def test_the_launch_records_how_it_logs_in_with_its_intent(tmp_path):
    rt = make_runtime(tmp_path, MemoryCloud())
    rt.login = LoginChoice(OS_LOGIN, "jane_doe_example_com", USER, FP)
    run_launch(make_plan(tmp_path), rt, lambda e: None, CancelToken())
    records = [json.loads(line) for line in rt.ledger.path.read_text().splitlines()]
    (intent,) = [r for r in records if r["op"] == "intent"]
    assert intent["login"] == rt.login.record()


class Deletes:
    def __init__(self, refuse=None):
        self.deleted, self.refuse = [], refuse

    def delete_key(self, key):
        if self.refuse:
            raise self.refuse
        self.deleted.append(key.fingerprint)


def ledger_with(tmp_path, *names, op="kept"):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    record = LoginChoice(OS_LOGIN, "jane_doe_example_com", USER, FP).record()
    for name in names:
        ledger.record(op, resource(name), login=record)
    return ledger


def test_the_key_stays_while_another_recorded_node_logs_in_with_it(tmp_path):
    ledger, keys = ledger_with(tmp_path, "a", "b"), Deletes()
    key = LoginKey(USER, "jane_doe_example_com", FP, None)
    ledger.record("gone", resource("a"))
    assert login.forget_unless_used(ledger, key, keys) == "b" and keys.deleted == []
    ledger.record("gone", resource("b"))
    assert login.forget_unless_used(ledger, key, keys) is None and keys.deleted == [FP]
    (line,) = describe(ev.LoginKeyForgotten(FP, still_used_by="b"))
    assert "stays in your OS Login profile" in line and "b still logs in with it" in line


def test_down_deletes_the_key_of_what_it_verified_gone_and_says_so(tmp_path, monkeypatch):
    ledger = ledger_with(tmp_path, "a", "c")
    ledger.record("gone", resource("a"))
    keys = Deletes()
    monkeypatch.setattr(login, "keys_for", lambda cloud: keys)
    results = [TeardownResult(resource("a"), True), TeardownResult(resource("c"), False)]
    said = login.forget_after_teardown(lambda backend: None, ledger, copy.copy(results))
    # c was not verified gone, so it may still log in with the key: the key stays, and is said.
    assert said[0].login_key == ev.LoginKeyForgotten(FP, still_used_by="c")
    assert said[1] == results[1] and keys.deleted == []
    ledger.record("gone", resource("c"))
    (last,) = login.forget_after_teardown(
        lambda backend: None, ledger, [TeardownResult(resource("c"), True)]
    )
    assert last.login_key == ev.LoginKeyForgotten(FP) and keys.deleted == [FP]
    refused = Deletes(RuntimeError("OS Login refused (HTTP 503)"))
    monkeypatch.setattr(login, "keys_for", lambda cloud: refused)
    (again,) = login.forget_after_teardown(lambda backend: None, ledger, results[:1])
    assert again.verified and again.login_key is not None
    assert "HTTP 503" in (again.login_key.problem or "")
