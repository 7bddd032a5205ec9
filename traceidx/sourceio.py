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

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Literal

import pyarrow as pa
import zstandard
from mypy_extensions import mypyc_attr

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
CHUNK_BYTES = 1 << 20
#: physical bytes at the start of a file kept while reading it (sync's rewrite check)
HEAD_BYTES = 64 * 1024
#: Output of one zstd frame held back until the frame is proven complete; beyond this, decoded
#: bytes are released early (a single huge frame still streams in bounded memory).
FRAME_HOLD_BYTES = 64 << 20

Compression = Literal["none", "zstd"]


class CorruptSource(Exception):
    """The compressed stream cannot be decoded past some point (not a torn tail)."""


@mypyc_attr(native_class=False)  # pickled between processes
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


def _zstd_chunks(first: bytes, stream: BinaryIO, stats: StreamStats) -> Iterator[bytes]:
    dctx = zstandard.ZstdDecompressor()
    pending = first
    consumed = 0  # physical bytes of complete frames
    decoded = 0
    while True:
        frame = dctx.decompressobj()
        held: list[bytes] = []
        held_len = 0
        frame_in = 0
        done = False
        while not done:
            if not pending:
                pending = stream.read(CHUNK_BYTES)
                if not pending:
                    break
            try:
                out = frame.decompress(pending)
            except zstandard.ZstdError as exc:
                stats.corrupt_at, stats.corrupt_reason = decoded, f"corrupt zstd frame: {exc}"
                stats.complete_bytes = consumed
                return
            rest = frame.unused_data if frame.eof else b""
            frame_in += len(pending) - len(rest)
            pending = rest
            if out:
                held.append(out)
                held_len += len(out)
                if held_len > FRAME_HOLD_BYTES:
                    yield from held
                    decoded += held_len
                    held, held_len = [], 0
            done = frame.eof
        if not done:
            # The stream ended inside a frame: a torn write. Nothing of it is logical content
            # (unless it had to be released early because the frame was huge).
            stats.complete_bytes = consumed
            stats.torn_bytes = frame_in
            return
        consumed += frame_in
        yield from held
        decoded += held_len
        if not pending:
            pending = stream.read(CHUNK_BYTES)
            if not pending:
                stats.complete_bytes = consumed
                return
        if not pending.startswith(ZSTD_MAGIC[: len(pending)]):
            stats.corrupt_at, stats.corrupt_reason = decoded, "bytes after a frame are not a frame"
            stats.complete_bytes = consumed
            return


def read_range(locator: str, start: int, end: int) -> bytes:
    """The bytes [start, end) of a source's logical stream (decoding a compressed source)."""
    with open(locator, "rb") as stream:
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
