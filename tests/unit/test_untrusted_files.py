"""Files tpuwizard reads back, read as untrusted input (issue 48, item 8; report F9): a FIFO in
a cache's place never blocks, ``/dev/zero`` is never read to the end, a read time far in the
future is set aside (it crashed every command: "timestamp out of range"), a negative or NaN price
is never shown as the Billing Catalog's, and JSON nested past the parser or giving a key twice is
refused; each reader then falls back as it says (re-read, the offline table, none)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.untrusted_files import HOSTILE, nested, put_hostile, within
from tpuwizard.core import untrusted
from tpuwizard.core.prices import cache

# -- the one reader ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("fifo", "it is a named pipe (FIFO), not a regular file"),
        ("dev-zero", "it is a character device (such as /dev/zero), not a regular file"),
        ("folder", "it is a folder, not a regular file"),
    ],
)
def test_only_a_regular_file_is_read_and_a_fifo_never_blocks(tmp_path, kind, words):
    path = put_hostile(tmp_path / "cache.json", kind)
    with pytest.raises(untrusted.NotASmallFile) as refused:
        within(10, lambda: untrusted.read_small(path, 1024))
    assert refused.value.why == words and not refused.value.too_large


def test_a_file_past_its_bound_is_refused_and_one_at_it_is_read(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 1024)
    assert untrusted.read_small(path, 1024) == b"x" * 1024
    path.write_bytes(b"x" * 1025)
    with pytest.raises(untrusted.NotASmallFile) as refused:
        untrusted.read_small(path, 1024)
    assert refused.value.too_large and "larger than 1 KiB" in refused.value.why


@pytest.mark.parametrize(
    "data",
    [b"{}", b"\xef\xbb\xbf{}", b"\xef\xbb\xbf\xef\xbb\xbf{}", b"caf\xc3\xa9", b""],
)
def test_text_is_read_as_the_utf_8_sig_codec_reads_it(tmp_path: Path, data: bytes) -> None:
    """One leading byte-order mark dropped (a file saved by Notepad), a second one kept."""
    path = tmp_path / "f"
    path.write_bytes(data)
    assert untrusted.read_text(path, 1024) == data.decode("utf-8-sig")


# Two bytes of a mark and nothing else: the codec reads "" (as if the file were still being
# written); read here as what it is, no UTF-8.
@pytest.mark.parametrize("data", [b"\xff{}", b"\xef\xbb\xbf\xff", b"\xef\xbb"])
def test_text_that_is_no_utf_8_is_a_value_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "f"
    path.write_bytes(data)
    with pytest.raises(UnicodeDecodeError):
        untrusted.read_text(path, 1024)


def test_json_past_its_depth_a_key_twice_and_nan_are_refused_not_crashes():
    with pytest.raises(untrusted.BadJson, match="nests deeper than 16"):
        untrusted.loads(nested(100_000))  # Python's own parser: RecursionError
    with pytest.raises(untrusted.DuplicateKey, match="'a' twice"):
        untrusted.loads('{"a": 1, "a": 2}')
    for text in ("NaN", "[Infinity]", "[-Infinity]", "[1e999]"):
        with pytest.raises(untrusted.BadJson):
            untrusted.loads(text)
    with pytest.raises(untrusted.BadJson, match="30-digit integer"):
        untrusted.loads("9" * 30)
    assert untrusted.loads('{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}


def test_a_time_is_sane_only_when_finite_and_not_in_the_future():
    now = time.time()
    assert untrusted.sane_time(now) and untrusted.sane_time(now + 60)  # a little skew
    assert untrusted.sane_time(0.0)  # old: read again as any old read is
    for bad in (1e308, now + 3600, float("nan"), float("inf"), -1e20, -1.0, True, "now", None):
        assert not untrusted.sane_time(bad), bad
    assert untrusted.time_problem(1e308) == "its time is in the future"


def test_an_amount_is_usable_only_when_finite_and_above_zero():
    assert untrusted.usable_amount(1.2) and untrusted.usable_amount(3)
    for bad in (0, 0.0, -20.0, float("nan"), float("inf"), True, "1.2", None):
        assert not untrusted.usable_amount(bad), bad


# -- the price cache -----------------------------------------------------------------------------
def saved_book(path: Path, usd: object = 1.2, read_at: object = None) -> None:
    """A price cache as cache.save writes it, with one price and the read time given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    read_at = time.time() if read_at is None else read_at
    rows = [["v5e", "on-demand", "us-central1", usd, "EE2D-3BE1-421A"]]
    slices = {"v5litepod-4": ["v5e", 4]}
    saved = {"version": 2, "read_at": read_at, "prices": rows, "slices": slices}
    path.write_text(json.dumps(saved))  # json writes NaN and Infinity as their JS names


