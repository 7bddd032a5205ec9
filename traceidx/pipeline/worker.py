"""The worker: one source in, its rows spooled to the stage and its outcome out.

`process` reads and projects one source (projection.ingest) and encodes its rows
(`source_rows`, then traceidx.tables.encode); a batch of sources (`process_batch`, one task)
spools the rows of all its sources to Arrow IPC files in the staging folder, by group, ordered
so that any bucket's rows are one slice (traceidx.pipeline.staging), and hands back only small
outcomes: the build process keeps where rows are, never the rows. The worker is a plain
function of its inputs: it touches no manifest and publishes nothing, so any engine can run it
(traceidx.pipeline.engines).
"""

from __future__ import annotations

import gc
import os
import signal
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa

from traceidx.domain.model import TABLES
from traceidx.errors import PublishError, write_failure
from traceidx.pipeline.staging import Run, Spooled, fine_bucket, fine_order, spool
from traceidx.pipeline.sync import Decision, ReportAction
from traceidx.projection.checkpoint import code_version
from traceidx.projection.checkpoint import load as load_checkpoint
from traceidx.projection.ingest import Settings, SourceResult, bug_reason, ingest
from traceidx.projection.lineage import candidates
from traceidx.store.dataset import Partition, partition_of
from traceidx.store.manifest import SourceEntry, SourceState
from traceidx.tables.encode import encode_rows, row_count

FAULT_VARIABLE = "TRACEIDX_FAULT"

#: the tables whose rows lineage reads (projection.lineage): their workers hand over candidates
LINEAGE_TABLES = ("items", "sessions")


def fault_point(name: str) -> None:
    """Crash-test hook: SIGKILL this process at the named point when the variable asks."""
    if os.environ.get(FAULT_VARIABLE) == name:
        os.kill(os.getpid(), signal.SIGKILL)


@dataclass(frozen=True, slots=True)
class SourceWork:
    """One source of a batch: what sync decided for it, and the stored checkpoint (a file the
    worker can read) an appended source may resume from. Small and picklable: batches of
    them go to pool processes and Ray tasks (traceidx.pipeline.engines)."""

    decision: Decision
    checkpoint: str | None = None


@dataclass(frozen=True, slots=True)
class SourceReport:
    """What a build tells of one source (made once: a later finding makes a new one)."""

    locator: str
    action: ReportAction
    state: SourceState
    reason: str | None = None
    runtime: str | None = None
    warnings: tuple[str, ...] = ()
    unknown_types: dict[str, int] = field(default_factory=dict)
    #: read on from its stored checkpoint: only the rows it had not settled were read again
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class Staged:
    """What reading one source hands on to publication: its new manifest entry, its new
    checkpoint (in the staging folder), the ids of the resumed checkpoint's tail (the rows it
    re-states) and the digests of its first records (move detection).

    Within a batch, its rows also travel here: as objects (`rows`, in its `partition`), and
    as the Arrow files a long source spilled while it was read (`files`) with what lineage
    reads of them (`lineage`); `process_batch` spools them and hands back neither."""

    entry: SourceEntry
    partition: Partition | None = None
    rows: dict[str, list[Any]] | None = None
    files: tuple[tuple[str, Spooled], ...] = ()
    #: what lineage reads of the rows spooled to `files` (traceidx.projection.lineage.candidates)
    lineage: tuple[tuple[str, pa.Table], ...] = ()
    #: the digests of its first records, by record count (of the vanished sources' counts)
    prefix_digests: dict[int, str] = field(default_factory=dict)
    checkpoint: str | None = None  # a new checkpoint, in the staging folder
    resumed_tail: dict[str, list[int]] | None = None  # ids the resumed checkpoint's tail had


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """What a worker made of one source: the report, and what publication takes of it (None
    when nothing was read: the file vanished, action ``missing``, or it is of a runtime the
    build does not read, action ``outside``)."""

    report: SourceReport
    staged: Staged | None = None


@dataclass(frozen=True, slots=True)
class Task:
    """What every source of a build is processed with.

    `missing` maps the sessions of vanished sources to their record counts: for a source of
    such a session, the digests of its first records are computed for move detection.
    With a `spool_folder`, rows a long source settles while it is read are written there as
    Arrow IPC files (`Staged.files`), so a worker's memory stays bounded; a long
    source's checkpoint is written there too. `layout` gives each group's bucket count.
    """

    settings: Settings
    missing: dict[int, list[int]] = field(default_factory=dict)
    spool_folder: Path | None = None
    layout: dict[str, int] = field(default_factory=dict)


