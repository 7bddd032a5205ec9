"""Publication: the new generation's parts written, then its manifest swapped in.

Only the partitions that hold changed or removed sources are rewritten (streaming each part:
the previous part's rows that stay, then the staged rows); parts holding items whose linked
session appeared or disappeared are rewritten too, so cross-session links (subagents, forks,
reports) stay right when only one side changes (projection.links). A group whose buckets grow
is rewritten whole, bucket by bucket. Each part is recorded in the manifest with its size
and checksum. Then the manifest is swapped in with one rename, and what no manifest names
any more is removed. Nothing is visible before the swap: an error or a kill at any point
leaves the previous generation intact, and the next build cleans up. Parts are put and the
manifest published through the build's `Store` (traceidx.store.base): on object storage the
parts are uploaded and the manifest is published by a conditional write (traceidx.store.remote).
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq

from traceidx.domain.model import TABLES
from traceidx.errors import DatasetError
from traceidx.pipeline.plan import dropped, fact_settings
from traceidx.pipeline.staging import ROW_GROUP_BYTES, PartWriter, Split, Stage
from traceidx.pipeline.worker import fault_point
from traceidx.projection import lineage
from traceidx.projection.ingest import Settings
from traceidx.projection.links import parts_linking
from traceidx.projection.links import resolve as resolve_links
from traceidx.sources.discover import vanished
from traceidx.store.base import Store
from traceidx.store.dataset import MAX_BUCKETS, PART_RECORDS, Partition, new_manifest
from traceidx.store.manifest import FactSettings, Manifest, PartFile, SourceEntry
from traceidx.store.open import open_store, reader
from traceidx.tables.encode import ID_COLUMNS

#: tables whose rows of a resumed source are all re-stated (one row per source)
RESTATED = ("sources", "sessions")

#: a partition whose group's buckets grew is read once per this many of its new partitions
#: (each of which holds at most its share of `ROW_GROUP_BYTES` of rows before writing them)
ROUTE_TARGETS = 4


def _largest_bucket(records: Counter[int], buckets: int) -> int:
    """The most records one bucket holds when sessions (id -> records) go to `buckets`."""
    sums: Counter[int] = Counter()
    for session, count in records.items():
        sums[session % buckets] += count
    return max(sums.values())


def _residents(entries: dict[str, SourceEntry]) -> dict[str, set[int]]:
    """The sources whose rows each partition's parts hold, by partition key (a partition
    holding a source of unknown id is left out)."""
    out: dict[str, set[int]] = {}
    unknown = set()
    for entry in entries.values():
        if entry.live:
            assert entry.partition is not None
            if entry.source_id is None:
                unknown.add(entry.partition)
            else:
                out.setdefault(entry.partition, set()).add(entry.source_id)
    return {key: sources for key, sources in out.items() if key not in unknown}


def _sessions_of(entries: dict[str, SourceEntry]) -> set[int]:
    return {
        e.session_id for e in entries.values() if e.state == "indexed" and e.session_id is not None
    }


@dataclass(frozen=True, slots=True)
class PublishInputs:
    """What a publication writes the next generation from: a build's plan and what its
    workers staged (traceidx.pipeline.plan.Changes), or a prune's."""

    #: the dataset, opened for this build (traceidx.store.base)
    store: Store
    #: the staged rows of the sources read (traceidx.pipeline.staging)
    stage: Stage
    #: the current generation's manifest (its parts, layout and sources)
    previous: Manifest
    #: the next generation's source entries, by locator
    entries: dict[str, SourceEntry]
    #: the sources whose previous rows must go, by the partition that holds them
    drop: dict[Partition, set[int]]
    #: rows of resumed sources to replace: their tail loops and items, session and source
    tail_drop: dict[Partition, dict[str, set[int]]]
    #: the settings that shape facts (recorded in the manifest)
    record: FactSettings
    #: each group's bucket count that the staged rows were placed by
    layout: dict[str, int]
    #: partitions with a damaged part (keys): rewritten from their sources alone
    damaged: frozenset[str] = frozenset()
    #: new checkpoints: staged file -> dataset-relative path
    checkpoints: tuple[tuple[str, str], ...] = ()
    #: how many partitions are written side by side
    jobs: int = 1

    @property
    def generation(self) -> int:
        return self.previous.generation + 1


