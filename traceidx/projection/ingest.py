"""Ingest one source: take its framed Records, detect its runtime, adapt and project them.

The source is read by the framing stage (`traceidx.sources.stream`), framed as discovery chose:
JSON lines (plain or zstd), a JSON document's elements, a database session's rows or a session
folder's members' records, each batch with what its framing knows (a document's values and
JSON paths, a row's table and key). Only a source of lines has a checkpoint; the others are
read whole again whenever they change.

This is the per-source unit of work (and of parallelism). Problems with the evidence are data
(a malformed line is a Record with ``parse_status = malformed``; an unclaimed file is
``skipped`` with a reason), while I/O errors make the source ``failed`` with the reason. So
does an exception raised by its adapter or its projection (a bug, reported with the line it
happened on): that source's facts are not published, and the build goes on with the others.
Nothing here opens a file or writes anywhere.

Given a `RowSink`, memory stays bounded however long the source is: every `DRAIN_EVERY`
records the adapter hands over the drafts no later record can change (`Adapter.drain`); they
are projected at once, and once the lines behind the pending rows reach `FLUSH_BYTES` those
rows (records, loops, items) go to the sink. The result then holds only the rest; its counts
and digests cover the whole source.

In that mode a long plain source also yields a `traceidx.projection.checkpoint.Checkpoint`, and
`ingest(..., resume=checkpoint)` continues from one: only the lines after it are read.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from traceidx.adapters import detect
from traceidx.adapters.base import Adapter
from traceidx.domain import ids
from traceidx.domain.drafts import RecordFacts
from traceidx.domain.model import Loop, ModelCall, Source
from traceidx.domain.redact import Redactor
from traceidx.domain.text import DEFAULT_TEXT_LIMIT
from traceidx.errors import AdapterFailure, PublishError
from traceidx.projection.checkpoint import MIN_BYTES, Checkpoint, anchor, code_version
from traceidx.projection.items import ItemColumns
from traceidx.projection.project import Projection, Projector
from traceidx.sources.discover import framing_of
from traceidx.sources.frame import DEFAULT_MAX_RECORD_BYTES, FramedLine
from traceidx.sources.records import RecordColumns, SourceKeys
from traceidx.sources.sourceio import StreamStats
from traceidx.sources.stream import Framed, Framing, NotASource, SourceStream, Unavailable
from traceidx.store.manifest import SourceState

State = SourceState  # what came of reading a source (the manifest records it)
_DECODE: Final = msgspec.json.Decoder()
#: each adapter's decoder of its records (`Adapter.record_type`), by adapter
_DECODERS: Final[dict[type[Adapter], msgspec.json.Decoder[Any]]] = {}


def record_decoder(adapter: type[Adapter]) -> msgspec.json.Decoder[Any]:
    """The decoder of an adapter's records: only the members it reads are built."""
    decoder = _DECODERS.get(adapter)
    if decoder is None:
        kind = adapter.record_type
        decoder = _DECODE if kind is None else msgspec.json.Decoder(kind)
        _DECODERS[adapter] = decoder
    return decoder


_NO_FACTS: Final = RecordFacts(None, None)
#: damaged lines reported one by one per source (all are counted in the manifest)
MAX_LINE_WARNINGS: Final = 5
#: with a sink, the adapter is drained every this many records...
DRAIN_EVERY = 512
#: ...and pending rows are handed over once the lines behind them reach this many bytes
FLUSH_BYTES = 32 << 20

#: the records of a source that has none to publish (never appended to)
_NO_RECORDS: Final = RecordColumns(0, SourceKeys())

#: receives rows of a source as they settle: domain objects by table
RowSink = Callable[[dict[str, list[Any]]], None]


@dataclass(slots=True)
class SourceResult:
    """The outcome of ingesting one candidate file."""

    locator: str
    state: State
    reason: str | None = None
    runtime: str | None = None
    size: int = 0
    mtime_ns: int = 0
    indexed_bytes: int = 0
    tail_bytes: int = 0
    stream: StreamStats = field(default_factory=StreamStats)
    warnings: list[str] = field(default_factory=list)
    vanished: bool = False
    malformed: int = 0
    joined: int = 0
    oversized: int = 0
    unknown_types: dict[str, int] = field(default_factory=dict)
    source: Source | None = None
    records: RecordColumns = field(default_factory=lambda: _NO_RECORDS)
    projection: Projection | None = None
    record_count: int = 0
    loop_count: int = 0
    item_count: int = 0
    digest: str | None = None
    prefix_digests: dict[int, str] = field(default_factory=dict)
    head: str | None = None
    checkpoint: Checkpoint | None = None
    resumed: Checkpoint | None = None
    #: of a runtime outside `Settings.runtimes` (another adapter claims it): not recorded
    outside: bool = False
    #: secrets replaced in its published text, by type (``build --redact``)
    redacted: dict[str, int] = field(default_factory=dict)
    #: a database session: the state of its database's files read (traceidx.sources.rowsource)
    database: str | None = None


