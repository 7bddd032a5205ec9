"""Reading zstd sources: the logical stream is every complete frame's content, in order.

Frames are written by zstandard itself (with and without checksums and content sizes, small and
longer than the read buffer), read back in pieces of random sizes, and compared with decoding
each frame on its own: a torn last frame gives nothing, bytes after a frame that are not a frame
and a corrupt frame stop the stream there, and everything before them is kept.
"""

from __future__ import annotations

import io
import os

import zstandard
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from traceidx.sources.sourceio import (
    FRAME_BUFFER_BYTES,
    ZSTD_MAGIC,
    StreamStats,
    frame_size,
    logical_chunks,
)


class _Pieces(io.RawIOBase):
    """A stream whose reads after the first (which sees the magic number, as a file's does)
    return at most the next of some piece sizes, so that frames span reads."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.at, self.sizes, self.turn = data, 0, sizes or [1 << 20], 0

    def read(self, n: int = -1) -> bytes:
        size = self.sizes[self.turn % len(self.sizes)] if self.turn else 1 << 20
        self.turn += 1
        count = min(n if n >= 0 else len(self.data), size)
        out = self.data[self.at : self.at + count]
        self.at += len(out)
        return out


def _read(data: bytes, sizes: list[int]) -> tuple[bytes, StreamStats]:
    stats = StreamStats()
    return b"".join(logical_chunks(_Pieces(data, sizes), stats)), stats  # type: ignore[arg-type]


contents = st.lists(
    st.binary(max_size=3000) | st.text(max_size=2000).map(str.encode), min_size=1, max_size=8
)
options = st.fixed_dictionaries(
    {
        "level": st.integers(1, 5),
        "write_checksum": st.booleans(),
        "write_content_size": st.booleans(),
    }
)
sizes = st.lists(st.integers(1, 4096), max_size=5)


def _frames(parts: list[bytes], how: dict[str, object]) -> list[bytes]:
    compressor = zstandard.ZstdCompressor(**how)  # type: ignore[arg-type]
    return [compressor.compress(part) for part in parts]


@given(contents, options, sizes)
def test_complete_frames_read_whole(
    parts: list[bytes], how: dict[str, object], reads: list[int]
) -> None:
    frames = _frames(parts, how)
    for at, frame in enumerate(frames):
        assert frame_size(b"".join(frames[at:]), 0) == len(frame)
    data, stats = _read(b"".join(frames), reads)
    assert data == b"".join(parts)
    assert stats.compression == "zstd" and stats.corrupt_reason is None
    assert stats.complete_bytes == sum(map(len, frames)) and stats.torn_bytes == 0


@given(contents, options, sizes, st.data())
def test_a_torn_last_frame_gives_nothing(
    parts: list[bytes], how: dict[str, object], reads: list[int], data: st.DataObject
) -> None:
    frames = _frames(parts, how)
    cut = data.draw(st.integers(1, len(frames[-1]) - 1))
    assume(len(frames) > 1 or cut >= len(ZSTD_MAGIC))  # else not recognised as zstd at all
    assert frame_size(frames[-1][:cut], 0) == 0
    read, stats = _read(b"".join(frames[:-1]) + frames[-1][:cut], reads)
    assert read == b"".join(parts[:-1])
    assert stats.complete_bytes == sum(map(len, frames[:-1])) and stats.torn_bytes == cut
    assert stats.corrupt_reason is None


@given(contents, options, sizes, st.binary(min_size=1, max_size=50))
def test_bytes_after_a_frame_that_are_not_a_frame_stop_the_stream(
    parts: list[bytes], how: dict[str, object], reads: list[int], junk: bytes
) -> None:
    if ZSTD_MAGIC.startswith(junk[:4]):
        junk = b"x" + junk
    frames = _frames(parts, how)
    read, stats = _read(b"".join(frames) + junk, reads)
    assert read == b"".join(parts)
    assert stats.corrupt_reason == "bytes after a frame are not a frame"
    assert stats.corrupt_at == len(read) and stats.complete_bytes == sum(map(len, frames))


@settings(max_examples=60)
@given(contents, st.integers(1, 5), sizes, st.data())
def test_a_corrupt_frame_stops_the_stream_where_it_starts(
    parts: list[bytes], level: int, reads: list[int], data: st.DataObject
) -> None:
    frames = _frames(parts, {"level": level, "write_checksum": True})
    broken = data.draw(st.integers(0, len(frames) - 1))
    frame = bytearray(frames[broken])
    where = data.draw(st.integers(4, len(frame) - 1))  # past the magic number
    frame[where] ^= data.draw(st.integers(1, 255))
    frames[broken] = bytes(frame)
    read, stats = _read(b"".join(frames), reads)
    kept = b"".join(parts[:broken])
    assert read.startswith(kept)  # what precedes the broken frame is always kept
    if stats.corrupt_reason is not None and stats.corrupt_reason.startswith("corrupt zstd"):
        assert read == kept and stats.corrupt_at == len(kept)  # nothing of the broken frame
        assert stats.complete_bytes == sum(map(len, frames[:broken]))


def test_a_frame_longer_than_the_buffer_streams_and_a_torn_one_gives_nothing() -> None:
    compressor = zstandard.ZstdCompressor(level=1, write_checksum=True)
    parts = [b"first line\n", os.urandom(FRAME_BUFFER_BYTES + 12345), b"last line\n"]
    frames = [compressor.compress(part) for part in parts]
    assert len(frames[1]) > FRAME_BUFFER_BYTES
    read, stats = _read(b"".join(frames), [1 << 20])
    assert read == b"".join(parts) and stats.complete_bytes == sum(map(len, frames))
    cut = len(frames[1]) - 10
    read, stats = _read(frames[0] + frames[1][:cut], [1 << 20])
    assert read == parts[0] and stats.torn_bytes == cut
    assert stats.complete_bytes == len(frames[0])
