"""Publication: the new generation's parts written, then its manifest swapped in.

Only the partitions that hold changed or removed sources are rewritten (streaming each part:
the previous part's rows that stay, then the staged rows); parts holding items whose linked
session appeared or disappeared are rewritten too, so cross-session links (subagents, forks,
reports) stay right when only one side changes (traceidx.links). A group whose buckets grow
is rewritten whole, bucket by bucket. Each part is recorded in the manifest with its size
and checksum. Then the manifest is swapped in with one rename, and what no manifest names
any more is removed. Nothing is visible before the swap: an error or a kill at any point
leaves the previous generation intact, and the next build cleans up. On object storage the
parts are uploaded and the manifest is published by a conditional write (traceidx.remote).
"""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq

from traceidx import lineage
from traceidx.dataset import (
    MAX_BUCKETS,
    PART_RECORDS,
    Partition,
    new_manifest,
    swap_manifest,
)
from traceidx.errors import DatasetError
from traceidx.ingest import Settings
from traceidx.links import parts_linking
from traceidx.links import resolve as resolve_links
from traceidx.manifest import PartFile, SourceEntry
from traceidx.model import TABLES
from traceidx.plan import Changes, fact_settings
from traceidx.remote import clean, current, workspace
from traceidx.sourceio import stat_of
from traceidx.staging import ROW_GROUP_BYTES, PartWriter, Split, Stage
from traceidx.storage import is_uri
from traceidx.worker import fault_point

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


