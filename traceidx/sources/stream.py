"""The framing stage: one source opened by its framing and handed on as batches of Records.

Discovery chooses a candidate's framing (`traceidx.sources.discover.framing_of`) and the
build carries it; this is the one place a build opens a source and reads its bytes:

* ``lines`` — JSON lines, plain or zstd (`sourceio.logical_chunks`, `frame.Framer`); the
  only framing a checkpoint can resume (`SourceStream(..., resume=(offset, position))`: the
  lines after the byte offset, numbered on from the position);
* ``document`` — a JSON file its runtime rewrites whole, split into its elements
  (`traceidx.sources.document`);
* ``rows`` — one session of a runtime's database, a line per row (`traceidx.sources.rowsource`);
* ``folder`` — a session folder, its members read in their declared order
  (`traceidx.sources.folder`).

A `Framed` batch holds the lines in order with what the framing knows of them: a document's
or folder's values (their framing already decoded them) and JSON paths, a database row's
table and key, and whether the lines are known to be UTF-8 (so a decoder may skip members
without checking their text). After the batches, the stream holds the source's stamp (size
and modification time), how much of it was read and what reading its bytes found.

Errors say what the source is: `FileNotFoundError` (it vanished), `NotASource` (a database
itself, or one of another program: skipped with the reason), `Unavailable` (a database that
could not be read consistently: the next build reads it again), any other `OSError` (it
cannot be read).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from traceidx.sources import folder, rowsource
from traceidx.sources.document import DocumentRecord, file_of, frame_document
from traceidx.sources.frame import (
    DEFAULT_MAX_RECORD_BYTES,
    FINGERPRINT_ALGORITHM,
    FINGERPRINTS,
    FramedLine,
    Framer,
)
from traceidx.sources.sourceio import (
    CHUNK_BYTES,
    StreamStats,
    head_digest,
    head_fingerprint,
    logical_chunks,
    open_regular,
    stat_of,
    valid_utf8,
)

Framing = Literal["lines", "document", "rows", "folder"]

#: Records of a database session or a session folder handed on per batch
BATCH_RECORDS: Final = 256


class NotASource(Exception):
    """The candidate is not a source this build reads; the message says why."""


class Unavailable(Exception):
    """The source could not be read consistently this time; the next build reads it again."""


@dataclass(slots=True)
class Framed:
    """A batch of consecutive Records of one source."""

    lines: list[FramedLine]
    #: the value and parse status of each line, when its framing decoded it (documents, folders)
    parsed: list[tuple[Any, str]] | None = None
    #: the JSON path of each line (documents, folders)
    paths: list[str] | None = None
    #: the table and key of each line (database rows)
    rows: list[tuple[str, str]] | None = None
    #: the lines are known to be UTF-8
    utf8: bool = True


class SourceStream:
    """One source read by its framing: iterate `batches()` once, then read its facts.

    `check_utf8` may be switched off while batches are read when nothing downstream needs to
    know (a decoder that decodes every member checks the text itself)."""

    def __init__(
        self,
        locator: str,
        framing: Framing,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        resume: tuple[int, int] | None = None,
        algorithm: str | None = None,
    ) -> None:
        if resume is not None and framing != "lines":
            raise ValueError(f"a {framing} source is read whole: it cannot resume")
        self.locator = locator
        self.framing = framing
        self.max_record_bytes = max_record_bytes
        self.resume = resume
        #: the fingerprint algorithm (by default the current one)
        self.algorithm = algorithm or FINGERPRINT_ALGORITHM
        self.check_utf8 = True
        #: the source's stamp when it was opened: size and modification time (ns)
        self.size = 0
        self.mtime_ns = 0
        #: bytes framed into Records (of a database session: its rows' lengths plus one each)
        self.indexed_bytes = 0
        #: bytes after the last complete line (an unterminated tail: not a Record)
        self.tail_bytes = 0
        self.stats = StreamStats()
        #: the state of a database's files when its session was read
        self.database: str | None = None
        self._head: str | None = None

    @property
    def head(self) -> str:
        """The digest of the source's first bytes (`prefixes.head_digest`) as read."""
        if self._head is None:
            return head_digest(self.stats.head[: self.size])
        return self._head

    def batches(self) -> Iterator[Framed]:
        """The source's Records in order, in batches."""
        if self.framing == "folder":
            return self._folder()
        if self.framing == "rows":
            return self._rows()
        return self._file()

    def _file(self) -> Iterator[Framed]:
        with open_regular(self.locator) as stream:
            self.size, self.mtime_ns = stat_of(self.locator, stream)  # of the file read
            if self.framing == "document":
                data = b"".join(logical_chunks(stream, self.stats))
                file = file_of(self.locator)
                parts = frame_document(data, self.max_record_bytes, self.algorithm, file)
                self.indexed_bytes = len(data)
                if parts:
                    yield _decoded(parts)
                return
            offset, position = self.resume or (0, 0)
            framer = Framer(self.max_record_bytes, offset, self.algorithm)
            framer.position = position
            if self.resume is not None:
                self._head = head_fingerprint(self.locator, self.size)
                stream.seek(offset)
                chunks: Iterator[bytes] = iter(lambda: stream.read(CHUNK_BYTES), b"")
            else:
                chunks = logical_chunks(stream, self.stats)
            self.indexed_bytes = framer.offset
            checked = framer.offset  # where the last chunk that is not UTF-8 ends
            for chunk in chunks:
                if self.check_utf8 and not valid_utf8(chunk):
                    checked = framer.offset + framer.tail_bytes + len(chunk)
                lines = framer.feed(chunk)
                if lines:
                    yield Framed(lines, utf8=lines[0].start >= checked)
                self.indexed_bytes, self.tail_bytes = framer.offset, framer.tail_bytes

    def _folder(self) -> Iterator[Framed]:
        self.size, self.mtime_ns = folder.stamp(self.locator)
        batch: list[folder.FolderRecord] = []
        for record in folder.records(self.locator, self.max_record_bytes, self.algorithm):
            self.indexed_bytes += record.line.end - record.line.start
            batch.append(record)
            if len(batch) >= BATCH_RECORDS:
                yield _decoded(batch)
                batch = []
        if batch:
            yield _decoded(batch)

    def _rows(self) -> Iterator[Framed]:
        where = rowsource.parse(self.locator)
        assert where is not None
        hashed = FINGERPRINTS[self.algorithm]
        limit, offset, position = self.max_record_bytes, 0, 0
        try:
            with rowsource.reading(where.database, where.layout) as reader:
                if where.session is None:  # the database holds sources; it is none itself
                    raise NotASource(
                        "a database: each of its sessions is a source of its own "
                        f"({where.database}{rowsource.SEPARATOR}<session id>)"
                    )
                self.database = reader.state
                stamp = reader.stamp(where.session)
                if stamp is None:
                    raise FileNotFoundError(2, "the session is gone from its database")
                self.size, self.mtime_ns = stamp
                batch = Framed([], rows=[])
                for table, key, data in reader.rows(where.session):
                    end = offset + len(data)
                    kept = data if len(data) <= limit else None
                    batch.lines.append(FramedLine(position, offset, end, hashed(data), kept))
                    assert batch.rows is not None
                    batch.rows.append((table, key))
                    position, offset = position + 1, end + 1
                    if len(batch.lines) >= BATCH_RECORDS:
                        self.indexed_bytes = offset
                        yield batch
                        batch = Framed([], rows=[])
                self.indexed_bytes = offset
                if batch.lines:
                    yield batch
        except rowsource.Foreign as exc:
            raise NotASource(f"a SQLite database, not this runtime's: {exc}") from exc
        except (rowsource.Unreadable, rowsource.Changed) as exc:
            raise Unavailable(str(exc)) from exc


def _decoded(records: Sequence[DocumentRecord | folder.FolderRecord]) -> Framed:
    """A batch of Records their framing decoded (a document's elements, a folder's)."""
    return Framed(
        [r.line for r in records], [(r.value, r.status) for r in records], [r.path for r in records]
    )
