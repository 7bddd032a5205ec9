"""Framing rules, as properties: complete lines only, exact ranges, fingerprints of the bytes."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from traceidx.sources.frame import (
    FINGERPRINT_ALGORITHM,
    HASHERS,
    algorithm_of,
    fingerprint,
    frame_bytes,
    frame_chunks,
)

lines = st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=20)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in pairwise(edges)]


@given(lines, st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")))
def test_records_are_exactly_the_complete_lines(body: list[bytes], tail: bytes) -> None:
    data = b"".join(line + b"\n" for line in body) + tail
    framed = frame_bytes(data)
    assert [f.data for f in framed] == body
    assert [f.position for f in framed] == list(range(len(body)))
    for f in framed:
        assert data[f.start : f.end] == f.data
        assert data[f.end : f.end + 1] == b"\n"  # the newline is outside the range
        assert f.fingerprint == fingerprint(data[f.start : f.end])


@given(lines, st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_chunking_never_changes_the_records(body: list[bytes], cuts: list[int]) -> None:
    data = b"".join(line + b"\n" for line in body)
    assert list(frame_chunks(_split(data, cuts))) == frame_bytes(data)


@settings(max_examples=50)
@given(
    lines,
    st.integers(min_value=1, max_value=10),
    st.lists(st.integers(0, 400), max_size=6),
    st.sampled_from(sorted(HASHERS)),
)
def test_oversized_lines_are_records_without_bytes(
    body: list[bytes], limit: int, cuts: list[int], algorithm: str
) -> None:
    # every fingerprint algorithm a dataset may hold, whole or streamed while oversized
    data = b"".join(line + b"\n" for line in body)
    framed = list(frame_chunks(_split(data, cuts), max_record_bytes=limit, algorithm=algorithm))
    assert len(framed) == len(body)
    for f, line in zip(framed, body, strict=True):
        assert f.data == (line if len(line) <= limit else None)
        assert f.fingerprint == HASHERS[algorithm](line).hexdigest()
        assert algorithm_of(line, f.fingerprint) == algorithm
        assert (f.start, f.end) == (f.start, f.start + len(line))


def test_an_unterminated_tail_is_not_a_record() -> None:
    assert frame_bytes(b'{"a":1}') == []
    assert [f.data for f in frame_bytes(b'{"a":1}\n{"b"')] == [b'{"a":1}']


def test_carriage_returns_and_empty_lines_are_kept() -> None:
    framed = frame_bytes(b"a\r\n\n")
    assert [(f.data, f.start, f.end) for f in framed] == [(b"a\r", 0, 2), (b"", 3, 3)]


def test_the_fingerprint_is_xxh3_128_of_the_bytes() -> None:
    # the documented algorithm, pinned by a known value (XXH3-128 of b"abc")
    assert FINGERPRINT_ALGORITHM == "xxh3-128"
    assert fingerprint(b"abc") == "06b05ab6733a618578af5f94892f3950"
    assert algorithm_of(b"abd", fingerprint(b"abc")) is None