class Publication:
    """Writes the generation a build's `Changes` describe, from the rows in `stage`."""

    def __init__(self, changes: Changes, stage: Stage, jobs: int) -> None:
        self.changes = changes
        self.stage = stage
        self.jobs = jobs
        self.dataset = changes.dataset
        self.previous = changes.previous
        self.known = changes.known
        self.entries = changes.entries
        self.drop = changes.drop
        self.tail_drop = changes.tail_drop
        self.layout = changes.layout
        self.generation = changes.generation

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

    def _split(self, layout: dict[str, int]) -> list[tuple[Partition, Split]]:
        """How the partitions of groups whose bucket count grew are rewritten: each such
        partition with the new partitions its rows go to, `ROUTE_TARGETS` at a time (each
        time read once). The sources' entries move to their new keys."""
        grown = {g for g, n in layout.items() if n != self.layout.get(g, 1)}
        members: dict[str, dict[int, int]] = {}  # group -> source id -> new bucket
        for locator, entry in self.entries.items():
            if not entry.live or entry.partition is None:
                continue
            old = Partition.from_key(entry.partition)
            if old.group in grown:
                assert entry.session_id is not None and entry.source_id is not None
                bucket = entry.session_id % layout[old.group]
                new = Partition(old.runtime, old.month, bucket)
                self.entries[locator] = msgspec.structs.replace(entry, partition=new.key)
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
        return out

    def publish(self) -> None:
        """Write the changed parts, then swap the new manifest in and remove garbage."""
        parts = {k: dict(v) for k, v in self.previous.parts.items()}
        known = _sessions_of(self.entries)
        layout = self._grown()
        split = self._split(layout)
        grown = {origin.group for origin, _ in split}
        damaged = {Partition.from_key(key) for key in self.changes.damaged}
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
                links = (lambda rows: resolve_links(rows, known_ids)) if table == "items" else None
                share = ROW_GROUP_BYTES // len(targets)  # one read's writers share it
                writers = {t: PartWriter(self.stage, t, table, links, share) for t in targets}
                try:
                    kept = old[table].path if table in old else None
                    if origin.key in self.changes.damaged:
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
        self._relink(parts, known)
        checkpoints = self.changes.checkpoints
        remote = self.changes.remote
        if checkpoints and remote is None:
            (self.dataset / "checkpoints").mkdir(exist_ok=True)
        for staged, name in checkpoints:
            if remote is not None:
                remote.upload(Path(staged), name)
            else:
                os.replace(staged, self.dataset / name)
        manifest = new_manifest(
            self.previous, self.generation, parts, self.entries, self.changes.record, layout
        )
        fault_point("swap")
        if remote is not None:
            remote.publish(manifest)  # conditional: fails if another build published first
        else:
            swap_manifest(self.dataset, manifest)
        fault_point("collect")
        self.stage.discard()
        clean(self.dataset, remote, manifest)

    def _relink(self, parts: dict[str, dict[str, PartFile]], known: set[int]) -> None:
        """Rewrite the item parts whose delegations link otherwise than the dataset's lineage
        says (a child matched or withheld in another part: traceidx.lineage)."""
        remote = self.changes.remote
        fs = remote.fs if remote is not None else None

        def where(relative: str) -> str:  # a part's path in `fs`
            return remote.path(relative) if remote is not None else str(self.dataset / relative)

        # A link can move only where a delegation or a delegated child came or went: in the
        # partitions this publication rewrote, read before and after; else nothing to do.
        # (A damaged part is not read: its partition was read again, so relink in full.)
        before = self.previous.parts
        changed = {k for k in set(parts) | set(before) if parts.get(k) != before.get(k)}
        rewritten = [parts[k] for k in changed if k in parts]
        rewritten += [before[k] for k in changed if k in before]
        touched_items = sorted({where(v["items"].path) for v in rewritten if "items" in v})
        touched_sessions = sorted({where(v["sessions"].path) for v in rewritten if "sessions" in v})
        if (
            not changed & self.changes.damaged
            and not any(lineage.read_delegations(touched_items, fs).values())
            and not lineage.read_children(touched_sessions, fs)
        ):
            return
        paths = {where(p["items"].path): k for k, p in parts.items() if "items" in p}
        sessions = [where(p["sessions"].path) for p in parts.values() if "sessions" in p]
        delegations = lineage.read_delegations(sorted(paths), fs)
        every = [d for found in delegations.values() for d in found]
        if not every:
            return
        desired = lineage.desired_links(every, lineage.read_children(sessions, fs), known)
        known_ids = pa.array(sorted(known), pa.int64())
        for path, links in sorted(lineage.stale_parts(delegations, desired, fs).items()):
            key = paths[path]
            old = pq.ParquetFile(self.stage.opened(parts[key]["items"].path))
            groups = [old.read_row_group(i) for i in range(old.num_row_groups)]
            old.close()
            writer = PartWriter(
                self.stage,
                Partition.from_key(key),
                "items",
                partial(resolve_links, known=known_ids, overrides=links),
            )
            try:
                for rows in groups:
                    writer.add(rows)
                written = writer.close()
            finally:
                writer.discard()
            assert written is not None
            parts[key] = {**parts[key], "items": written}
            fault_point("write")


@dataclass(slots=True)
class PruneReport:
    """Sources whose facts a prune removed (or would remove)."""

    generation: int
    removed: list[str] = field(default_factory=list)


def _gone(locator: str) -> bool:
    """Whether a source's file (or object) no longer exists."""
    if not is_uri(locator):
        return not os.path.lexists(locator)
    try:
        stat_of(locator)
    except FileNotFoundError:
        return True
    return False


def prune(dataset: Path | str, *, dry_run: bool = False) -> PruneReport:
    """Remove the facts of every source whose file no longer exists."""
    with workspace(dataset) as (folder, remote):
        previous = current(folder, remote)
        clean(folder, remote, previous)
        if previous is None:
            raise DatasetError(f"{dataset}: no dataset here yet; run `traceidx build` first")
        known = previous.sources
        gone = sorted(loc for loc in known if _gone(loc))
        report = PruneReport(previous.generation, gone)
        if dry_run or not gone:
            return report
        settings = previous.settings or fact_settings(Settings())
        changes = Changes(folder, previous, settings, False, remote=remote)
        changes.entries.update((k, v) for k, v in known.items() if k not in gone)
        for locator in gone:
            changes.forget(known[locator])
        stage = Stage(folder, changes.generation, remote)
        Publication(changes, stage, 1).publish()
        report.generation = changes.generation
        return report
