"""Reading a source's logical bytes: plain files as they are, zstd files decoded frame by frame.

A source's *logical stream* is what its records are framed from. For a plain file it is the
file itself. For a zstd file (recognised by the frame magic ``28 B5 2F FD`` at offset 0, not by
its name) it is the concatenation of the decoded content of every *complete* frame, in file
order: dsh appends one independent, checksummed frame per write batch, and Codex may keep a
rollout as ``.jsonl.zst``. A frame whose end is missing (a torn write, or a writer still busy)
contributes nothing; a frame that is corrupt ends the stream there and is reported. So
``content_range`` of a Record in a compressed source is a half-open range of offsets into the
decoded stream, and ``read_range`` re-reads exactly those bytes for verification.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Final, Literal

import pyarrow as pa
import zstandard

from traceidx import storage
from traceidx.sources.frame import FINGERPRINT_ALGORITHM, FINGERPRINTS

ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
CHUNK_BYTES: Final = 1 << 20
#: physical bytes at the start of a file kept while reading it (sync's rewrite check)
HEAD_BYTES: Final = 64 * 1024
#: Output of one zstd frame held back until the frame is proven complete; beyond this, decoded
#: bytes are released early (a single huge frame still streams in bounded memory).
FRAME_HOLD_BYTES: Final = 64 << 20

Compression = Literal["none", "zstd"]


@dataclass(slots=True)
class StreamStats:
    """What reading a source's logical stream found."""

    compression: Compression = "none"
    #: physical bytes that belong to complete frames (all bytes for a plain file)
    complete_bytes: int = 0
    #: physical bytes of a torn final frame (zstd only)
    torn_bytes: int = 0
    #: decoded-stream offset where a corrupt frame stopped decoding, when one did
    corrupt_at: int | None = None
    corrupt_reason: str | None = None
    #: the first HEAD_BYTES physical bytes of the file
    head: bytes = b""


def valid_utf8(data: bytes) -> bool:
    """Whether `data` is UTF-8 (Arrow's validation, many times faster than decoding it)."""
    if data.isascii():
        return True
    offsets = pa.py_buffer(struct.pack("<qq", 0, len(data)))
    text = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def compression_of(head: bytes) -> Compression:
    """The encoding of a file from its first bytes."""
    return "zstd" if head.startswith(ZSTD_MAGIC) else "none"


def logical_chunks(stream: BinaryIO, stats: StreamStats) -> Iterator[bytes]:
    """The logical bytes of an open source, in chunks; fills `stats` as it goes."""
    first = stream.read(CHUNK_BYTES)
    stats.head = first[:HEAD_BYTES]
    stats.compression = compression_of(first)
    if stats.compression == "none":
        while first:
            stats.complete_bytes += len(first)
            yield first
            first = stream.read(CHUNK_BYTES)
        return
    yield from _zstd_chunks(first, stream, stats)


#: the compressed bytes of one frame buffered whole before it is decoded; a longer frame is
#: decoded as it streams in (its output held back as `FRAME_HOLD_BYTES` says)
FRAME_BUFFER_BYTES: Final = 4 * CHUNK_BYTES
_INVALID: Final = -1


def frame_size(data: bytes, at: int) -> int:
    """The size of the zstd frame starting at offset `at` of `data` (after its magic number),
    when all of it is there; 0 when it continues past the end of `data`; `_INVALID` when its
    header or a block header is malformed. Walks the frame header and block headers
    (RFC 8878) without decoding anything."""
    end = len(data)
    if at + 5 > end:
        return 0
    descriptor = data[at + 4]
    if descriptor & 0x08:  # reserved bit
        return _INVALID
    single_segment = descriptor & 0x20
    content_size = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
    position = at + 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3] + content_size
    while True:
        if position + 3 > end:
            return 0
        header = data[position] | data[position + 1] << 8 | data[position + 2] << 16
        kind = (header >> 1) & 3
        if kind == 3:  # reserved block type
            return _INVALID
        position += 3 + (1 if kind == 1 else header >> 3)
        if header & 1:  # the last block
            break
    position += 4 if descriptor & 0x04 else 0  # content checksum
    return position - at if position <= end else 0