def process(work: SourceWork, task: Task) -> SourceOutcome:
    """Ingest and encode one source (runs in a worker process). `work.checkpoint` names the
    stored checkpoint of an appended source: if it is still valid, only the lines after it
    are read. The decision's `origin` is the machine or person its source row names."""
    fault_point("ingest")
    locator, origin = work.decision.locator, work.decision.origin
    settings, missing, spool_folder = task.settings, task.missing, task.spool_folder
    files: list[tuple[str, Spooled]] = []
    found: list[tuple[str, pa.Table]] = []  # what lineage reads of the spilled rows

    def spill(rows: dict[str, list[Any]]) -> None:
        assert spool_folder is not None
        for table, data in encode_rows(rows).items():
            if table in LINEAGE_TABLES and data.num_rows:
                found.append((table, candidates(table, data)))
            if data.num_rows:  # its bucket is set once the source's session is known
                path = spool_folder / f"source-{uuid.uuid4().hex}-{table}.arrow"
                run: Run = ("", data, ((0, data.num_rows),))
                try:
                    files.extend((table, rows) for _, rows in spool(path, table, [run]))
                except OSError as exc:  # not this source's fault: the build cannot go on
                    raise PublishError(write_failure(exc, path)) from exc

    def discard() -> None:
        for _, spooled in files:
            Path(spooled.path).unlink(missing_ok=True)
        files.clear()
        found.clear()

    counts = {count for counts in (missing or {}).values() for count in counts}
    resume = None
    if work.checkpoint is not None and spool_folder is not None:
        resume = load_checkpoint(Path(work.checkpoint), locator, code_version())
    sink = spill if spool_folder is not None else None
    framing = work.decision.framing
    result = ingest(locator, settings, sink, counts, resume, framing)
    encoded = source_rows(_from(result, origin), task.layout)
    # its new rows must go where its published ones are (the decision says where)
    if resume is not None and (encoded is None or encoded[0].key != work.decision.partition):
        discard()  # an adapter changed its mind: re-read it all
        result = ingest(locator, settings, sink, counts, framing=framing)
        encoded = source_rows(_from(result, origin), task.layout)
    if result.state != "indexed":
        discard()
    report = SourceReport(
        locator,
        work.decision.action,
        result.state,
        result.reason,
        result.runtime,
        tuple(result.warnings),
        dict(result.unknown_types),
    )
    if result.vanished:
        return SourceOutcome(replace(report, action="missing", state="skipped"))
    if result.outside:
        return SourceOutcome(replace(report, action="outside"))
    entry = SourceEntry(
        state=result.state,
        runtime=result.runtime,
        size=result.size,
        mtime_ns=result.mtime_ns,
        indexed_bytes=result.indexed_bytes,
        tail_bytes=result.tail_bytes,
        compression=result.stream.compression,
        reason=result.reason or None,
        malformed=result.malformed,
        oversized=result.oversized,
        joined=result.joined,
        unknown_types=dict(result.unknown_types),
        warnings=list(result.warnings),
        torn_bytes=result.stream.torn_bytes,
        head=result.head if result.state != "failed" else None,
        origin=origin,
        redacted=dict(result.redacted),
        database=result.database,
    )
    if encoded is None or result.projection is None:
        return SourceOutcome(report, Staged(entry))
    partition, rows = encoded
    session_id = result.projection.session.session_id
    source = result.projection.session.source_ids[0]
    fine = fine_bucket(session_id)
    entry = msgspec.structs.replace(
        entry,
        source_id=source,
        session_id=session_id,
        partition=partition.key,
        records=result.record_count,
        loops=result.loop_count,
        items=result.item_count,
        digest=result.digest,
    )
    digests = {
        count: result.prefix_digests[count]
        for count in (missing or {}).get(session_id, [])
        if count in result.prefix_digests
    }
    tail = result.resumed.tail if result.resumed is not None else None
    checkpoint = None
    if result.checkpoint is not None and spool_folder is not None:
        path = spool_folder / f"checkpoint-{uuid.uuid4().hex}.pickle"
        if result.checkpoint.write(path):
            checkpoint = str(path)
    staged = Staged(
        entry,
        partition,
        rows,
        tuple((table, spooled.of_bucket(fine, source)) for table, spooled in files),
        tuple(found),
        digests,
        checkpoint,
        tail,
    )
    return SourceOutcome(replace(report, resumed=tail is not None), staged)


