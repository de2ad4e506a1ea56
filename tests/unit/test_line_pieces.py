"""The output follower's line cutting (issue 39, item 11): linear in a line's length and bounded
in memory (one 150 MB line took 8 min 45 s and 755 MB), a huge line in pieces never cut inside
a character, and a reconnect that shows nothing twice."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from tpuwizard.core.remote.line_pieces import MAX_LINE_BYTES, LinePieces


def feed_all(chunks: list[bytes], limit: int = 8) -> tuple[list[str], int]:
    got: list[str] = []
    pieces = LinePieces(got.append, limit)
    for chunk in chunks:
        pieces.feed(chunk)
    return got, pieces.seen


@pytest.mark.parametrize(
    "chunks",
    [[b"one\ntwo\n"], [b"on", b"e\nt", b"wo", b"\n"], [b"one\n", b"two\n", b"thr"]],
)
def test_lines_across_chunks(chunks):
    got, seen = feed_all(chunks)
    assert got == ["one", "two"] and seen == 2  # "thr" waits for its newline


def test_a_long_line_comes_in_pieces_and_counts_once():
    got, seen = feed_all([b"abcdefghij", b"klmnopqrst\nz\n"])
    assert got == ["abcdefgh", "ijklmnop", "qrst", "z"] and seen == 2
    got, seen = feed_all([b"12345678\n"])  # exactly the limit: no empty piece after it
    assert got == ["12345678"] and seen == 1


def test_a_piece_never_cuts_a_character():
    text = "aaaaaaé€😀x"  # 2, 3 and 4 bytes across the 8-byte limit
    got, _ = feed_all([text.encode() + b"\n"])
    assert "".join(got) == text and "\ufffd" not in "".join(got)


def test_a_reconnect_shows_no_piece_twice_and_tail_starts_at_the_unfinished_line():
    got: list[str] = []
    pieces = LinePieces(got.append, 8)
    pieces.feed(b"first\nabcdefghijk")  # "abcdefgh" given, "ijk" pending
    assert pieces.seen == 1
    pieces.reconnect()  # tail -n +2 sends the second line again, from its first byte
    pieces.feed(b"abcdefghijklmn\n")
    assert got == ["first", "abcdefgh", "ijklmn"] and pieces.seen == 2


def test_a_last_line_without_its_newline_is_given_when_the_job_ends():
    got: list[str] = []
    pieces = LinePieces(got.append, 8)
    pieces.feed(b"done\nno newline")
    pieces.finish()
    assert got == ["done", "no newli", "ne"]


def test_one_line_of_150_mb_is_linear_and_bounded():
    chunk, count = b"x" * 65536, 150 * 1024 * 1024 // 65536
    sizes: list[int] = []
    pieces = LinePieces(lambda text: sizes.append(len(text)))
    tracemalloc.start()
    began = time.monotonic()
    for _ in range(count):
        pieces.feed(chunk)
    pieces.feed(b"\n")
    took = time.monotonic() - began
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert sum(sizes) == len(chunk) * count and max(sizes) == MAX_LINE_BYTES
    assert peak < 4 * MAX_LINE_BYTES + 2 * len(chunk), peak
    assert took < 20, took  # the quadratic follower took minutes