def _zstd_chunks(first: bytes, stream: BinaryIO, stats: StreamStats) -> Iterator[bytes]:
    """The decoded content of every complete frame, in order. A frame wholly in the bytes
    read so far is decoded from them in place (frames dsh writes are small: copying what
    follows each frame cost more than decoding it); a frame longer than
    `FRAME_BUFFER_BYTES` is decoded as it streams in."""
    dctx = zstandard.ZstdDecompressor()
    pending = first
    at = 0  # where the next frame starts in `pending`
    consumed = 0  # physical bytes of complete frames
    decoded = 0
    while True:
        if at == len(pending):
            pending, at = stream.read(CHUNK_BYTES), 0
            if not pending:
                stats.complete_bytes = consumed
                return
        rest = len(pending) - at
        if not ZSTD_MAGIC.startswith(pending[at : at + len(ZSTD_MAGIC)]):
            stats.corrupt_at, stats.corrupt_reason = decoded, "bytes after a frame are not a frame"
            stats.complete_bytes = consumed
            return
        size = frame_size(pending, at)
        if size == 0 and rest < FRAME_BUFFER_BYTES:  # the frame goes on past what was read
            more = stream.read(CHUNK_BYTES)
            if more:
                pending, at = pending[at:] + more, 0
                continue
            stats.complete_bytes, stats.torn_bytes = consumed, rest  # a torn write
            return
        if size == 0:  # a long frame: decode it as it streams in
            state = _Streamed(consumed, decoded)
            yield from _stream_frame(dctx, pending[at:], stream, stats, state)
            if state.end is None:
                return
            consumed, decoded, pending, at = state.consumed, state.decoded, state.end, 0
            continue
        frame = dctx.decompressobj()
        try:
            if size == _INVALID:
                frame.decompress(pending[at:])  # raises zstd's own reason
                raise zstandard.ZstdError("malformed frame header")
            out = frame.decompress(memoryview(pending)[at : at + size])
            if not frame.eof:
                raise zstandard.ZstdError("the frame ends early")
        except zstandard.ZstdError as exc:
            stats.corrupt_at, stats.corrupt_reason = decoded, f"corrupt zstd frame: {exc}"
            stats.complete_bytes = consumed
            return
        at += size
        consumed += size
        if out:
            yield out
            decoded += len(out)


@dataclass(slots=True)
class _Streamed:
    """Where decoding a long frame as it streamed in left off: the bytes read after the frame
    (`end`; None when it was torn or corrupt), and the physical and decoded bytes so far."""

    consumed: int
    decoded: int
    end: bytes | None = None


def _stream_frame(
    dctx: zstandard.ZstdDecompressor,
    pending: bytes,
    stream: BinaryIO,
    stats: StreamStats,
    state: _Streamed,
) -> Iterator[bytes]:
    """Decode the frame `pending` starts with, reading on from `stream`: its output is held
    until the frame is proven complete (beyond `FRAME_HOLD_BYTES`, released early). A torn or
    corrupt frame fills `stats`; `state` says where decoding left off."""
    frame = dctx.decompressobj()
    held: list[bytes] = []
    held_len = 0
    frame_in = 0
    while True:
        if not pending:
            pending = stream.read(CHUNK_BYTES)
            if not pending:  # the stream ended inside the frame: a torn write
                stats.complete_bytes, stats.torn_bytes = state.consumed, frame_in
                return
        try:
            out = frame.decompress(pending)
        except zstandard.ZstdError as exc:
            stats.corrupt_at, stats.corrupt_reason = state.decoded, f"corrupt zstd frame: {exc}"
            stats.complete_bytes = state.consumed
            return
        rest = frame.unused_data if frame.eof else b""
        frame_in += len(pending) - len(rest)
        pending = rest
        if out:
            held.append(out)
            held_len += len(out)
            if held_len > FRAME_HOLD_BYTES:
                yield from held
                state.decoded += held_len
                held, held_len = [], 0
        if frame.eof:
            yield from held
            state.decoded += held_len
            state.consumed += frame_in
            state.end = pending
            return


def open_regular(locator: str) -> BinaryIO:
    """`locator` opened for reading if it is a regular file; OSError otherwise. A named pipe,
    socket or device (also behind a symlink) is never waited on: the open does not block, and
    anything but a regular file is closed again at once. A URI (traceidx.storage) is opened
    on its filesystem, as a stream of ranged reads."""
    if storage.is_uri(locator):
        stream: BinaryIO = storage.open_input(locator)
        return stream
    fd = os.open(locator, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file ({kind_of(mode)})", locator)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def stat_of(locator: str, stream: BinaryIO | None = None) -> tuple[int, int]:
    """Size and modification time (ns) of a source (of the file `stream` has open, if given,
    even if its path was replaced since)."""
    if storage.is_uri(locator):
        return storage.stat(locator)
    found = os.stat(locator) if stream is None else os.fstat(stream.fileno())
    return found.st_size, found.st_mtime_ns


def kind_of(mode: int) -> str:
    """What a file of this mode is, in words."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_range(locator: str, start: int, end: int) -> bytes:
    """The bytes [start, end) of a source's logical stream (decoding a compressed source)."""
    with open_regular(locator) as stream:
        head = stream.read(len(ZSTD_MAGIC))
        stream.seek(0)
        if compression_of(head) == "none":
            stream.seek(start)
            return stream.read(end - start)
        out = bytearray()
        offset = 0
        for chunk in logical_chunks(stream, StreamStats()):
            lo, hi = max(start - offset, 0), min(end - offset, len(chunk))
            if lo < hi:
                out += chunk[lo:hi]
            offset += len(chunk)
            if offset >= end:
                break
        return bytes(out)


def head_digest(head: bytes) -> str:
    """The fingerprint (`frame.FINGERPRINT_ALGORITHM`) of a file's first bytes (at most
    HEAD_BYTES of them). A head stored under another algorithm never matches: the source is
    then re-read from its first byte, which is always correct."""
    return FINGERPRINTS[FINGERPRINT_ALGORITHM](head[:HEAD_BYTES])


def head_fingerprint(locator: str, size: int) -> str:
    """`head_digest` of the file's first min(HEAD_BYTES, `size`) bytes, read from disk."""
    with open_regular(locator) as stream:
        return head_digest(stream.read(min(HEAD_BYTES, size)))
