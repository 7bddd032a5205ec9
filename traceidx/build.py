"""The build job: sync the dataset with the trace files, incrementally and atomically.

Steps, under the dataset's exclusive lock:

1. remove garbage a killed build left behind (staging folders, unpublished parts);
2. discover candidates and decide, per source, what to do (traceidx.sync: unchanged sources
   are not opened; every source already in the dataset is checked, even outside the paths
   named this time, so the dataset stays in sync with everything it holds);
3. ingest the changed sources in a process pool (batches of sources per task; results in
   candidate order, so a parallel build equals a serial one); workers spool the Arrow rows to
   the staging folder by group, ordered so that any bucket's rows are one slice
   (traceidx.staging), a long source's settled rows even while it is read (traceidx.ingest),
   and the build process keeps only where they are;
4. rewrite only the partitions that hold changed or removed sources, streaming each part,
   then swap the manifest.

Nothing is visible before the swap: an error or a kill at any point leaves the previous
generation intact, and the next build cleans up. A build that changes nothing publishes
nothing. Settings that shape facts (text bound, record limit) are part of the dataset: a
build with other settings re-projects every source.
"""

from __future__ import annotations

import gc
import itertools
import os
import signal
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from traceidx.checkpoint import code_version
from traceidx.checkpoint import load as load_checkpoint
from traceidx.dataset import (
    MAX_BUCKETS,
    PART_RECORDS,
    DatasetError,
    Partition,
    collect_garbage,
    empty_manifest,
    layout_of,
    locked,
    new_manifest,
    read_manifest,
    swap_manifest,
)
from traceidx.discover import default_roots, discover
from traceidx.encode import IdGuard, encode_rows, row_count, source_rows
from traceidx.frame import FINGERPRINT_ALGORITHM, LEGACY_ALGORITHM
from traceidx.ids import ID_SCHEME
from traceidx.ingest import Settings, bug_reason, ingest
from traceidx.links import parts_linking
from traceidx.links import resolve as resolve_links
from traceidx.model import TABLES
from traceidx.staging import (
    ROW_GROUP_BYTES,
    PartWriter,
    Run,
    Split,
    Spooled,
    Stage,
    fine_bucket,
    fine_order,
    spool,
)
from traceidx.sync import Decision, decide, prefix_digest

FAULT_VARIABLE = "TRACEIDX_FAULT"


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
    entry: dict[str, Any] | None = None
    vanished: bool = False
    partition: Partition | None = None
    rows: dict[str, list[Any]] | None = None
    files: list[tuple[str, Spooled]] = field(default_factory=list)
    prefix_digests: dict[int, str] = field(default_factory=dict)
    checkpoint: str | None = None  # a new checkpoint, in the staging folder
    resumed_tail: dict[str, list[int]] | None = None  # ids the resumed checkpoint's tail had


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


