"""Framing: split a byte stream into Records (complete newline-terminated lines).

Rules (the Source/Record contract):

* A Record is a complete line: bytes up to, not including, ``\\n``. ``\\r`` is kept.
* `content_range` is the half-open byte range ``[start, end)`` of those bytes in the source.
* `fingerprint` is XXH3-128, lowercase hex (32 characters), of exactly those bytes (the
  newline excluded). ``FINGERPRINT_ALGORITHM`` names it. It detects changed bytes behind a
  published fact; it is not a defence against someone forging trace lines (whoever can write
  the traces can write the dataset too), so a fast non-cryptographic hash is the right tool:
  it costs a tenth of BLAKE2b's time, which was the largest fixed cost per line. Datasets
  built before it used BLAKE2b-128 (``LEGACY_ALGORITHM``); the facts of sources that vanished
  before the change keep those fingerprints (``FINGERPRINTS`` computes either).
* An unterminated tail is not a Record; `Framer.tail_bytes` reports its length.
* A line longer than `max_record_bytes` is still a Record (hashed while streaming) but its
  bytes are not kept: `FramedLine.data` is ``None`` and it is never parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from hashlib import blake2b
from typing import Any, Final, Protocol

import xxhash

FINGERPRINT_ALGORITHM: Final = "xxh3-128"
LEGACY_ALGORITHM: Final = "blake2b-128"
DEFAULT_MAX_RECORD_BYTES: Final = 16 * 1024 * 1024


class _Hasher(Protocol):
    def update(self, data: Any, /) -> None: ...
    def hexdigest(self) -> str: ...


def _blake2b_128(data: bytes) -> _Hasher:
    return blake2b(data, digest_size=16)


#: fingerprint algorithm -> the fingerprint of a record's bytes under it
FINGERPRINTS: Final[dict[str, Callable[[bytes], str]]] = {
    FINGERPRINT_ALGORITHM: xxhash.xxh3_128_hexdigest,
    LEGACY_ALGORITHM: lambda data: _blake2b_128(data).hexdigest(),
}
#: fingerprint algorithm -> a streaming hasher of it, seeded with the first bytes (for
#: oversized lines)
HASHERS: Final[dict[str, Callable[[bytes], _Hasher]]] = {
    FINGERPRINT_ALGORITHM: xxhash.xxh3_128,
    LEGACY_ALGORITHM: _blake2b_128,
}

fingerprint = FINGERPRINTS[FINGERPRINT_ALGORITHM]
"""The documented fingerprint of a record's content bytes."""


def algorithm_of(data: bytes, expected: str) -> str | None:
    """The algorithm under which `expected` is the fingerprint of `data` (None: changed)."""
    return next((name for name, hashed in FINGERPRINTS.items() if hashed(data) == expected), None)


@dataclass(slots=True)
class FramedLine:
    """One complete line: position, byte range and fingerprint; `data` unless oversized."""

    position: int
    start: int
    end: int
    fingerprint: str
    data: bytes | None


class Framer:
    """Incremental framer over chunks of one source; feed chunks in order."""

    def __init__(
        self,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        offset: int = 0,
        algorithm: str = FINGERPRINT_ALGORITHM,
    ) -> None:
        self.max_record_bytes = max_record_bytes
        self.position = 0
        self._offset = offset  # absolute offset of the start of the pending line
        self._pending = bytearray()
        self._fingerprint = FINGERPRINTS[algorithm]
        self._new_hasher = HASHERS[algorithm]
        self._hasher: _Hasher | None = None  # set while streaming an oversized line
        self._pending_len = 0

    @property
    def offset(self) -> int:
        """Absolute offset just past the last complete line (where the next Record starts)."""
        return self._offset

    @property
    def tail_bytes(self) -> int:
        """Bytes seen after the last newline (an unterminated tail, not a Record)."""
        return self._pending_len

    def feed(self, chunk: bytes) -> list[FramedLine]:
        """Frame a chunk; the lines it completes, in order."""
        out: list[FramedLine] = []
        begin, size = 0, len(chunk)
        if self._pending_len:  # the line a previous chunk left open
            nl = chunk.find(b"\n")
            if nl < 0:
                self._extend(chunk, 0, size)
                return out
            out.append(self._finish(chunk, 0, nl))
            begin = nl + 1
        # Lines wholly inside this chunk (all but the first, usually), framed in one loop.
        find, limit, hashed = chunk.find, self.max_record_bytes, self._fingerprint
        while begin < size:
            nl = find(b"\n", begin)
            if nl < 0:
                self._extend(chunk, begin, size)
                break
            if nl - begin > limit:
                out.append(self._finish(chunk, begin, nl))
            else:
                data = chunk[begin:nl]
                start = self._offset
                end = start + len(data)
                out.append(FramedLine(self.position, start, end, hashed(data), data))
                self.position += 1
                self._offset = end + 1
            begin = nl + 1
        return out

    def _extend(self, chunk: bytes, begin: int, end: int) -> None:
        self._pending_len += end - begin
        if self._hasher is not None:
            self._hasher.update(memoryview(chunk)[begin:end])
            return
        self._pending += memoryview(chunk)[begin:end]
        if len(self._pending) > self.max_record_bytes:
            self._hasher = self._new_hasher(bytes(self._pending))
            self._pending = bytearray()

    def _finish(self, chunk: bytes, begin: int, nl: int) -> FramedLine:
        start = self._offset
        length = self._pending_len + (nl - begin)
        data: bytes | None
        if self._hasher is not None:
            self._hasher.update(memoryview(chunk)[begin:nl])
            digest, data = self._hasher.hexdigest(), None
        elif self._pending:
            self._pending += memoryview(chunk)[begin:nl]
            data = bytes(self._pending)
            digest = self._fingerprint(data)
        else:
            data = chunk[begin:nl]
            digest = self._fingerprint(data)
        if data is not None and len(data) > self.max_record_bytes:
            data = None
        line = FramedLine(self.position, start, start + length, digest, data)
        self.position += 1
        self._offset = start + length + 1
        self._pending = bytearray()
        self._pending_len = 0
        self._hasher = None
        return line


def frame_chunks(
    chunks: Iterable[bytes],
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    algorithm: str = FINGERPRINT_ALGORITHM,
) -> Iterator[FramedLine]:
    """Frame an iterable of byte chunks (the tail without a newline is dropped)."""
    framer = Framer(max_record_bytes, algorithm=algorithm)
    for chunk in chunks:
        yield from framer.feed(chunk)


def frame_bytes(data: bytes, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> list[FramedLine]:
    """Frame an in-memory byte string."""
    return list(frame_chunks([data], max_record_bytes))