def source_rows(
    result: SourceResult, layout: dict[str, int]
) -> tuple[Partition, dict[str, list[Any]]] | None:
    """The partition (in `layout`) and the rows of an indexed source, by table (None
    otherwise): what `traceidx.tables.encode.encode_rows` encodes."""
    if result.state != "indexed" or result.projection is None or result.source is None:
        return None
    session = result.projection.session
    partition = partition_of(session.runtime, session.created_at, session.session_id, layout)
    return partition, {
        "sources": [result.source],
        "records": [result.records],
        "sessions": [session],
        "loops": result.projection.loops,
        "items": result.projection.item_runs,
        "model_calls": result.projection.calls,
    }


def _from(result: SourceResult, origin: str | None) -> SourceResult:
    """The result with its source row naming `origin`."""
    if result.source is not None and origin is not None:
        result.source = msgspec.structs.replace(result.source, origin=origin)
    return result


@dataclass(frozen=True, slots=True)
class Batch:
    """The outcomes of a batch of sources (their staged parts without rows: those are
    spooled), and where their rows were spooled, by group."""

    outcomes: list[SourceOutcome]
    spooled: list[tuple[str, str, Spooled]]  # group, table, rows
    #: what lineage reads of the spooled rows, by table (traceidx.projection.lineage.candidates)
    lineage: list[tuple[str, pa.Table]] = field(default_factory=list)


#: first-generation threshold of the garbage collector during a build: reading a source makes
#: millions of short-lived containers that refcounting frees (no cycles), and at CPython's
#: default of 700 the collector's passes over them took about 8% of the CPU. The threshold
#: counts containers made and not yet freed: a batch's rows keep about 50,000 alive until it
#: is spooled, so at 50,000 each batch paid passes over its own rows (1.5% of a worker's CPU);
#: at 200,000 a pass is rare, and at most that many containers of cyclic garbage wait for one
GC_THRESHOLD = 200_000


def _arrow_pool() -> pa.MemoryPool:
    """jemalloc for Arrow's buffers when this pyarrow has it (else its default): its default,
    mimalloc, reserves its arena for huge pages, and freeing and touching memory again there
    zeroed whole 2 MB pages, about 6% of a build's CPU, with direct compaction stalls that
    made build times vary by 15%."""
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:
        return pa.default_memory_pool()


def tune_process() -> tuple[tuple[int, int, int], pa.MemoryPool]:
    """Tune this process for a build: the garbage collector's first generation runs
    `GC_THRESHOLD` allocations apart, Arrow allocates from `_arrow_pool`; the settings before."""
    old = gc.get_threshold(), pa.default_memory_pool()
    gc.set_threshold(max(GC_THRESHOLD, old[0][0]), *old[0][1:])
    pa.set_memory_pool(_arrow_pool())
    return old


@contextmanager
def tuned() -> Iterator[None]:
    """`tune_process` for a block (a build in the caller's process; a pool worker keeps it for its
    life)."""
    thresholds, pool = tune_process()
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        pa.set_memory_pool(pool)


def process_batch(work: list[SourceWork], task: Task) -> Batch:
    """Ingest a batch of sources and spool their rows: one file per table, one run of record
    batches per group (rows long sources flushed while read stay in their own files)."""
    outcomes = [process(source, task) for source in work]
    try:
        runs = _runs(outcomes)
    except Exception:  # a source's rows do not fit the schema (a bug): find it, fail it alone
        outcomes = [_encodable(outcome) for outcome in outcomes]
        runs = _runs(outcomes)
    spooled: list[tuple[str, str, Spooled]] = []
    lineage: list[tuple[str, pa.Table]] = []
    members: dict[str, set[int]] = {}  # the sources of each group's runs
    for outcome in outcomes:
        staged = outcome.staged
        if staged is not None and staged.partition is not None:
            group = staged.partition.group
            spooled += [(group, table, rows) for table, rows in staged.files]
            lineage += staged.lineage
            if staged.rows is not None:
                assert staged.entry.source_id is not None
                members.setdefault(group, set()).add(staged.entry.source_id)
    for table in LINEAGE_TABLES:
        lineage += [(table, candidates(table, data)) for _, data, _ in runs.get(table, [])]
    name = uuid.uuid4().hex
    assert task.spool_folder is not None
    for table, table_runs in runs.items():
        path = task.spool_folder / f"batch-{name}-{table}.arrow"
        try:
            spooled += [
                (key, table, replace(rows, sources=_frozen(members.get(key))))
                for key, rows in spool(path, table, table_runs)
            ]
        except OSError as exc:
            raise PublishError(write_failure(exc, path)) from exc
    handed = [_without_rows(outcome) for outcome in outcomes]
    return Batch(handed, spooled, [(t, rows) for t, rows in lineage if rows.num_rows])