def process(locator: str, action: str, task: Task, checkpoint: str | None = None) -> SourceOutcome:
    """Ingest and encode one source (runs in a worker process). `checkpoint` names the
    stored checkpoint of an appended source: if it is still valid, only the lines after it
    are read."""
    fault_point("ingest")
    settings, missing, spool_folder = task.settings, task.missing, task.spool_folder
    files: list[tuple[str, Spooled]] = []

    def spill(rows: dict[str, list[Any]]) -> None:
        assert spool_folder is not None
        for table, data in encode_rows(rows).items():
            if data.num_rows:  # its bucket is set once the source's session is known
                path = spool_folder / f"source-{uuid.uuid4().hex}-{table}.arrow"
                run: Run = ("", data, ((0, data.num_rows),))
                files.extend((table, rows) for _, rows in spool(path, table, [run]))

    def discard() -> None:
        for _, spooled in files:
            Path(spooled.path).unlink(missing_ok=True)
        files.clear()

    counts = {count for counts in (missing or {}).values() for count in counts}
    resume = None
    if checkpoint is not None and spool_folder is not None:
        resume = load_checkpoint(Path(checkpoint), locator, code_version())
    sink = spill if spool_folder is not None else None
    result = ingest(locator, settings, sink, counts, resume)
    encoded = source_rows(result, task.layout)
    if resume is not None and (encoded is None or encoded[0].key != resume.partition):
        discard()  # an adapter changed its mind, or the group was split: re-read it all
        result = ingest(locator, settings, sink, counts)
        encoded = source_rows(result, task.layout)
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
    entry: dict[str, Any] = {
        "state": result.state,
        "runtime": result.runtime,
        "size": result.size,
        "mtime_ns": result.mtime_ns,
        "indexed_bytes": result.indexed_bytes,
        "tail_bytes": result.tail_bytes,
        "compression": result.stream.compression,
    }
    for key, value in (
        ("reason", result.reason),
        ("malformed", result.malformed),
        ("oversized", result.oversized),
        ("joined", result.joined),
        ("unknown_types", result.unknown_types),
        ("warnings", result.warnings),
        ("torn_bytes", result.stream.torn_bytes),
    ):
        if value:
            entry[key] = value
    if result.state != "failed" and result.head is not None:
        entry["head"] = result.head
    if encoded is not None and result.projection is not None:
        outcome.partition, outcome.rows = encoded
        session_id = result.projection.session.session_id
        outcome.files = [(table, rows.of_bucket(fine_bucket(session_id))) for table, rows in files]
        entry.update(
            source_id=result.projection.session.source_ids[0],
            session_id=session_id,
            partition=outcome.partition.key,
            records=result.record_count,
            loops=result.loop_count,
            items=result.item_count,
            digest=result.digest,
        )
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


@dataclass(slots=True)
class Batch:
    """The outcomes of a batch of sources, and where their rows were spooled, by group."""

    outcomes: list[SourceOutcome]
    spooled: list[tuple[str, str, Spooled]]  # group, table, rows


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


def _tuned() -> tuple[tuple[int, int, int], pa.MemoryPool]:
    """Tune this process for a build: the garbage collector's first generation runs
    `GC_THRESHOLD` allocations apart, Arrow allocates from `_arrow_pool`; the settings before."""
    old = gc.get_threshold(), pa.default_memory_pool()
    gc.set_threshold(max(GC_THRESHOLD, old[0][0]), *old[0][1:])
    pa.set_memory_pool(_arrow_pool())
    return old


@contextmanager
def tuned() -> Iterator[None]:
    """`_tuned` for a block (a build in the caller's process; a pool worker keeps it for its
    life)."""
    thresholds, pool = _tuned()
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        pa.set_memory_pool(pool)


def process_batch(work: list[tuple[str, str, str | None]], task: Task) -> Batch:
    """Ingest a batch of sources and spool their rows: one file per table, one run of record
    batches per group (rows long sources flushed while read stay in their own files)."""
    outcomes = [process(locator, action, task, checkpoint) for locator, action, checkpoint in work]
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
    for outcome in outcomes:
        if outcome.partition is not None:
            spooled += [(outcome.partition.group, table, rows) for table, rows in outcome.files]
        outcome.files, outcome.rows = [], None
    name = uuid.uuid4().hex
    assert task.spool_folder is not None
    for table, table_runs in runs.items():
        path = task.spool_folder / f"batch-{name}-{table}.arrow"
        spooled += [(key, table, rows) for key, rows in spool(path, table, table_runs)]
    return Batch(outcomes, spooled)


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
    outcome.prefix_digests = {}
    if outcome.entry is not None:
        kept = ("runtime", "size", "mtime_ns", "indexed_bytes", "tail_bytes", "compression")
        outcome.entry = {
            "state": "failed",
            "reason": reason,
            **{key: outcome.entry[key] for key in kept if key in outcome.entry},
        }


