"""The framing stage: every framing hands on the Records its own framer makes, in order, once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import rowdemo
from tests.support.files import fixture_path
from traceidx.sources import folder, rowsource
from traceidx.sources.discover import framing_of
from traceidx.sources.document import frame_document
from traceidx.sources.frame import FramedLine, frame_bytes
from traceidx.sources.stream import NotASource, SourceStream

lines = st.lists(st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")), max_size=30)
tails = st.binary(max_size=20).map(lambda b: b.replace(b"\n", b""))


def _read(stream: SourceStream) -> list[FramedLine]:
    return [line for batch in stream.batches() for line in batch.lines]


def _same(a: list[FramedLine], b: list[FramedLine]) -> bool:
    key = [(x.position, x.start, x.end, x.fingerprint, x.data) for x in a]
    return key == [(x.position, x.start, x.end, x.fingerprint, x.data) for x in b]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=lines, tail=tails, compressed=st.booleans())
def test_a_source_of_lines_is_framed_as_its_bytes_are(
    tmp_path: Path, body: list[bytes], tail: bytes, compressed: bool
) -> None:
    data = b"".join(line + b"\n" for line in body) + tail
    path = tmp_path / ("s.jsonl.zst" if compressed else "s.jsonl")
    path.write_bytes(zstandard.ZstdCompressor().compress(data) if compressed else data)
    stream = SourceStream(str(path), "lines")
    assert _same(_read(stream), frame_bytes(data))
    assert stream.indexed_bytes == len(data) - len(tail)
    assert stream.tail_bytes == len(tail)
    assert stream.size == path.stat().st_size
    assert stream.stats.compression == ("zstd" if compressed else "none")


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=lines, tail=tails, cut=st.integers(min_value=0, max_value=30))
def test_a_resumed_source_hands_on_the_lines_after_its_offset(
    tmp_path: Path, body: list[bytes], tail: bytes, cut: int
) -> None:
    data = b"".join(line + b"\n" for line in body) + tail
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    whole = frame_bytes(data)
    cut = min(cut, len(whole))
    offset = whole[cut - 1].end + 1 if cut else 0
    stream = SourceStream(str(path), "lines", resume=(offset, cut))
    assert _same(_read(stream), whole[cut:])  # numbered on from the position given
    assert stream.indexed_bytes == len(data) - len(tail)


def test_documents_folders_and_rows_are_framed_by_their_own_framers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a JSON document its runtime rewrites whole: its elements, with values and JSON paths
    document = next(fixture_path("generated", "cline").rglob("*.messages.json")).resolve()
    assert framing_of(str(document)) == "document"
    data = document.read_bytes()
    stream = SourceStream(str(document), "document")
    batches = list(stream.batches())
    parts = frame_document(data, stream.max_record_bytes, file=None)
    assert len(parts) > 1
    assert [line.start for b in batches for line in b.lines] == [p.line.start for p in parts]
    assert [path for b in batches for path in b.paths or []] == [p.path for p in parts]
    assert all(b.parsed is not None for b in batches)
    assert stream.indexed_bytes == len(data)
    # a session folder: its members' records, in order, numbered across members
    session = next(fixture_path("generated", "vibe").rglob("meta.json")).parent.resolve()
    locator = folder.locator_of(str(session))
    assert framing_of(locator) == "folder"
    stream = SourceStream(locator, "folder")
    framed = _read(stream)
    assert len(framed) > 1 and [line.position for line in framed] == list(range(len(framed)))
    assert (stream.size, stream.mtime_ns) == folder.stamp(locator)
    rowdemo.install(monkeypatch)
    con = rowdemo.make_database(tmp_path / "rowdemo.db", sessions=2)
    con.close()
    database = str(tmp_path / "rowdemo.db")
    with pytest.raises(NotASource, match="each of its sessions is a source"):
        _read(SourceStream(database, "rows"))
    session = rowsource.locator_of(database, "ses_1")
    stream = SourceStream(session, "rows")
    batches = list(stream.batches())
    rows = [row for b in batches for row in b.rows or []]
    assert [line.data for b in batches for line in b.lines] == list(rowsource.lines(session))
    assert rows and {table for table, _ in rows} >= {"session", "message", "part"}
    assert stream.database is not None and (stream.size, stream.mtime_ns) == rowsource.stamp(
        session
    )


def test_a_source_that_vanished_or_is_no_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        _read(SourceStream(str(tmp_path / "gone.jsonl"), "lines"))
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        _read(SourceStream(str(fifo), "lines"))  # never waited on
    with pytest.raises(ValueError, match="cannot resume"):
        SourceStream(str(fifo), "document", resume=(0, 0))