@dataclass(frozen=True, slots=True)
class Settings:
    """Limits that shape what is published."""

    text_limit: int = DEFAULT_TEXT_LIMIT
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    runtimes: frozenset[str] | None = None
    #: replace secrets in published text (traceidx.domain.redact)
    redact: bool = False


def _decode(line: FramedLine) -> tuple[Any, str]:
    if line.data is None:
        return None, "oversized"
    try:
        return _DECODE.decode(line.data), "ok"
    except (msgspec.DecodeError, UnicodeDecodeError):
        values = split_joined(line.data)
        return (values, "joined") if values else (None, "malformed")


def split_joined(data: bytes) -> list[Any] | None:
    """The JSON values of a line holding several written back to back, if recoverable losslessly.

    Some writers lost a newline between two records (Pi v1 files show it). The line stays one
    Record; its values are recovered only when every byte belongs to a complete JSON object and
    nothing but whitespace separates them, so no evidence is dropped or invented. Each object is
    decoded as a line of its own is: what that decoder refuses (a lone UTF-16 surrogate escape,
    which no UTF-8 column can hold; NaN, Infinity) leaves the line malformed.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    decoder = json.JSONDecoder()
    values: list[Any] = []
    at, end = 0, len(text)
    while at < end:
        while at < end and text[at] in " \t\r":
            at += 1
        if at == end:
            break
        if text[at] != "{":
            return None
        try:
            _, stop = decoder.raw_decode(text, at)
            values.append(_DECODE.decode(text[at:stop].encode("utf-8")))
        except (ValueError, msgspec.DecodeError):
            return None
        at = stop
    return values if len(values) >= 2 else None


class _Run:
    """State of one source's ingestion."""

    def __init__(
        self,
        result: SourceResult,
        settings: Settings,
        sink: RowSink | None = None,
        prefix_counts: Collection[int] = (),
    ) -> None:
        self.result = result
        self.settings = settings
        self.sink = sink
        self.prefix_counts = prefix_counts
        self.source_id = ids.source_id(result.locator)
        self.keys = SourceKeys(self.source_id)  # of every record read, from the source's first line
        result.records = RecordColumns(self.source_id, self.keys)
        self.adapter: Adapter | None = None
        self.decoder = _DECODE  # the adapter's, once there is one
        self.head: list[tuple[FramedLine, Any, str]] = []
        self.undecided = True
        self.first_shape = "no lines"
        self.projector: Projector | None = None
        self.loops: list[Loop] = []
        self.calls: list[ModelCall] = []
        self.items: list[ItemColumns] = []  # runs of projected items not handed over yet
        self.pending_bytes = 0
        self.since_drain = 0
        self.drain_every = DRAIN_EVERY  # read once: a module global costs a lookup per read
        #: (table, key) of each row by position, for a database source (None for lines)
        self.row_keys: list[tuple[str, str]] | None = None
        self.paths: dict[int, str] | None = None  # a document's JSON paths, by position

    def restore(self, checkpoint: Checkpoint) -> tuple[int, int]:
        """Continue from a checkpoint; where the lines after it start (byte offset, position)."""
        result = self.result
        self.adapter = pickle.loads(checkpoint.adapter)
        self.decoder = record_decoder(type(self.adapter))
        self.undecided = False
        result.runtime = checkpoint.runtime
        self.keys = SourceKeys(self.source_id, checkpoint.times, checkpoint.fingerprints)
        if checkpoint.projector is not None:
            assert self.adapter is not None and self.adapter.session is not None
            projector = self.start(checkpoint.runtime, self.adapter.session.native_id)
            projector.restore(checkpoint.projector)
        for key, value in checkpoint.counters.items():
            setattr(result, key, value)
        result.records = RecordColumns(self.source_id, self.keys, len(self.keys))
        return checkpoint.offset, len(self.keys)

    def snapshot(self, offset: int) -> Checkpoint | None:
        """The state to resume from after the last complete line (before `finish`)."""
        result = self.result
        if (
            self.sink is None
            or self.row_keys is not None
            or offset < MIN_BYTES
            or result.stream.compression != "none"
            or result.runtime is None
            or self.paths is not None
        ):
            return None
        try:
            adapter = pickle.dumps(self.adapter, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return None
        where = anchor(result.locator, offset)
        if where is None:
            return None
        counters = {
            "malformed": result.malformed,
            "joined": result.joined,
            "oversized": result.oversized,
            "warnings": list(result.warnings),
        }
        return Checkpoint(
            version=code_version(),
            locator=result.locator,
            runtime=result.runtime,
            offset=offset,
            adapter=adapter,
            times=self.keys.times_bytes(),
            fingerprints=bytes(self.keys.fingerprints),
            projector=self.projector.state() if self.projector is not None else None,
            counters=counters,
            anchor=where,
        )

    def start(self, runtime: str, native_id: str) -> Projector:
        """The source's projector, bound to its Session."""
        if self.projector is None:
            keys = self.keys  # not `self`: a run that its projector refers to is a cycle
            self.projector = Projector(
                runtime,
                self.source_id,
                self.settings.text_limit,
                keys.time,
                lambda: keys.ids,
                Redactor() if self.settings.redact else None,
            )
            self.projector.start(native_id)
        elif self.projector.session_id != ids.session_id(runtime, native_id):
            raise RuntimeError(
                f"{runtime} adapter: drafts were drained before the session was final"
            )
        return self.projector

    def drain(self) -> None:
        """Project what the adapter settled; hand pending rows over once they are large."""
        assert self.adapter is not None and self.sink is not None
        self.since_drain = 0
        loops, items = self.adapter.drain()
        if loops or items:
            session = self.adapter.session
            if session is None:
                raise RuntimeError(f"{self.adapter.runtime} adapter drained before a session")
            projector = self.start(self.adapter.runtime, session.native_id)
            self.loops += projector.loops(loops)
            self.calls += projector.calls(loops)
            self.items.append(projector.items(items))
        if self.pending_bytes >= FLUSH_BYTES:
            records = self.result.records
            rows: dict[str, list[Any]] = {"records": [records], "loops": self.loops}
            self.sink({**rows, "items": self.items, "model_calls": self.calls})
            self.result.records, self.loops, self.items, self.calls = records.rest(), [], [], []
            self.pending_bytes = 0

    def take(self, batch: Framed) -> None:
        """Take a batch of framed Records in order. A line its framing did not decode goes,
        once the runtime is known and the line is well-formed, straight to its record with the
        adapter's decoder (which may skip members it does not read when the line is known to
        be UTF-8: a decoder does not check the text of what it skips); everything else goes
        through `line`."""
        if batch.rows is not None:
            assert self.row_keys is not None
            self.row_keys += batch.rows
        if batch.paths is not None:
            paths = self.paths if self.paths is not None else {}
            self.paths = paths
            for line, path in zip(batch.lines, batch.paths, strict=True):
                paths[line.position] = path
        if batch.parsed is not None:
            for line, (value, status) in zip(batch.lines, batch.parsed, strict=True):
                if self.undecided:
                    self.head.append((line, value, status))
                    if len(self.head) >= 32:
                        self.decide()
                else:
                    self.record(line, value, status)
            return
        utf8 = batch.utf8
        decode, record = (self.decoder if utf8 else _DECODE).decode, self.record
        for line in batch.lines:
            if self.undecided or line.data is None:
                undecided = self.undecided
                self.line(line)
                if undecided and not self.undecided and utf8:  # decided on this line: the
                    decode = self.decoder.decode  # rest of the batch goes to the adapter's
                continue
            try:
                obj = decode(line.data)
            except (msgspec.DecodeError, UnicodeDecodeError):
                self.line(line)
                continue
            record(line, obj, "ok")

    def line(self, line: FramedLine) -> None:
        obj, status = _decode(line)
        if self.undecided:
            self.head.append((line, obj, status))
            if len(self.head) >= 32:
                self.decide()
            return
        self.record(line, obj, status)

    def decide(self) -> None:
        self.undecided = False
        first = next((obj for _, obj, status in self.head if status == "ok"), None)
        if isinstance(first, dict):
            self.first_shape = "first record keys: " + ", ".join(sorted(first)[:6])
        elif self.head:
            self.first_shape = "first line is not a JSON object"
        objs = [obj for _, obj, status in self.head if status == "ok"]
        objs += [v for _, obj, status in self.head if status == "joined" for v in obj]
        cls = detect(objs, set(self.settings.runtimes) if self.settings.runtimes else None)
        if cls is None and self.settings.runtimes is not None:
            other = detect(objs, None)
            if other is not None:  # another runtime's: this build leaves it alone
                self.result.runtime, self.result.outside = other.runtime, True
        if cls is not None:
            self.adapter = cls()
            self.adapter.locate(self.result.locator)
            self.decoder = record_decoder(cls)
            self.result.runtime = cls.runtime
        for line, obj, status in self.head:
            self.record(line, obj, status)
        self.head = []

    def note(self, line: FramedLine, what: str) -> None:
        """Report a damaged line (the first few per source; the rest are counted)."""
        if self.result.malformed + self.result.oversized <= MAX_LINE_WARNINGS:
            paths, locator = self.paths, self.result.locator
            if paths is not None:  # a document's record, by its JSON path
                where = f"{locator}: the record at {paths.get(line.position, '$')}"
                self.result.warnings.append(f"{where} {what}")
            else:
                self.result.warnings.append(f"{locator}:{line.position + 1}: line {what}")

    def record(self, line: FramedLine, obj: Any, status: str) -> None:
        facts = _NO_FACTS
        try:
            if status == "ok" and self.adapter is not None:
                facts = self.adapter.feed(line.position, obj)
            elif status == "joined" and self.adapter is not None:
                each = [self.adapter.feed(line.position, value) for value in obj]
                types = [f.native_type for f in each if f.native_type]
                facts = RecordFacts(
                    next((f.occurred_at for f in each if f.occurred_at is not None), None),
                    "+".join(types) or None,
                )
        except Exception as exc:
            raise AdapterFailure(line.position, exc) from exc
        if status == "joined":
            self.result.joined += 1
        elif status == "malformed":
            self.result.malformed += 1
            self.note(line, "is not valid JSON; kept as a malformed record")
        elif status == "oversized":
            self.result.oversized += 1
            self.note(
                line,
                f"is longer than the record limit ({self.settings.max_record_bytes} bytes); "
                "kept as an oversized record without facts (raise --max-record-bytes to parse it)",
            )
        if self.adapter is None:
            return
        self.keys.add(facts.occurred_at, line.fingerprint.encode("ascii"))
        path = self.paths.get(line.position) if self.paths is not None else None
        self.result.records.append(line.start, line.end, status, facts.native_type, path)
        if self.row_keys is not None:
            self.result.records.add_row(*self.row_keys[line.position])
        if self.sink is not None:
            self.pending_bytes += line.end - line.start
            self.since_drain += 1
            if self.since_drain >= self.drain_every:
                self.drain()


def ingest(
    locator: str,
    settings: Settings,
    sink: RowSink | None = None,
    prefix_counts: Collection[int] = (),
    resume: Checkpoint | None = None,
    framing: Framing | None = None,
) -> SourceResult:
    """Ingest the source at a canonical locator, framed as discovery chose (`framing`; by
    default as `traceidx.sources.discover.framing_of` its locator).

    `sink` (optional) receives settled rows while reading (see the module docstring); it sees
    rows of a source that may still end up skipped, which its caller then discards.
    `prefix_counts`: record counts at which the digest of the fingerprints so far is kept.
    `resume`: a checkpoint of this file (which has only grown since) to continue from; the
    result then holds the records after it, and the loops and items from the checkpoint's
    tail on (`SourceResult.resumed`).
    """
    result = SourceResult(locator, "failed")
    try:
        return _read(result, framing or framing_of(locator), settings, sink, prefix_counts, resume)
    except PublishError:  # writing the build's rows failed: no source's fault
        raise
    except Exception as exc:  # a bug on this source's data: the rest of the build goes on
        cause = exc.cause if isinstance(exc, AdapterFailure) else exc
        on_line = cause is not exc
        where = str(exc) if on_line else "while its facts were projected"
        result.state, result.projection, result.records = "failed", None, _NO_RECORDS
        result.reason = bug_reason(result.runtime, where, cause, on_line)
        return result


def bug_reason(runtime: str | None, where: str, cause: Exception, on_line: bool = False) -> str:
    """Why a source failed on a bug of traceidx (an exception its data raised)."""
    return (
        f"the {runtime or 'runtime'} adapter failed {where}: {type(cause).__name__}: {cause}. "
        f"This is a traceidx bug: please report it{' with that line' if on_line else ''}. "
        "Nothing new of this source is published (facts it had stay as they were); every "
        "other source's are"
    )


def _read(
    result: SourceResult,
    framing: Framing,
    settings: Settings,
    sink: RowSink | None,
    prefix_counts: Collection[int],
    resume: Checkpoint | None,
) -> SourceResult:
    """Feed the source's framed Records (traceidx.sources.stream) to its run, then conclude."""
    run = _Run(result, settings, sink, prefix_counts)
    start = None
    if resume is not None:
        start = run.restore(resume)
        result.resumed = resume
    if framing == "rows":
        run.row_keys = []
    stream = SourceStream(result.locator, framing, settings.max_record_bytes, start)
    try:
        for batch in stream.batches():
            run.take(batch)
            stream.check_utf8 = run.undecided or run.decoder is not _DECODE
    except FileNotFoundError:
        result.reason, result.vanished = "vanished during the build", True
        result.records = _NO_RECORDS
        return result
    except NotASource as exc:
        return _skip(result, str(exc))
    except Unavailable as exc:
        result.reason, result.records = f"{exc}; the next build reads it again", _NO_RECORDS
        return result
    except OSError as exc:
        result.reason = f"cannot read: {exc.strerror or exc}; check its permissions"
        result.records = _NO_RECORDS
        return result
    result.size, result.mtime_ns = stream.size, stream.mtime_ns
    result.stream, result.database = stream.stats, stream.database
    result.indexed_bytes, result.tail_bytes = stream.indexed_bytes, stream.tail_bytes
    result.head = stream.head
    if result.stream.corrupt_reason:
        result.warnings.append(
            f"{result.locator}: {result.stream.corrupt_reason} (decoded offset "
            f"{result.stream.corrupt_at}); records before it are kept, the rest is unreadable"
        )
    if run.undecided:
        run.decide()
    return _conclude(result, run, settings)


def _conclude(result: SourceResult, run: _Run, settings: Settings) -> SourceResult:
    if result.indexed_bytes == 0:
        return _skip(result, "no complete line (empty or unterminated)")
    if run.adapter is None and result.outside:
        return _skip(result, f"{result.runtime}: not among the runtimes this build reads")
    if run.adapter is None:
        return _skip(result, f"no adapter recognises its structure ({run.first_shape})")
    checkpoint = run.snapshot(result.indexed_bytes)
    draft = run.adapter.finish()
    result.unknown_types = dict(draft.unknown_types)
    assert result.runtime is not None
    if draft.session is None:
        return _skip(result, f"{result.runtime}: no record states a session identity")
    projector = run.start(result.runtime, draft.session.native_id)
    tail_loops = projector.loops(draft.loops)
    tail_calls = projector.calls(draft.loops, draft.calls)
    tail_items = projector.items(draft.items)
    if checkpoint is not None:
        checkpoint.tail = {
            "loops": [loop.loop_id for loop in tail_loops],
            "items": list(tail_items.item_ids),
            "model_calls": [call.call_id for call in tail_calls],
        }
        result.checkpoint = checkpoint
    loops = run.loops + tail_loops
    session = projector.session(draft.session)
    projection = Projection(session, loops, [*run.items, tail_items], run.calls + tail_calls)
    result.record_count = len(run.keys)
    result.loop_count, result.item_count = projector.loop_count, projector.item_count
    result.digest, result.prefix_digests = run.keys.digests(run.prefix_counts)
    if projector.redactor is not None:
        result.redacted = dict(projector.redactor.counts)
    result.state = "indexed"
    result.source = Source(
        run.source_id,
        result.locator,
        result.runtime,
        result.stream.compression,
    )
    result.projection = projection
    return result


def _skip(result: SourceResult, reason: str) -> SourceResult:
    """A source recorded as skipped: none of its lines is kept, so no warning says how one
    was (its reason says why it was skipped)."""
    result.state, result.reason, result.projection = "skipped", reason, None
    result.records, result.warnings = _NO_RECORDS, []
    return result