@dataclass(slots=True)
class BuildReport:
    """What a build did, and what the dataset holds afterwards."""

    dataset: Path
    generation: int
    changed: bool = False
    results: list[SourceOutcome] = field(default_factory=list)
    actions: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)

    def count(self, state: str) -> int:
        return sum(1 for r in self.results if r.state == state)

    @property
    def exit_code(self) -> int:
        """0 when every source was indexed or deliberately skipped, 1 when one failed."""
        return 1 if self.count("failed") or self.problems else 0

    def totals(self) -> dict[str, int]:
        """This run's work and the dataset's contents after it."""
        live = [e for e in self.sources.values() if e.get("state") == "indexed"]
        return {
            "sources": len(self.results),
            "processed": sum(1 for r in self.results if r.action not in ("unchanged", "missing")),
            "resumed": sum(1 for r in self.results if r.resumed_tail is not None),
            "unchanged": self.actions["unchanged"],
            "indexed": self.count("indexed"),
            "skipped": self.count("skipped"),
            "failed": self.count("failed"),
            "missing": sum(1 for e in live if e.get("missing")),
            "dataset_sources": len(live),
            "records": sum(int(e.get("records", 0)) for e in live),
            "sessions": len({e["session_id"] for e in live if "session_id" in e}),
            "loops": sum(int(e.get("loops", 0)) for e in live),
            "items": sum(int(e.get("items", 0)) for e in live),
            "bytes": sum(int(e.get("indexed_bytes", 0)) for e in live),
        }

    def skip_reasons(self) -> Counter[str]:
        return Counter(r.reason or "" for r in self.results if r.state == "skipped")


def _settings_record(settings: Settings) -> dict[str, Any]:
    return {
        "text_limit": settings.text_limit,
        "max_record_bytes": settings.max_record_bytes,
        "fingerprint": FINGERPRINT_ALGORITHM,
        "ids": ID_SCHEME,
        "token_estimator": "ascii4_unicode1_v1",
    }


#: tables whose rows of a resumed source are all re-stated (one row per source)
RESTATED = ("sources", "sessions")

#: a partition whose group's buckets grew is read once per this many of its new partitions
#: (each of which holds at most its share of `ROW_GROUP_BYTES` of rows before writing them)
ROUTE_TARGETS = 4

#: a batch (one task of the pool) holds at most this many sources or this many bytes
BATCH_SOURCES = 128
BATCH_BYTES = 32 << 20
#: the batches of the last `TAIL_BYTES` bytes are `TAIL_SPLIT` times smaller, so that the
#: workers finish close together (an idle core waits for at most a small batch); the same
#: however many workers there are, since batches decide the order of a part's rows
TAIL_BYTES = 4 * BATCH_BYTES
TAIL_SPLIT = 4


def _batches(
    decisions: list[Decision], checkpoints: dict[str, str]
) -> list[list[tuple[str, str, str | None]]]:
    batches: list[list[tuple[str, str, str | None]]] = []
    current: list[tuple[str, str, str | None]] = []
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
        current.append((d.locator, d.action, checkpoints.get(d.locator)))
        size += d.size
        left -= d.size
    if current:
        batches.append(current)
    return batches


def _run(
    decisions: list[Decision], task: Task, jobs: int, checkpoints: dict[str, str]
) -> Iterator[Batch]:
    """Batch results in batch order; at most two batches per worker are in flight, so a
    slow consumer never lets finished results pile up in memory."""
    batches = _batches(decisions, checkpoints)
    if jobs <= 1 or len(batches) < 2:
        for batch in batches:
            yield process_batch(batch, task)
        return
    workers = min(jobs, len(batches))
    with ProcessPoolExecutor(max_workers=workers, initializer=_tuned) as pool:
        pending: deque[Future[Batch]] = deque()
        todo = iter(batches)
        for batch in itertools.islice(todo, 2 * jobs):
            pending.append(pool.submit(process_batch, batch, task))
        while pending:
            result = pending.popleft().result()
            for batch in itertools.islice(todo, 1):
                pending.append(pool.submit(process_batch, batch, task))
            yield result


def default_paths(settings: Settings) -> list[Path]:
    """The existing default roots of the runtimes a build covers."""
    return [
        root
        for name, roots in default_roots().items()
        if settings.runtimes is None or name in settings.runtimes
        for root in roots
        if root.exists()
    ]


def build(
    paths: list[Path] | None,
    dataset: Path,
    *,
    settings: Settings | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    rebuild: bool = False,
) -> BuildReport:
    """Sync the dataset with `paths` (or the default roots) and publish what changed."""
    settings = settings or Settings()
    paths = default_paths(settings) if paths is None else paths
    jobs = jobs or os.cpu_count() or 1
    with locked(dataset):
        stored = read_manifest(dataset)
        collect_garbage(dataset, stored)
        previous = stored or empty_manifest()
        record = _settings_record(settings)
        rebuild = rebuild or (previous["settings"] not in (None, record))
        with tuned():
            return _Sync(dataset, previous, settings, record, jobs, rebuild, progress).run(paths)


