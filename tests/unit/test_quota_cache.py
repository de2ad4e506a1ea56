"""The quota check's answers on disk (issue 33's "a quota answer from the disk cache"): every
live read is kept; a later read that fails says what the last one found and when, still
UNKNOWN; a kept limit never passes, fails or picks a backend, the live read does."""

from __future__ import annotations

import dataclasses
import time

from tests.unit.fake_rest import QUOTA_PROJECT, FakeRest, P, ask, reach
from tests.unit.test_preflight_quota import TPU, region_info
from tpuwizard.core.preflight import quota, quota_cache
from tpuwizard.core.preflight.model import Verdict

NAME = "TPUV6EPerProjectPerRegionForTPUAPI"


def kept_reach(rest, path):
    return dataclasses.replace(reach(rest), quota_cache=path)


def test_a_failed_read_says_what_the_last_one_found_and_stays_unknown(tmp_path):
    path = quota_cache.cache_file(tmp_path, practice=True)
    live = quota.read_quota(
        ask(), kept_reach(FakeRest({f"{TPU}/{NAME}": region_info(NAME, 16)}), path)
    )
    assert live.check.verdict is Verdict.PASS
    kept = quota_cache.load(path).limit(P, NAME, "us-east5")
    assert kept is not None and kept[0] == 16 and time.time() - kept[2] < 60
    refused = quota.read_quota(ask(), kept_reach(FakeRest({f"{TPU}/{NAME}": QUOTA_PROJECT}), path))
    assert refused.check.verdict is Verdict.UNKNOWN and refused.room is None  # never decides
    assert refused.check.fix == f"gcloud auth application-default set-quota-project {P}"
    assert f"the last read found {NAME} limit 16 in us-east5 (read " in refused.check.detail
    # Without a kept read (or without the cache), the same refusal says only itself.
    bare = quota.read_quota(ask(), reach(FakeRest({f"{TPU}/{NAME}": QUOTA_PROJECT})))
    assert "last read" not in bare.check.detail


def test_a_kept_limit_never_stands_in_for_the_live_one(tmp_path):
    path = quota_cache.cache_file(tmp_path, practice=False)
    quota.read_quota(ask(), kept_reach(FakeRest({f"{TPU}/{NAME}": region_info(NAME, 16)}), path))
    lowered = quota.read_quota(
        ask(), kept_reach(FakeRest({f"{TPU}/{NAME}": region_info(NAME, 0)}), path)
    )
    assert lowered.check.verdict is Verdict.FAIL and lowered.room == 0
    kept = quota_cache.load(path).limit(P, NAME, "us-east5")
    assert kept is not None and kept[0] == 0  # the newest read kept


def test_a_torn_or_foreign_file_is_no_answer(tmp_path):
    path = quota_cache.cache_file(tmp_path, practice=True)
    for text in ('{"version": 1, "entries": {"a|b|c": [1, "x"', '{"version": 1, "entries": 3}',
                 '{"version": 1, "entries": {"a|b": [1, "1", 2.0]}}', "[]"):  # fmt: skip
        path.write_text(text)
        assert quota_cache.load(path).entries == {}
