"""A job's output bytes cut into lines in time linear in their length, in bounded memory.

A script may print one line of 150 MB: gathering it by appending each chunk to one buffer and
splitting that buffer again is quadratic (minutes) and holds all of it. Here each chunk is
searched once for its newlines, and a line longer than :data:`MAX_LINE_BYTES` comes out in
pieces of at most that size, each a line of its own (never cut inside a UTF-8 character).

``tail -n +K`` counts whole lines: :attr:`LinePieces.seen` counts them too, and after a
reconnect the pieces of the current line already given out are skipped, so nothing is shown
twice.
"""

from __future__ import annotations

from collections.abc import Callable

MAX_LINE_BYTES = 64 * 1024


class LinePieces:
    def __init__(self, on_line: Callable[[str], None], limit: int = MAX_LINE_BYTES) -> None:
        self.on_line, self.limit = on_line, limit
        self.seen = 0  # whole lines given out: where tail starts again (-n +seen+1)
        self._pending: list[bytes] = []  # of the current line, not given out yet
        self._size = 0  # bytes in _pending
        self._given = 0  # bytes of the current line already given out as pieces
        self._skip = 0  # bytes of the current line to pass over (given before a reconnect)

    def feed(self, chunk: bytes) -> None:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._add(chunk[start:end])
            self._end_line()
            start = end + 1
        self._add(chunk[start:])

    def reconnect(self) -> None:
        """The stream was cut: the next one starts again at the current line's first byte."""
        self._skip, self._pending, self._size = self._given, [], 0

    def finish(self) -> None:
        """The stream has ended for good: a last line without its newline is given out too."""
        self._skip = 0
        if self._pending:
            self._end_line()

    def _add(self, data: bytes) -> None:
        if self._skip:
            skipped = min(self._skip, len(data))
            data, self._skip = data[skipped:], self._skip - skipped
        while data:
            room = self.limit - self._size
            self._pending.append(data[:room])
            self._size += min(room, len(data))
            data = data[room:]
            if self._size >= self.limit:
                self._give_piece()

    def _give_piece(self) -> None:
        whole = b"".join(self._pending)
        cut = _utf8_cut(whole)
        self.on_line(whole[:cut].decode(errors="replace"))
        self._given += cut
        rest = whole[cut:]
        self._pending, self._size = ([rest] if rest else []), len(rest)

    def _end_line(self) -> None:
        if self._pending or not self._given:  # a line given out whole in pieces adds none
            self.on_line(b"".join(self._pending).decode(errors="replace"))
        self.seen += 1
        self._pending, self._size, self._given, self._skip = [], 0, 0, 0


def _utf8_cut(data: bytes) -> int:
    """Where to cut ``data`` so that no UTF-8 character is split: before a last character whose
    continuation bytes have not all arrived (bytes that are not UTF-8 are cut anywhere)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # not a continuation byte: ASCII or a lead byte
            wanted = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4
            if byte >= 0xC0 and back < wanted and byte >> 3 != 0b11111:
                return len(data) - back
            return len(data)
    return len(data)