def test_a_sane_cache_is_read(tmp_path):
    path = tmp_path / "prices-practice.json"
    saved_book(path)
    book, why = cache.read(path)
    assert why == "" and book is not None and book.per_chip_hour("v5e", "on-demand", "us-central1")


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_price_cache_that_is_no_regular_file_is_set_aside_at_once(tmp_path, kind):
    path = put_hostile(tmp_path / "prices-practice.json", kind)
    book, why = within(10, lambda: cache.read(path))
    assert book is None and "not a regular file" in why


def test_a_read_time_far_in_the_future_is_set_aside_not_a_crash(tmp_path):
    path = tmp_path / "prices-practice.json"
    for read_at in (1e308, time.time() + 86400):
        saved_book(path, read_at=read_at)
        book, why = cache.read(path)  # no book: its .date ("timestamp out of range") never shown
        assert book is None and why == "its time is in the future"


@pytest.mark.parametrize(
    ("usd", "words"),
    [
        (-5, "a price in it is not a positive number (-5)"),
        (0, "a price in it is not a positive number (0)"),
        (float("nan"), "it holds NaN"),
        (float("inf"), "it holds Infinity"),
        (1e308, "a price in it is no chip-hour's price ($1e+308)"),  # x chips x hours: inf
    ],
)
def test_a_price_that_is_no_price_sets_the_whole_read_aside(tmp_path, usd, words):
    path = tmp_path / "prices-practice.json"
    saved_book(path, usd=usd)
    book, why = cache.read(path)
    assert book is None and words in why, why


def test_a_cache_nested_past_the_parser_or_giving_a_key_twice_is_set_aside(tmp_path):
    path = tmp_path / "prices-practice.json"
    path.write_text(nested(100_000))
    assert cache.read(path) == (None, "its JSON nests deeper than the parser can follow")
    path.write_text('{"version": 2, "version": 2}')
    assert cache.read(path) == (None, "it gives the key 'version' twice")


def test_saving_over_a_fifo_or_a_folder_writes_nothing_into_it_and_leaves_no_temporary(tmp_path):
    from tpuwizard.core.prices.cache import PriceBook

    fifo = put_hostile(tmp_path / "a" / "prices-practice.json", "fifo")
    within(10, lambda: cache.save(fifo, PriceBook(time.time())))  # replaced, not written into
    assert cache.read(fifo)[0] is not None
    folder = put_hostile(tmp_path / "b" / "prices-practice.json", "folder")
    with pytest.raises(OSError):
        cache.save(folder, PriceBook(time.time()))
    assert [p.name for p in folder.parent.iterdir()] == ["prices-practice.json"]


def test_the_catalog_read_drops_a_sku_priced_at_nothing_or_below():
    from tpuwizard.core.prices.skus import parse_skus

    def sku(units: str, nanos: int) -> dict:
        return {
            "description": "TpuV5e",
            "skuId": "X",
            "category": {"usageType": "OnDemand"},
            "serviceRegions": ["us-central1"],
            "pricingInfo": [
                {
                    "pricingExpression": {
                        "usageUnit": "h",
                        "tieredRates": [{"unitPrice": {"units": units, "nanos": nanos}}],
                    }
                }
            ],
        }

    assert [p.usd_per_chip_hour for p in parse_skus([sku("1", 200_000_000)])] == [1.2]
    assert parse_skus([sku("-20", 0), sku("0", 0)]) == []