def _largest_bucket(records: Counter[int], buckets: int) -> int:
    """The most records one bucket holds when sessions (id -> records) go to `buckets`."""
    sums: Counter[int] = Counter()
    for session, count in records.items():
        sums[session % buckets] += count
    return max(sums.values())


def _residents(entries: dict[str, dict[str, Any]]) -> dict[str, set[int]]:
    """The sources whose rows each partition's parts hold, by partition key (a partition
    holding a source of unknown id is left out)."""
    out: dict[str, set[int]] = {}
    unknown = set()
    for entry in entries.values():
        if entry.get("state") == "indexed" and "partition" in entry:
            source = entry.get("source_id")
            if source is None:
                unknown.add(entry["partition"])
            else:
                out.setdefault(entry["partition"], set()).add(int(source))
    return {key: sources for key, sources in out.items() if key not in unknown}


def _sessions_of(entries: dict[str, dict[str, Any]]) -> set[int]:
    return {
        int(e["session_id"])
        for e in entries.values()
        if e.get("state") == "indexed" and e.get("session_id") is not None
    }


class _Sync:
    """One build's state."""

    def __init__(
        self,
        dataset: Path,
        previous: dict[str, Any],
        settings: Settings,
        record: dict[str, Any],
        jobs: int,
        rebuild: bool,
        progress: Progress | None,
    ) -> None:
        self.dataset = dataset
        self.previous = previous
        self.known: dict[str, dict[str, Any]] = previous["sources"]
        self.settings = settings
        self.record = record
        self.jobs = jobs
        self.rebuild = rebuild
        self.progress = progress
        self.generation = int(previous["generation"]) + 1
        self.report = BuildReport(dataset, int(previous["generation"]))
        self.entries: dict[str, dict[str, Any]] = {}
        self.drop: dict[Partition, set[int]] = {}
        #: rows of resumed sources to replace: their tail loops and items, session and source
        self.tail_drop: dict[Partition, dict[str, set[int]]] = {}
        self.checkpoints: list[tuple[str, str]] = []  # staged -> dataset-relative path
        self.stage = Stage(dataset, self.generation)
        self.layout = layout_of(previous)  # what the workers place rows by
        self.live_digests: dict[str, dict[int, str]] = {}
        #: the fingerprint algorithm of the previous build, if not the current one: the
        #: sources it indexed that are gone now keep its fingerprints (their entries say so)
        used = (previous["settings"] or {}).get("fingerprint", LEGACY_ALGORITHM)
        self.older = None if used == FINGERPRINT_ALGORITHM or not previous["sources"] else used

    def _kept_missing(self, entry: dict[str, Any]) -> dict[str, Any]:
        """The entry of an indexed source whose file is gone (its facts stay)."""
        kept = {**entry, "missing": True}
        if self.older is not None:
            kept.setdefault("fingerprint", self.older)
        return kept

    def _forget(self, entry: dict[str, Any] | None) -> None:
        """The rows a stored source published must go."""
        if entry and entry.get("state") == "indexed" and "partition" in entry:
            source = entry.get("source_id")
            part = Partition.from_key(entry["partition"])
            self.drop.setdefault(part, set()).add(int(source) if source is not None else -1)

    def _forget_tail(self, entry: dict[str, Any], tail: dict[str, list[int]]) -> None:
        """The rows a resumed source re-states must go; its settled rows stay."""
        drop = self.tail_drop.setdefault(Partition.from_key(entry["partition"]), {})
        drop.setdefault("sources", set()).add(int(entry["source_id"]))
        for table in ("loops", "items"):
            drop.setdefault(table, set()).update(tail.get(table, []))

    def run(self, paths: list[Path]) -> BuildReport:
        report = self.report
        candidates, superseded, report.problems = discover(paths)
        for old in superseded:
            outcome = SourceOutcome(
                old.locator, "superseded", "skipped", f"superseded by {old.by}: {old.why}"
            )
            self._forget(self.known.get(old.locator))
            report.results.append(outcome)
            report.actions["superseded"] += 1
        gone = {s.locator for s in superseded}
        locators = sorted(({c.locator for c in candidates} | set(self.known)) - gone)
        decisions = [decide(loc, self.known.get(loc), self.rebuild) for loc in locators]
        total = len(decisions)
        done = 0
        for d in decisions:
            entry = self.known.get(d.locator)
            if d.action == "unchanged" and entry is not None:
                self.entries[d.locator] = {k: v for k, v in entry.items() if k != "missing"}
            elif d.action == "missing" and entry is not None:
                if entry.get("state") == "indexed":  # facts stay until pruned
                    self.entries[d.locator] = self._kept_missing(entry)
            else:
                continue
            report.actions[d.action] += 1
            report.results.append(
                SourceOutcome(d.locator, d.action, str(entry["state"]), entry.get("reason"))
            )
            done += 1
            if self.progress is not None:
                self.progress(done, total, report.results[-1])
        guard = IdGuard()
        missing: dict[int, list[int]] = {}
        for e in self.entries.values():
            if e.get("missing") and "session_id" in e:
                missing.setdefault(int(e["session_id"]), []).append(int(e.get("records", 0)))
        checkpoints = {
            d.locator: str(self.dataset / self.known[d.locator]["checkpoint"])
            for d in decisions
            if d.action == "appended" and self.known.get(d.locator, {}).get("checkpoint")
        }
        self.stage.folder.mkdir(parents=True, exist_ok=True)
        folder = self.stage.folder
        task = Task(self.settings, missing, folder, self.layout)
        for batch in _run(decisions, task, self.jobs, checkpoints):
            for group, table, spooled in batch.spooled:
                guard.take(table, spooled.ids)
                self.stage.add(group, table, spooled)
            for outcome in batch.outcomes:
                done += 1
                self._consume(outcome)
                if self.progress is not None:
                    self.progress(done, total, outcome)
        guard.finish()
        self._resolve_moves()
        report.sources = self.entries
        first = int(self.previous["generation"]) == 0  # a new dataset is always published
        staged = self.drop or self.tail_drop or self.stage
        changed = first or bool(staged) or self._flags_changed()
        if not changed:
            self.stage.discard()
            return report
        self._publish()
        report.changed = True
        report.generation = self.generation
        return report

    def _flags_changed(self) -> bool:
        return self.entries != self.known

    def _consume(self, outcome: SourceOutcome) -> None:
        """Record one source's outcome (its rows are already staged)."""
        self.report.actions[outcome.action] += 1
        self.report.results.append(outcome)
        stored = self.known.get(outcome.locator)
        if outcome.vanished:  # between discovery and reading: as if it were missing
            if stored is not None and stored.get("state") == "indexed":
                self.entries[outcome.locator] = self._kept_missing(stored)
                outcome.state = "indexed"
            return
        if outcome.state == "failed" and stored is not None and stored.get("state") == "indexed":
            # its facts as last published stay (as a missing source's do), until a build
            # reads it again: the entry says why this one could not (`failed`)
            kept = {k: v for k, v in stored.items() if k not in ("missing", "failed")}
            self.entries[outcome.locator] = {**kept, "failed": outcome.reason}
            return
        entry = outcome.entry
        assert entry is not None
        tail = outcome.resumed_tail
        if (
            tail is not None
            and stored is not None
            and stored.get("partition") == entry["partition"]
        ):
            self._forget_tail(stored, tail)
        else:
            self._forget(stored)
        if outcome.checkpoint is not None:
            name = f"checkpoints/{int(entry['source_id']):016x}-{self.generation:06d}.pickle"
            entry["checkpoint"] = name
            self.checkpoints.append((outcome.checkpoint, name))
        self.entries[outcome.locator] = entry
        if outcome.prefix_digests:
            self.live_digests[outcome.locator] = outcome.prefix_digests

    def _resolve_moves(self) -> None:
        """Vanished sources whose facts a live file of this build now holds are dropped."""
        for locator, entry in list(self.entries.items()):
            if not entry.get("missing"):
                continue
            count = int(entry.get("records", 0))
            algorithm = entry.get("fingerprint", FINGERPRINT_ALGORITHM)
            for live, digests in self.live_digests.items():
                if self.entries[live].get("session_id") != entry.get("session_id"):
                    continue
                if algorithm == FINGERPRINT_ALGORITHM:
                    digest = digests.get(count)
                else:  # indexed under an older algorithm: compare under that one
                    digest = prefix_digest(live, count, algorithm)
                if digest == entry.get("digest"):
                    self._forget(entry)
                    del self.entries[locator]
                    self.report.actions["moved"] += 1
                    self.report.results.append(
                        SourceOutcome(locator, "moved", "skipped", f"moved to {live}")
                    )
                    break

    def _grown(self) -> dict[str, int]:
        """The bucket count of every group after this build: its count so far, doubled up to
        `MAX_BUCKETS` until no bucket holds more than `PART_RECORDS` records (a session is
        never split, so where that cannot be reached, the fewest buckets that come closest);
        never halved."""
        sessions: dict[str, Counter[int]] = {}
        for entry in self.entries.values():
            if entry.get("state") == "indexed" and "partition" in entry:
                group = Partition.from_key(entry["partition"]).group
                records = sessions.setdefault(group, Counter())
                records[int(entry["session_id"])] += int(entry.get("records", 0))
        layout = {}
        for group, records in sessions.items():
            options = [self.layout.get(group, 1)]
            while options[-1] < MAX_BUCKETS:
                options.append(options[-1] * 2)
            largest = {n: _largest_bucket(records, n) for n in options}
            target = max(PART_RECORDS, min(largest.values()))
            layout[group] = next(n for n in options if largest[n] <= target)
        return layout

    def _split(self, layout: dict[str, int]) -> list[tuple[Partition, Split]]:
        """How the partitions of groups whose bucket count grew are rewritten: each such
        partition with the new partitions its rows go to, `ROUTE_TARGETS` at a time (each
        time read once). The sources' entries move to their new keys."""
        grown = {g for g, n in layout.items() if n != self.layout.get(g, 1)}
        members: dict[str, dict[int, int]] = {}  # group -> source id -> new bucket
        for locator, entry in self.entries.items():
            if entry.get("state") != "indexed" or "partition" not in entry:
                continue
            old = Partition.from_key(entry["partition"])
            if old.group in grown:
                bucket = int(entry["session_id"]) % layout[old.group]
                new = Partition(old.runtime, old.month, bucket)
                self.entries[locator] = {**entry, "partition": new.key}
                members.setdefault(old.group, {})[int(entry["source_id"])] = bucket
        out = []
        for group in sorted(grown):
            runtime, month = group.split("/")
            before, after = self.layout.get(group, 1), layout[group]
            buckets = members.get(group, {})
            sources = sorted(buckets)
            source_ids = pa.array(sources, pa.int64())
            bucket_ids = pa.array([buckets[s] for s in sources], pa.int64())
            for origin in range(before):
                targets = [Partition(runtime, month, b) for b in range(origin, after, before)]
                for at in range(0, len(targets), ROUTE_TARGETS):
                    wave = tuple(targets[at : at + ROUTE_TARGETS])
                    out.append(
                        (Partition(runtime, month, origin), Split(wave, source_ids, bucket_ids))
                    )
        return out

    def _publish(self) -> None:
        parts: dict[str, dict[str, str]] = {k: dict(v) for k, v in self.previous["parts"].items()}
        known = _sessions_of(self.entries)
        layout = self._grown()
        split = self._split(layout)
        grown = {origin.group for origin, _ in split}
        affected = {
            p
            for p in set(self.drop) | set(self.tail_drop) | self.stage.partitions(layout)
            if p.group not in grown
        }
        for key in [k for k in parts if Partition.from_key(k).group in grown]:
            del parts[key]  # rewritten whole, bucket by bucket
        appeared_or_gone = known ^ _sessions_of(self.known)
        if appeared_or_gone:  # items linking to them must be re-resolved
            candidates = {
                str(self.dataset / p["items"]): key
                for key, p in parts.items()
                if "items" in p and Partition.from_key(key) not in affected
            }
            changed = pa.array(sorted(appeared_or_gone), pa.int64())
            for path in parts_linking(sorted(candidates), changed):
                affected.add(Partition.from_key(candidates[path]))
        known_ids = pa.array(sorted(known), pa.int64())

        residents = _residents(self.known)

        def rewrite(origin: Partition, route: Split | None) -> dict[Partition, dict[str, str]]:
            """Write the parts of `origin`'s new rows (of the targets of `route`, if given)."""
            full = self.drop.get(origin, set())
            tail = self.tail_drop.get(origin, {})
            old = self.previous["parts"].get(origin.key, {})
            if old and origin.key in residents and residents[origin.key] <= full:
                old = {}  # every source in the previous part is replaced: nothing to keep
            targets = route.targets if route is not None else (origin,)
            wanted = {target.bucket: target for target in targets}
            buckets = layout.get(origin.group, 1)
            new: dict[Partition, dict[str, str]] = {target: {} for target in targets}
            for table in TABLES:
                sources = full | (tail.get("sources", set()) if table in RESTATED else set())
                drop = pa.array(sorted(sources), pa.int64())
                ids = pa.array(sorted(tail.get(table, ())), pa.int64())
                links = (lambda rows: resolve_links(rows, known_ids)) if table == "items" else None
                share = ROW_GROUP_BYTES // len(targets)  # one read's writers share it
                writers = {t: PartWriter(self.stage, t, table, links, share) for t in targets}
                try:
                    for piece in self.stage.previous(table, old.get(table), drop, ids):
                        routed = route.route(table, piece) if route else [(origin, piece)]
                        for target, rows in routed:
                            writers[target].add(rows)
                    staged = self.stage.staged(origin.group, table, buckets, wanted)
                    for bucket, rows in staged:
                        writers[wanted[bucket]].add(rows)
                    for target, writer in writers.items():
                        written = writer.close()
                        if written is not None:
                            new[target][table] = written
                            fault_point("write")
                finally:
                    for writer in writers.values():
                        writer.discard()  # after an error (a closed writer has no file open)
            return new

        units: list[tuple[Partition, Split | None]] = [(p, None) for p in sorted(affected)]
        units += split
        for key in [k for k in parts if Partition.from_key(k) in affected]:
            del parts[key]
        # Arrow and Parquet release the GIL: threads write partitions side by side.
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for written in pool.map(lambda unit: rewrite(*unit), units):
                for partition, new in written.items():
                    if new:
                        parts[partition.key] = new
        if self.checkpoints:
            (self.dataset / "checkpoints").mkdir(exist_ok=True)
        for staged, name in self.checkpoints:
            os.replace(staged, self.dataset / name)
        manifest = new_manifest(
            self.previous, self.generation, parts, self.entries, self.record, layout
        )
        fault_point("swap")
        swap_manifest(self.dataset, manifest)
        fault_point("collect")
        self.stage.discard()
        collect_garbage(self.dataset, manifest)


@dataclass(slots=True)
class PruneReport:
    """Sources whose facts a prune removed (or would remove)."""

    generation: int
    removed: list[str] = field(default_factory=list)


def prune(dataset: Path, *, dry_run: bool = False) -> PruneReport:
    """Remove the facts of every source whose file no longer exists."""
    with locked(dataset):
        previous = read_manifest(dataset)
        collect_garbage(dataset, previous)
        if previous is None:
            raise DatasetError(f"{dataset}: no dataset here yet; run `traceidx build` first")
        known: dict[str, dict[str, Any]] = previous["sources"]
        gone = sorted(loc for loc in known if not os.path.lexists(loc))
        report = PruneReport(int(previous["generation"]), gone)
        if dry_run or not gone:
            return report
        stored = previous["settings"] or {}
        defaults = Settings()
        settings = Settings(
            text_limit=int(stored.get("text_limit", defaults.text_limit)),
            max_record_bytes=int(stored.get("max_record_bytes", defaults.max_record_bytes)),
        )
        sync = _Sync(dataset, previous, settings, stored, 1, False, None)
        sync.entries = {k: v for k, v in known.items() if k not in gone}
        for locator in gone:
            sync._forget(known[locator])
        sync._publish()
        report.generation = sync.generation
        return report