def _without_rows(outcome: SourceOutcome) -> SourceOutcome:
    """The outcome as the build process takes it: its rows are spooled, not handed back."""
    staged = outcome.staged
    if staged is None:
        return outcome
    return replace(outcome, staged=replace(staged, rows=None, files=(), lineage=()))


def _frozen(sources: set[int] | None) -> frozenset[int] | None:
    return frozenset(sources) if sources is not None else None


def _runs(outcomes: list[SourceOutcome]) -> dict[str, list[Run]]:
    """The outcomes' rows as Arrow, by table: one conversion per table, cut into a run per
    group, in which sources are in `fine_order` (in their own order within a fine bucket)."""
    groups: dict[str, list[tuple[int, int, int, dict[str, list[Any]]]]] = {}
    for at, outcome in enumerate(outcomes):
        staged = outcome.staged
        if staged is not None and staged.partition is not None and staged.rows is not None:
            fine = fine_bucket(staged.rows["sessions"][0].session_id)
            members = groups.setdefault(staged.partition.group, [])
            members.append((fine_order(fine), at, fine, staged.rows))
    order = [(key, sorted(groups[key])) for key in sorted(groups)]
    runs: dict[str, list[Run]] = {}
    for table in TABLES:
        objs = []
        cuts: list[tuple[str, list[tuple[int, int]]]] = []
        for key, members in order:
            segments: list[tuple[int, int]] = []
            for _, _, fine, by_table in members:
                rows = by_table.get(table, [])
                count = row_count(table, rows)
                if count:
                    objs += rows
                    if segments and segments[-1][0] == fine:
                        segments[-1] = (fine, segments[-1][1] + count)
                    else:
                        segments.append((fine, count))
            cuts.append((key, segments))
        if not objs:
            continue
        data = encode_rows({table: objs})[table]
        at = 0
        for key, segments in cuts:
            count = sum(rows for _, rows in segments)
            if count:
                runs.setdefault(table, []).append((key, data.slice(at, count), tuple(segments)))
                at += count
    return runs


def _encodable(outcome: SourceOutcome) -> SourceOutcome:
    """The outcome as it is if its rows can be encoded, else `_failed`."""
    staged = outcome.staged
    if staged is None or staged.rows is None:
        return outcome
    try:
        encode_rows(staged.rows)
    except Exception as exc:
        return _failed(outcome, exc)
    return outcome


def _failed(outcome: SourceOutcome, exc: Exception) -> SourceOutcome:
    """A source whose rows could not be encoded is failed, and nothing of it is kept."""
    staged = outcome.staged
    assert staged is not None
    for _, spooled in staged.files:
        Path(spooled.path).unlink(missing_ok=True)
    if staged.checkpoint is not None:
        Path(staged.checkpoint).unlink(missing_ok=True)
    reason = bug_reason(outcome.report.runtime, "while its rows were encoded", exc)
    report = replace(outcome.report, state="failed", reason=reason, resumed=False)
    return SourceOutcome(report, Staged(staged.entry.failed_with(reason)))


#: a batch (one task of the pool) holds at most this many sources or this many bytes
BATCH_SOURCES = 128
BATCH_BYTES = 32 << 20
#: the batches of the last `TAIL_BYTES` bytes hold `TAIL_SPLIT` times fewer bytes, so that the
#: workers finish close together (an idle core waits for at most a small batch); the same
#: however many workers there are, since batches decide the order of a part's rows. Their
#: count of sources stays `BATCH_SOURCES`: a batch costs about 6 ms whatever it holds (each
#: table encoded, spooled to a file of its own and handed back), so batches of a quarter as
#: many small sources made a corpus of small files (Pi, dsh) cost 15% more CPU, while the
#: time a batch takes follows its bytes
TAIL_BYTES = 4 * BATCH_BYTES
TAIL_SPLIT = 4


def plan_batches(decisions: list[Decision], checkpoints: dict[str, str]) -> list[list[SourceWork]]:
    """The sources to read, in batches (`checkpoints`: the stored checkpoints of appended
    sources, by locator)."""
    batches: list[list[SourceWork]] = []
    current: list[SourceWork] = []
    size = 0
    work = [d for d in decisions if d.ingest]
    left = sum(d.size for d in work)
    sources, most = BATCH_SOURCES, BATCH_BYTES
    for d in work:
        if left <= TAIL_BYTES:
            most = BATCH_BYTES // TAIL_SPLIT
        if current and (len(current) >= sources or size + d.size > most):
            batches.append(current)
            current, size = [], 0
        current.append(SourceWork(d, checkpoints.get(d.locator)))
        size += d.size
        left -= d.size
    if current:
        batches.append(current)
    return batches
