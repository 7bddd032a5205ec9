"""The worker: one source in, its rows spooled to the stage and its outcome out.

`process` reads and projects one source (projection.ingest) and encodes its rows; a batch of
sources (`process_batch`, one task) spools the rows of all its sources to Arrow IPC files in
the staging folder, by group, ordered so that any bucket's rows are one slice
(traceidx.pipeline.staging), and hands back only small outcomes: the build process keeps where rows
are, never the rows. The worker is a plain function of its inputs: it touches no manifest
and publishes nothing, so any engine can run it (traceidx.pipeline.engines).
"""

from __future__ import annotations

import gc
import os
import signal
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa

from traceidx.domain.model import TABLES
from traceidx.errors import PublishError, write_failure
from traceidx.pipeline.staging import Run, Spooled, fine_bucket, fine_order, spool
from traceidx.pipeline.sync import Decision
from traceidx.projection.checkpoint import code_version
from traceidx.projection.checkpoint import load as load_checkpoint
from traceidx.projection.encode import encode_rows, row_count, source_rows
from traceidx.projection.ingest import Settings, SourceResult, bug_reason, ingest
from traceidx.projection.lineage import candidates
from traceidx.store.dataset import Partition
from traceidx.store.manifest import SourceEntry

FAULT_VARIABLE = "TRACEIDX_FAULT"

#: the tables whose rows lineage reads (projection.lineage): their workers hand over candidates
LINEAGE_TABLES = ("items", "sessions")


def fault_point(name: str) -> None:
    """Crash-test hook: SIGKILL this process at the named point when the variable asks."""
    if os.environ.get(FAULT_VARIABLE) == name:
        os.kill(os.getpid(), signal.SIGKILL)


@dataclass(slots=True)
class SourceOutcome:
    """What a build did with one source (small: the rows themselves go to the stage)."""

    locator: str
    action: str
    state: str
    reason: str | None = None
    runtime: str | None = None
    warnings: list[str] = field(default_factory=list)
    unknown_types: dict[str, int] = field(default_factory=dict)
    entry: SourceEntry | None = None
    vanished: bool = False
    partition: Partition | None = None
    rows: dict[str, list[Any]] | None = None
    files: list[tuple[str, Spooled]] = field(default_factory=list)
    prefix_digests: dict[int, str] = field(default_factory=dict)
    checkpoint: str | None = None  # a new checkpoint, in the staging folder
    resumed_tail: dict[str, list[int]] | None = None  # ids the resumed checkpoint's tail had
    #: of a runtime the build does not read (`Settings.runtimes`): not recorded
    outside: bool = False
    #: what lineage reads of the rows spooled to `files` (traceidx.projection.lineage.candidates)
    lineage: list[tuple[str, pa.Table]] = field(default_factory=list)


Progress = Callable[[int, int, SourceOutcome], None]


@dataclass(frozen=True, slots=True)
class Task:
    """What every source of a build is processed with.

    `missing` maps the sessions of vanished sources to their record counts: for a source of
    such a session, the digests of its first records are computed for move detection.
    With a `spool_folder`, rows a long source settles while it is read are written there as
    Arrow IPC files (`SourceOutcome.files`), so a worker's memory stays bounded; a long
    source's checkpoint is written there too. `layout` gives each group's bucket count.
    """

    settings: Settings
    missing: dict[int, list[int]] = field(default_factory=dict)
    spool_folder: Path | None = None
    layout: dict[str, int] = field(default_factory=dict)


def process(
    locator: str,
    action: str,
    task: Task,
    checkpoint: str | None = None,
    origin: str | None = None,
) -> SourceOutcome:
    """Ingest and encode one source (runs in a worker process). `checkpoint` names the
    stored checkpoint of an appended source: if it is still valid, only the lines after it
    are read. `origin` is the machine or person its source row names."""
    fault_point("ingest")
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
    if checkpoint is not None and spool_folder is not None:
        resume = load_checkpoint(Path(checkpoint), locator, code_version())
    sink = spill if spool_folder is not None else None
    result = ingest(locator, settings, sink, counts, resume)
    encoded = source_rows(_from(result, origin), task.layout)
    if resume is not None and (encoded is None or encoded[0].key != resume.partition):
        discard()  # an adapter changed its mind, or the group was split: re-read it all
        result = ingest(locator, settings, sink, counts)
        encoded = source_rows(_from(result, origin), task.layout)
    if result.state != "indexed":
        discard()
    outcome = SourceOutcome(
        locator,
        action,
        result.state,
        result.reason,
        result.runtime,
        result.warnings,
        dict(result.unknown_types),
    )
    if result.vanished:
        outcome.action, outcome.state, outcome.vanished = "missing", "skipped", True
        return outcome
    if result.outside:
        outcome.action, outcome.outside = "outside", True
        return outcome
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
    if encoded is not None and result.projection is not None:
        outcome.partition, outcome.rows = encoded
        session_id = result.projection.session.session_id
        source = result.projection.session.source_ids[0]
        fine = fine_bucket(session_id)
        outcome.files = [(table, rows.of_bucket(fine, source)) for table, rows in files]
        outcome.lineage = list(found)
        entry.source_id = source
        entry.session_id = session_id
        entry.partition = outcome.partition.key
        entry.records = result.record_count
        entry.loops = result.loop_count
        entry.items = result.item_count
        entry.digest = result.digest
        for count in (missing or {}).get(session_id, []):
            if count in result.prefix_digests:
                outcome.prefix_digests[count] = result.prefix_digests[count]
        if result.resumed is not None:
            outcome.resumed_tail = result.resumed.tail
        if result.checkpoint is not None and spool_folder is not None:
            result.checkpoint.partition = outcome.partition.key
            path = spool_folder / f"checkpoint-{uuid.uuid4().hex}.pickle"
            if result.checkpoint.write(path):
                outcome.checkpoint = str(path)
    outcome.entry = entry
    return outcome