class Publication:
    """Writes the generation its `PublishInputs` describe, from the rows in their stage."""

    def __init__(self, inputs: PublishInputs) -> None:
        self.stage = inputs.stage
        self.jobs = inputs.jobs
        self.store = inputs.store
        self.previous = inputs.previous
        self.known = inputs.previous.sources
        self.entries = inputs.entries
        self.drop = inputs.drop
        self.tail_drop = inputs.tail_drop
        self.layout = inputs.layout
        self.generation = inputs.generation
        self.damaged = inputs.damaged
        self.record = inputs.record
        self.checkpoints = inputs.checkpoints

    def _grown(self) -> dict[str, int]:
        """The bucket count of every group after this build: its count so far, doubled up to
        `MAX_BUCKETS` until no bucket holds more than `PART_RECORDS` records (a session is
        never split, so where that cannot be reached, the fewest buckets that come closest);
        never halved."""
        sessions: dict[str, Counter[int]] = {}
        for entry in self.entries.values():
            if entry.live and entry.counted and entry.session_id is not None:
                assert entry.partition is not None
                group = Partition.from_key(entry.partition).group
                records = sessions.setdefault(group, Counter())
                records[entry.session_id] += entry.records
        layout = {}
        for group, records in sessions.items():
            options = [self.layout.get(group, 1)]
            while options[-1] < MAX_BUCKETS:
                options.append(options[-1] * 2)
            largest = {n: _largest_bucket(records, n) for n in options}
            target = max(PART_RECORDS, min(largest.values()))
            layout[group] = next(n for n in options if largest[n] <= target)
        return layout

    def _split(
        self, layout: dict[str, int]
    ) -> tuple[list[tuple[Partition, Split]], dict[str, SourceEntry]]:
        """How the partitions of groups whose bucket count grew are rewritten: each such
        partition with the new partitions its rows go to, `ROUTE_TARGETS` at a time (each
        time read once); and the sources' entries, moved to their new keys."""
        grown = {g for g, n in layout.items() if n != self.layout.get(g, 1)}
        members: dict[str, dict[int, int]] = {}  # group -> source id -> new bucket
        entries = dict(self.entries)
        for locator, entry in self.entries.items():
            if not entry.live or entry.partition is None:
                continue
            old = Partition.from_key(entry.partition)
            if old.group in grown:
                assert entry.session_id is not None and entry.source_id is not None
                bucket = entry.session_id % layout[old.group]
                new = Partition(old.runtime, old.month, bucket)
                entries[locator] = msgspec.structs.replace(entry, partition=new.key)
                members.setdefault(old.group, {})[entry.source_id] = bucket
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
        return out, entries

    def publish(self) -> dict[str, SourceEntry]:
        """Write the changed parts, then swap the new manifest in and remove garbage; the
        published source entries (those of a group whose buckets grew at their new keys)."""
        parts = {k: dict(v) for k, v in self.previous.parts.items()}
        known = _sessions_of(self.entries)
        layout = self._grown()
        split, entries = self._split(layout)
        grown = {origin.group for origin, _ in split}
        damaged = {Partition.from_key(key) for key in self.damaged}
        touched = set(self.drop) | set(self.tail_drop) | self.stage.partitions(layout) | damaged
        affected = {p for p in touched if p.group not in grown}
        for key in [k for k in parts if Partition.from_key(k).group in grown]:
            del parts[key]  # rewritten whole, bucket by bucket
        appeared_or_gone = known ^ _sessions_of(self.known)
        if appeared_or_gone:  # items linking to them must be re-resolved
            candidates = {
                p["items"].path: key
                for key, p in parts.items()
                if "items" in p and Partition.from_key(key) not in affected
            }
            changed = pa.array(sorted(appeared_or_gone), pa.int64())
            for path in parts_linking(sorted(candidates), changed, self.stage.opened):
                affected.add(Partition.from_key(candidates[path]))
        known_ids = pa.array(sorted(known), pa.int64())

        residents = _residents(self.known)
        units: list[tuple[Partition, Split | None]] = [(p, None) for p in sorted(affected)]
        units += split
        for key in [k for k in parts if Partition.from_key(k) in affected]:
            del parts[key]
        plan = self._lineage(units, parts, known)  # `parts`: those this publication keeps
        overrides = plan.overrides if plan is not None else None

        def rewrite(origin: Partition, route: Split | None) -> dict[Partition, dict[str, PartFile]]:
            """Write the parts of `origin`'s new rows (of the targets of `route`, if given)."""
            full = self.drop.get(origin, set())
            tail = self.tail_drop.get(origin, {})
            old = self.previous.parts.get(origin.key, {})
            if old and origin.key in residents and residents[origin.key] <= full:
                old = {}  # every source in the previous part is replaced: nothing to keep
            targets = route.targets if route is not None else (origin,)
            wanted = {target.bucket: target for target in targets}
            buckets = layout.get(origin.group, 1)
            new: dict[Partition, dict[str, PartFile]] = {target: {} for target in targets}
            for table in TABLES:
                sources = full | (tail.get("sources", set()) if table in RESTATED else set())
                drop = pa.array(sorted(sources), pa.int64())
                ids = pa.array(sorted(tail.get(table, ())), pa.int64())
                links = (
                    partial(resolve_links, known=known_ids, overrides=overrides)
                    if table == "items"
                    else None
                )
                share = ROW_GROUP_BYTES // len(targets)  # one read's writers share it
                writers = {t: PartWriter(self.stage, t, table, links, share) for t in targets}
                try:
                    kept = old[table].path if table in old else None
                    if origin.key in self.damaged:
                        kept = None  # its sources were read again, or their facts are lost
                    for piece in self.stage.previous(table, kept, drop, ids):
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

        # Arrow and Parquet release the GIL: threads write partitions side by side.
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for written in pool.map(lambda unit: rewrite(*unit), units):
                for partition, new in written.items():
                    if new:
                        parts[partition.key] = new
        if plan is not None:
            self._relink(parts, plan, known_ids)
        for staged, name in self.checkpoints:
            self.store.put(Path(staged), name)
        manifest = new_manifest(self.previous, self.generation, parts, entries, self.record, layout)
        fault_point("swap")
        # locally a swap under the lock; on object storage a conditional write, which fails if
        # another build published this generation first
        self.store.publish(manifest)
        fault_point("collect")
        self.stage.discard()
        self.store.collect_garbage(manifest)
        return entries

    def _lineage(
        self,
        units: list[tuple[Partition, Split | None]],
        untouched: dict[str, dict[str, PartFile]],
        known: set[int],
    ) -> _Lineage | None:
        """The delegation links of the next generation (projection.lineage), from the rows the
        rewritten partitions will hold (the previous rows that stay and the staged ones) and
        the parts this publication keeps; None when no delegation or delegated child is in a
        rewritten partition before or after (then no link can move)."""
        fs = self.store.filesystem
        delegations: list[lineage.Delegation] = []
        answers: list[lineage.Answer] = []
        children: list[lineage.Child] = []
        held = False  # whether a rewritten partition held a delegation or child before
        for origin in sorted({origin for origin, _ in units}):
            if origin.key in self.damaged:
                held = True  # not read (it was read again): the links are worked out in full
                continue
            old = self.previous.parts.get(origin.key, {})
            full = self.drop.get(origin, set())
            tail = self.tail_drop.get(origin, {})
            if "items" in old:
                rows = lineage.read("items", [self.store.path(old["items"].path)], fs)
                if lineage.delegations_in(rows):  # read once, kept rows taken in memory
                    held = True
                    keep = _keep("items", full, tail)
                    delegations += lineage.delegations_in(rows, keep)
                    answers += lineage.answers_in(rows, keep)
            if "sessions" in old:
                rows = lineage.read("sessions", [self.store.path(old["sessions"].path)], fs)
                if lineage.children_in(rows):
                    held = True
                    children += lineage.children_in(rows, _keep("sessions", full, tail))
        keep = lineage.Keep(pa.array(sorted(self.stage.skip), pa.int64()))  # copies: no rows
        items = self.stage.candidates("items")
        found = lineage.delegations_in(items, keep)
        if found:
            delegations += found
            answers += lineage.answers_in(items, keep)
        children += lineage.children_in(self.stage.candidates("sessions"), keep)
        if not (held or delegations or children):
            return None
        kept = {self.store.path(p["items"].path): k for k, p in untouched.items() if "items" in p}
        before = lineage.read_delegations(sorted(kept), fs)
        sessions = [
            self.store.path(p["sessions"].path) for p in untouched.values() if "sessions" in p
        ]
        children += lineage.children_in(lineage.read("sessions", sessions, fs))
        every = delegations + [d for part in before.values() for d in part]
        desired = lineage.desired_links(every, children, known)
        return _Lineage(desired, lineage.overrides(desired, answers), before, kept)

    def _relink(
        self, parts: dict[str, dict[str, PartFile]], plan: _Lineage, known: pa.Array
    ) -> None:
        """Rewrite the kept item parts whose delegations link otherwise than the next
        generation's lineage says (a child matched or withheld in another part)."""
        fs = self.store.filesystem
        for path, links in sorted(lineage.stale_parts(plan.before, plan.desired, fs).items()):
            key = plan.kept[path]
            writer = PartWriter(
                self.stage,
                Partition.from_key(key),
                "items",
                partial(resolve_links, known=known, overrides=links),
            )
            try:
                old = pq.ParquetFile(self.stage.opened(parts[key]["items"].path))
                try:
                    for i in range(old.num_row_groups):
                        writer.add(old.read_row_group(i))
                finally:
                    old.close()
                written = writer.close()
            finally:
                writer.discard()
            assert written is not None
            parts[key] = {**parts[key], "items": written}
            fault_point("write")