# -- the quota and zone caches, the heartbeats, the attempts -----------------------------------
@pytest.mark.parametrize("kind", HOSTILE)
def test_a_quota_cache_that_is_no_regular_file_reads_as_none(tmp_path, kind):
    from tpuwizard.core.preflight import quota_cache

    path = put_hostile(tmp_path / "quotas-practice.json", kind)
    assert within(10, lambda: quota_cache.load(path)).entries == {}


def test_a_quota_read_dated_in_the_future_is_not_said(tmp_path):
    from tpuwizard.core.preflight import quota_cache

    path = tmp_path / "quotas-practice.json"
    for when, kept in ((time.time() - 60, True), (1e308, False), (float("nan"), False)):
        entries = {"p|TPUV5sLitepodPerProjectPerRegionForTPUAPI|us-central1": [8, "chips", when]}
        path.write_text(json.dumps({"version": 1, "entries": entries}))
        book = quota_cache.load(path)
        assert bool(book.entries) is kept, when
        # The words beside an UNKNOWN: a date, never an OverflowError.
        quota_cache.last_read_words(
            book, "p", ("TPUV5sLitepodPerProjectPerRegionForTPUAPI",), ["us-central1"]
        )


def test_a_zone_survey_dated_in_the_future_is_not_fresh(tmp_path):
    from tpuwizard.core.cloud.zones import _saved_survey

    path = tmp_path / "zones-x.json"
    survey = {"zones": {"us-central1-a": ["v5litepod-4"]}, "failures": {}}
    path.write_text(json.dumps({"at": time.time(), **survey}))
    assert _saved_survey(path) is not None
    path.write_text(json.dumps({"at": 1e308, **survey}))
    assert _saved_survey(path) is None
    path.write_text(json.dumps({"at": time.time(), "zones": {"us-central1-a": "x"}}))
    assert _saved_survey(path) is None  # not a list of type names
    put_hostile(path, "fifo")
    assert within(10, lambda: _saved_survey(path)) is None


def test_a_heartbeat_in_the_future_is_dropped(tmp_path):
    from tpuwizard.core.launch.kept.heartbeat_book import HeartbeatBook

    path = tmp_path / "heartbeats.json"
    now = time.time()
    path.write_text(json.dumps({"n": now - 5, "far": 1e308, "later": now + 7200}))
    assert HeartbeatBook(path).read() == {"n": now - 5}
    put_hostile(path, "fifo")
    assert within(10, HeartbeatBook(path).read) == {}


def test_an_attempt_dated_in_the_future_orders_no_zone(tmp_path):
    from tpuwizard.core.launch.records.attempts import READY, Attempt, AttemptHistory

    book = AttemptHistory(tmp_path / "attempts.jsonl")
    book.record(Attempt("us-central1-a", "v5litepod-4", "vm", "tpu-api", READY, time.time()))
    book.record(Attempt("us-east5-a", "v5litepod-4", "vm", "tpu-api", READY, 1e308))
    assert [a.zone for a in book.attempts()] == ["us-central1-a"]
    put_hostile(book.path, "dev-zero")
    assert within(10, book.attempts) == []


# -- the ledgers: never read as empty -----------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_ledger_that_is_no_regular_file_is_refused_never_read_as_empty(tmp_path, kind):
    from tpuwizard.core.kaggle.ledger import KernelLedger
    from tpuwizard.core.launch.records.ledger import Ledger

    for name, read in (
        ("ledger.jsonl", lambda p: Ledger(p).entries()),
        ("kaggle-ledger.jsonl", lambda p: KernelLedger(p).held()),
    ):
        path = put_hostile(tmp_path / name, kind)
        with pytest.raises(untrusted.NotASmallFile, match="not a regular file"):
            within(10, lambda path=path, read=read: read(path))