def _from(result: SourceResult, origin: str | None) -> SourceResult:
    """The result with its source row naming `origin`."""
    if result.source is not None and origin is not None:
        result.source = msgspec.structs.replace(result.source, origin=origin)
    return result


@dataclass(slots=True)
class Batch:
    """The outcomes of a batch of sources, and where their rows were spooled, by group."""

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


#: one source of a batch: its locator, action, stored checkpoint and origin
Work = tuple[str, str, str | None, str | None]


def process_batch(work: list[Work], task: Task) -> Batch:
    """Ingest a batch of sources and spool their rows: one file per table, one run of record
    batches per group (rows long sources flushed while read stay in their own files)."""
    outcomes = [
        process(locator, action, task, checkpoint, origin)
        for locator, action, checkpoint, origin in work
    ]
    try:
        runs = _runs(outcomes)
    except Exception:  # a source's rows do not fit the schema (a bug): find it, fail it alone
        for outcome in outcomes:
            if outcome.rows is not None:
                try:
                    encode_rows(outcome.rows)
                except Exception as exc:
                    _fail(outcome, exc)
        runs = _runs(outcomes)
    spooled: list[tuple[str, str, Spooled]] = []
    lineage: list[tuple[str, pa.Table]] = []
    members: dict[str, set[int]] = {}  # the sources of each group's runs
    for outcome in outcomes:
        if outcome.partition is not None:
            spooled += [(outcome.partition.group, table, rows) for table, rows in outcome.files]
            lineage += outcome.lineage
            if outcome.rows is not None and outcome.entry is not None:
                assert outcome.entry.source_id is not None
                members.setdefault(outcome.partition.group, set()).add(outcome.entry.source_id)
        outcome.files, outcome.rows, outcome.lineage = [], None, []
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
    return Batch(outcomes, spooled, [(t, rows) for t, rows in lineage if rows.num_rows])


def _frozen(sources: set[int] | None) -> frozenset[int] | None:
    return frozenset(sources) if sources is not None else None


def _runs(outcomes: list[SourceOutcome]) -> dict[str, list[Run]]:
    """The outcomes' rows as Arrow, by table: one conversion per table, cut into a run per
    group, in which sources are in `fine_order` (in their own order within a fine bucket)."""
    groups: dict[str, list[tuple[int, int, int, SourceOutcome]]] = {}
    for at, outcome in enumerate(outcomes):
        if outcome.partition is not None and outcome.rows is not None:
            fine = fine_bucket(outcome.rows["sessions"][0].session_id)
            members = groups.setdefault(outcome.partition.group, [])
            members.append((fine_order(fine), at, fine, outcome))
    order = [(key, sorted(groups[key])) for key in sorted(groups)]
    runs: dict[str, list[Run]] = {}
    for table in TABLES:
        objs = []
        cuts: list[tuple[str, list[tuple[int, int]]]] = []
        for key, members in order:
            segments: list[tuple[int, int]] = []
            for _, _, fine, outcome in members:
                assert outcome.rows is not None
                rows = outcome.rows.get(table, [])
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


def _fail(outcome: SourceOutcome, exc: Exception) -> None:
    """A source whose rows could not be encoded is failed, and nothing of it is kept."""
    for _, spooled in outcome.files:
        Path(spooled.path).unlink(missing_ok=True)
    if outcome.checkpoint is not None:
        Path(outcome.checkpoint).unlink(missing_ok=True)
    reason = bug_reason(outcome.runtime, "while its rows were encoded", exc)
    outcome.state, outcome.reason, outcome.partition, outcome.rows = "failed", reason, None, None
    outcome.files, outcome.checkpoint, outcome.resumed_tail = [], None, None
    outcome.lineage = []
    outcome.prefix_digests = {}
    if outcome.entry is not None:
        outcome.entry = outcome.entry.failed_with(reason)


#: a batch (one task of the pool) holds at most this many sources or this many bytes
BATCH_SOURCES = 128
BATCH_BYTES = 32 << 20
#: the batches of the last `TAIL_BYTES` bytes are `TAIL_SPLIT` times smaller, so that the
#: workers finish close together (an idle core waits for at most a small batch); the same
#: however many workers there are, since batches decide the order of a part's rows
TAIL_BYTES = 4 * BATCH_BYTES
TAIL_SPLIT = 4


def plan_batches(decisions: list[Decision], checkpoints: dict[str, str]) -> list[list[Work]]:
    batches: list[list[Work]] = []
    current: list[Work] = []
    size = 0
    work = [d for d in decisions if d.ingest]
    left = sum(d.size for d in work)
    sources, most = BATCH_SOURCES, BATCH_BYTES
    for d in work:
        if left <= TAIL_BYTES:
            sources, most = BATCH_SOURCES // TAIL_SPLIT, BATCH_BYTES // TAIL_SPLIT
        if current and (len(current) >= sources or size + d.size > most):
            batches.append(current)
            current, size = [], 0
        current.append((d.locator, d.action, checkpoints.get(d.locator), d.origin))
        size += d.size
        left -= d.size
    if current:
        batches.append(current)
    return batches
