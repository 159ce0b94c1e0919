"""Finding a file's first duplicate key in bounded memory: 8 bytes per row instead of a set of strings.

A 200 MB ratings file has millions of rows; a Python set of their keys (tuples of strings) costs more
than the file. Each key is kept as a 64-bit hash in an array, sorted once at the end (or when another
error stops the file, to know whether a duplicate came first). A hash seen twice is checked by reading
the file again and comparing the real keys, so a hash collision never refuses a good file, and the
message names the line of the second occurrence, as the in-memory check did.
"""
from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable

KeySink = Callable[[int, tuple[str, ...]], None]  # called with (line, key) for each row's key


def key_hash(key: tuple[str, ...]) -> int:
    digest = hashlib.blake2b("\x1f".join(key).encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


class KeyLog:
    """The keys of the rows read so far, to find the first row whose key an earlier row had."""

    def __init__(self) -> None:
        self.hashes = array("q")

    def add(self, key: tuple[str, ...]) -> None:
        self.hashes.append(key_hash(key))

    def _repeated(self) -> set[int]:
        import numpy as np  # on use: the admin imports this module in every process (STYLE 15)

        if len(self.hashes) < 2:
            return set()
        ordered = np.sort(np.frombuffer(self.hashes, dtype=np.int64))
        return {int(h) for h in ordered[1:][ordered[1:] == ordered[:-1]]}

    def first_duplicate(self, rescan: Callable[[KeySink], None], upto: int | None = None,
                        ) -> tuple[int, tuple[str, ...]] | None:
        """(line, key) of the first row that repeats an earlier row's key (on a line up to ``upto``), or None.

        ``rescan(sink)`` reads the file again and calls ``sink(line, key)`` for each key added, in the same
        order; it may stop early by raising (an error the first reading met: that error stands).
        """
        repeated = self._repeated()
        if not repeated:
            return None
        seen: set[tuple[str, ...]] = set()

        def sink(line: int, key: tuple[str, ...]) -> None:
            if upto is not None and line > upto:
                raise _Found(None)
            if key_hash(key) in repeated:
                if key in seen:
                    raise _Found((line, key))
                seen.add(key)

        try:
            rescan(sink)
        except _Found as found:
            return found.found
        return None


class _Found(Exception):
    def __init__(self, found: tuple[int, tuple[str, ...]] | None) -> None:
        self.found = found