def test_a_kaggle_ledger_line_nested_past_the_parser_is_skipped(tmp_path):
    from tpuwizard.core.kaggle.ledger import KernelLedger

    ledger = KernelLedger(tmp_path / "kaggle-ledger.jsonl")
    ledger.record("intent", "me/k1", "r1")
    with open(ledger.path, "a") as f:
        f.write(nested(100_000) + "\n" + '{"op": "intent", "kernel": "\xff"}\n')
    ledger.path.write_bytes(ledger.path.read_bytes() + b"\xff\xfe not utf-8\n")
    assert [d["kernel"] for d in ledger.held()] == ["me/k1", "\xff"]


# -- credentials and configuration ---------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_kaggle_token_file_that_is_no_regular_file_is_refused_and_named(tmp_path, kind):
    from tpuwizard.core.kaggle.credentials import NoCredentials, find_credentials

    home = tmp_path / "home"
    put_hostile(home / ".kaggle" / "access_token", kind)
    (home / ".kaggle" / "kaggle.json").write_text('{"username": "u", "key": "k"}')
    found = within(10, lambda: find_credentials({}, home))
    # Kaggle's own client reads the token file first: the key beside it is not used either.
    assert isinstance(found, NoCredentials)
    assert any("access_token (refused: it is a" in place for place in found.looked_at)
    found = within(10, lambda: find_credentials({"KAGGLE_API_TOKEN": "/dev/zero"}, home))
    assert isinstance(found, NoCredentials)
    assert "/dev/zero (refused: it is a character device" in " ".join(found.looked_at)


def test_a_kaggle_json_giving_a_key_twice_is_refused(tmp_path):
    from tpuwizard.core.kaggle.credentials import NoCredentials, find_credentials

    home = tmp_path / "home"
    (home / ".kaggle").mkdir(parents=True)
    (home / ".kaggle" / "kaggle.json").write_text('{"username": "u", "key": "k", "key": "j"}')
    found = find_credentials({}, home)
    assert isinstance(found, NoCredentials)
    assert "gives the key 'key' twice" in " ".join(found.looked_at)


@pytest.mark.parametrize("kind", HOSTILE)
def test_gcloud_files_that_are_no_regular_files_read_as_unset(tmp_path, kind):
    from tpuwizard.core.cloud.gcloud_config import active_configuration, read_properties

    put_hostile(tmp_path / "active_config", kind)
    assert within(10, lambda: active_configuration(tmp_path, {})) == "default"
    put_hostile(tmp_path / "configurations" / "config_default", kind)
    assert within(10, lambda: read_properties(tmp_path, "default")) == {}


def test_an_active_configuration_name_that_is_no_gcloud_name_is_not_followed(tmp_path):
    from tpuwizard.core.cloud.gcloud_config import active_configuration

    (tmp_path / "active_config").write_text("../../etc/x\n")
    assert active_configuration(tmp_path, {}) == "default"
    (tmp_path / "active_config").write_text("work-2\n")
    assert active_configuration(tmp_path, {}) == "work-2"


def test_an_install_id_that_is_a_fifo_is_bad_input_not_a_hang(tmp_path, monkeypatch):
    from tpuwizard.core import paths
    from tpuwizard.core.errors import BadInput

    monkeypatch.setenv("TPUWIZARD_HOME", str(tmp_path))
    put_hostile(tmp_path / "install-id", "fifo")
    with pytest.raises(BadInput, match="it is a named pipe"):
        within(10, paths.owner_label)


@pytest.mark.parametrize(
    "info",
    [
        "FIFO",
        {"endpoint": "http://10.0.0.9:80", "pid": 12345, "token": "t"},
        {"endpoint": "http://127.0.0.1:9", "pid": -1, "token": "t"},
        {"endpoint": "http://127.0.0.1:9", "pid": 1, "token": "t"},
    ],
)
def test_a_lasting_sandboxs_address_file_is_read_as_untrusted(tmp_path, info):
    from tpuwizard.session.practice.lasting_info import read_server_info

    path = tmp_path / "server.json"
    if info == "FIFO":
        put_hostile(path, "fifo")
    else:
        path.write_text(json.dumps(info))
    with pytest.raises((OSError, ValueError)):
        within(10, lambda: read_server_info(path))