def _keep(table: str, full: set[int], tail: dict[str, set[int]]) -> lineage.Keep:
    """Which previous rows of a table stay when a partition is rewritten (as `rewrite` keeps
    them: all but those of the sources dropped or restated and the ids dropped)."""
    sources = full | (tail.get("sources", set()) if table in RESTATED else set())
    return lineage.Keep(
        pa.array(sorted(sources), pa.int64()),
        pa.array(sorted(tail.get(table, ())), pa.int64()),
        ID_COLUMNS.get(table),
    )


@dataclass(frozen=True, slots=True)
class _Lineage:
    """The next generation's delegation links: what each delegation links (`desired`), what
    to publish in the rewritten partitions (`overrides`: delegations and their answers), and
    the delegations of the kept item parts (by path; `kept`: path -> partition key)."""

    desired: dict[int, int | None]
    overrides: dict[int, int | None]
    before: dict[str, list[lineage.Delegation]]
    kept: dict[str, str]


@dataclass(slots=True)
class PruneReport:
    """Sources whose facts a prune removed (or would remove)."""

    generation: int
    removed: list[str] = field(default_factory=list)


def prune(dataset: Path | str, *, dry_run: bool = False) -> PruneReport:
    """Remove the facts of every source whose file no longer exists."""
    if reader(dataset).read_published() is None:  # nothing to prune: no folder made, no lock taken
        raise DatasetError(f"{dataset}: no dataset here yet; run `traceidx build` first")
    with open_store(dataset) as store:
        previous = store.read()
        store.collect_garbage(previous)
        if previous is None:
            raise DatasetError(f"{dataset}: no dataset here yet; run `traceidx build` first")
        known = previous.sources
        gone = sorted(loc for loc in known if vanished(loc))
        report = PruneReport(previous.generation, gone)
        if dry_run or not gone:
            return report
        inputs = PublishInputs(
            store,
            Stage(store, previous.generation + 1),
            previous,
            entries={k: v for k, v in known.items() if k not in gone},
            drop=dropped(known[locator] for locator in gone),
            tail_drop={},
            record=previous.settings or fact_settings(Settings()),
            layout=previous.layout(),
        )
        Publication(inputs).publish()
        report.generation = inputs.generation
        return report
