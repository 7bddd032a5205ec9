"""Planning: which sources changed, and what the new generation keeps, drops and adds.

`Changes` is one build's view of the dataset: from the previous manifest and the files on
disk it decides per source what to do (traceidx.pipeline.sync's rules: unchanged sources are not
opened; every source already in the dataset is checked, even outside the paths named this
time), takes each worker's outcome as it arrives (its report for the `BuildReport`, its staged
part for the new entries), and ends with the new generation's source entries and the rows of
the previous one that must go. It writes nothing: publication (traceidx.pipeline.publish) turns
that, handed over as `PublishInputs`, into parts and a manifest.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from traceidx.domain.ids import ID_SCHEME
from traceidx.pipeline.copies import originals, prefix_reader, recheck_copies, stage_rows
from traceidx.pipeline.staging import Stage
from traceidx.pipeline.sync import Decision, ReportAction, decide
from traceidx.pipeline.worker import SourceOutcome, SourceReport
from traceidx.projection.ingest import Settings
from traceidx.runtimes import versions
from traceidx.sources import rowsource
from traceidx.sources.discover import Ignored, KnownDatabase, default_roots, discover
from traceidx.sources.frame import FINGERPRINT_ALGORITHM, LEGACY_ALGORITHM
from traceidx.sources.prefixes import prefix_digest
from traceidx.sources.stream import Framing
from traceidx.store.base import Store
from traceidx.store.dataset import Partition
from traceidx.store.manifest import FactSettings, Manifest, SourceEntry, SourceState
from traceidx.tables.schema import schema_digest

#: called as each source is settled: how many are, of how many, and the source's report
Progress = Callable[[int, int, SourceReport], None]


def fact_settings(settings: Settings) -> FactSettings:
    """The settings of a build that shape its facts (kept in the manifest)."""
    return FactSettings(
        text_limit=settings.text_limit,
        max_record_bytes=settings.max_record_bytes,
        fingerprint=FINGERPRINT_ALGORITHM,
        ids=ID_SCHEME,
        token_estimator="ascii4_unicode1_v1",
        schema=schema_digest(),
        redact=settings.redact,
        adapters=versions(),
    )


def stale_runtimes(before: FactSettings | None, now: FactSettings) -> frozenset[str] | None:
    """What a build must re-project because the settings that shape facts changed: None when
    one that shapes every runtime's facts did (every source), else the runtimes whose adapter
    projects otherwise now (their sources only; a runtime new to the registry too, so that the
    sources no adapter claimed before are tried again). Empty: nothing changed."""
    if before is None:
        return frozenset()
    if msgspec.structs.replace(before, adapters={}) != msgspec.structs.replace(now, adapters={}):
        return None
    names = before.adapters.keys() | now.adapters.keys()
    return frozenset(n for n in names if before.adapters.get(n) != now.adapters.get(n))


def scoped_settings(
    record: FactSettings, before: FactSettings | None, scope: frozenset[str] | None
) -> FactSettings:
    """The settings a build records: a runtime it does not read keeps the adapter version its
    sources were projected by (they are re-projected when a build reads that runtime)."""
    if scope is None or before is None:
        return record
    versions = {
        name: version if name in scope else before.adapters.get(name, version)
        for name, version in record.adapters.items()
    }
    return msgspec.structs.replace(record, adapters=versions)


def repair_scope(scope: frozenset[str] | None, damaged: frozenset[str]) -> frozenset[str] | None:
    """The runtimes a build reads: those asked for, and those of damaged partitions (whose
    sources are read again to rewrite them, whatever the filter)."""
    if scope is None:
        return None
    return scope | {key.split("/", 1)[0] for key in damaged}


def default_paths(settings: Settings) -> list[Path | str]:
    """The existing default roots of the runtimes a build covers."""
    return [
        root
        for name, roots in default_roots().items()
        if settings.runtimes is None or name in settings.runtimes
        for root in roots
        if root.exists()
    ]


@dataclass(slots=True)
class BuildReport:
    """What a build did, and what the dataset holds afterwards."""

    dataset: Path
    generation: int
    changed: bool = False
    results: list[SourceReport] = field(default_factory=list)
    actions: Counter[ReportAction] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    #: paths named like traces that are not regular files, never opened
    ignored: list[Ignored] = field(default_factory=list)
    #: damaged or missing parts of the previous generation (one line each)
    damaged: list[str] = field(default_factory=list)
    #: sources whose facts lived only in a damaged part and whose files are gone
    lost: list[str] = field(default_factory=list)
    #: sources this build found to be copies of another (locator -> the original's)
    copies: dict[str, str] = field(default_factory=dict)
    #: paths of the dataset that were readable by others, made private
    tightened: int = 0
    sources: dict[str, SourceEntry] = field(default_factory=dict)

    def count(self, state: SourceState) -> int:
        return sum(1 for r in self.results if r.state == state)

    @property
    def exit_code(self) -> int:
        """0 when every source was indexed or deliberately skipped, 1 when one failed."""
        return 1 if self.count("failed") or self.problems or self.lost else 0

    def totals(self) -> dict[str, int]:
        """This run's work and the dataset's contents after it (a copy's facts count once,
        as its original's)."""
        live = [e for e in self.sources.values() if e.counted]
        return {
            "sources": len(self.results),
            "processed": sum(1 for r in self.results if r.action not in ("unchanged", "missing")),
            "resumed": sum(1 for r in self.results if r.resumed),
            "unchanged": self.actions["unchanged"],
            "indexed": self.count("indexed"),
            "skipped": self.count("skipped"),
            "failed": self.count("failed"),
            "missing": sum(1 for e in live if e.missing),
            "dataset_sources": len(live),
            "records": sum(e.records for e in live),
            "sessions": len({e.session_id for e in live if e.session_id is not None}),
            "loops": sum(e.loops for e in live),
            "items": sum(e.items for e in live),
            "bytes": sum(e.indexed_bytes for e in live),
            "copies": sum(1 for e in self.sources.values() if e.state == "indexed") - len(live),
            "redacted": sum(n for e in live for n in e.redacted.values()),
        }

    def redacted(self) -> Counter[str]:
        """The secrets replaced in the published text of the dataset's sources, by type."""
        return sum((Counter(e.redacted) for e in self.sources.values() if e.counted), Counter())

    def skip_reasons(self) -> Counter[str]:
        return Counter(r.reason or "" for r in self.results if r.state == "skipped")

    def warnings(self) -> list[str]:
        """The warnings of the sources this run read, in order."""
        return [w for r in self.results for w in r.warnings]

    def summary(self, dataset: Path | str) -> dict[str, Any]:
        """What the build did and what `dataset` (as the user named it) holds afterwards, as
        plain values: what `traceidx build --format json` prints."""
        return {
            "dataset": str(dataset),
            "generation": self.generation,
            "published": self.changed,
            **self.totals(),
            "actions": dict(sorted(self.actions.items())),
            "skipped_reasons": dict(self.skip_reasons()),
            "failed_sources": {r.locator: r.reason for r in self.results if r.state == "failed"},
            "ignored": {i.locator: i.what for i in self.ignored},
            "damaged_parts": self.damaged,
            "lost_sources": self.lost,
            "tightened_paths": self.tightened,
            "warnings": self.warnings(),
            "unknown_record_types": dict(
                sum((Counter(r.unknown_types) for r in self.results), Counter())
            ),
            "new_copies": dict(sorted(self.copies.items())),
            "redacted_by_type": dict(sorted(self.redacted().items())),
        }


def _seen_at(entry: SourceEntry, locator: str, databases: dict[str, str]) -> SourceEntry:
    """A database session's entry with the state of the database this build listed it at
    (any other entry as it is)."""
    where = rowsource.parse(locator)
    state = databases.get(where.database) if where is not None else None
    if state is None or state == entry.database:
        return entry
    return msgspec.structs.replace(entry, database=state)


class Changes:
    """One build's plan and what its workers found: the new generation's source entries, and
    the previous generation's rows that must go (by partition)."""

    def __init__(
        self,
        store: Store,
        previous: Manifest,
        record: FactSettings,
        rebuild: bool,
        progress: Progress | None = None,
        damaged: frozenset[str] = frozenset(),
        origin: str | None = None,
        scope: frozenset[str] | None = None,
        stale: frozenset[str] = frozenset(),
    ) -> None:
        #: the dataset, opened for this build (traceidx.store.base)
        self.store = store
        #: the runtimes this build reads (None: all): a source of another runtime keeps its
        #: facts and state as they are, `--rebuild` included (a filter scopes a run, never the
        #: dataset)
        self.scope = scope
        #: the origin of the sources this build indexes first
        self.origin = origin
        self.previous = previous
        self.known: dict[str, SourceEntry] = previous.sources
        self.record = record
        self.rebuild = rebuild
        #: the runtimes whose adapter version changed: their sources are re-projected, and so
        #: are the sources no adapter claimed (a changed adapter may claim them now)
        self.stale = stale
        self.progress = progress
        #: partitions with a damaged part: rewritten from their sources alone
        self.damaged = damaged
        self.generation = previous.generation + 1
        self.report = BuildReport(store.folder, previous.generation)
        self.entries: dict[str, SourceEntry] = {}
        #: the sources whose rows must go, by the partition that holds them
        self.drop: dict[Partition, set[int]] = {}
        #: rows of resumed sources to replace: their tail loops and items, session and source
        self.tail_drop: dict[Partition, dict[str, set[int]]] = {}
        self.checkpoints: list[tuple[str, str]] = []  # staged -> dataset-relative path
        self.layout = previous.layout()  # what the workers place rows by
        self.live_digests: dict[str, dict[int, str]] = {}
        #: the sources read by this build (their rows are staged)
        self.read: set[str] = set()
        self.done = 0
        self.total = 0
        #: the fingerprint algorithm of the previous build, if not the current one: the
        #: sources it indexed that are gone now keep its fingerprints (their entries say so)
        settings = previous.settings
        used = settings.fingerprint if settings is not None else LEGACY_ALGORITHM
        self.older = None if used == FINGERPRINT_ALGORITHM or not previous.sources else used

    # -- planning ---------------------------------------------------------------------------

    def plan(self, paths: list[Path | str]) -> list[Decision]:
        """Decide what to do with every source under `paths` and every known source; the
        unchanged, missing and superseded ones are settled here, the rest are returned."""
        report = self.report
        found = discover(paths, self._known_databases())
        report.problems, report.ignored = found.problems, found.ignored
        superseded = found.superseded
        for old in superseded:
            if self._outside(self.known.get(old.locator)):
                continue  # the file holding its facts is not read by this build either
            result = SourceReport(
                old.locator, "superseded", "skipped", f"superseded by {old.by}: {old.why}"
            )
            self.forget(self.known.get(old.locator))
            report.results.append(result)
            report.actions["superseded"] += 1
        gone = {s.locator for s in superseded if not self._outside(self.known.get(s.locator))}
        locators = sorted(({c.locator for c in found.candidates} | set(self.known)) - gone)
        framings = {c.locator: c.framing for c in found.candidates}
        decisions = [
            self._decide(loc, found.stats.get(loc), framings.get(loc))
            if loc not in found.gone
            else Decision(loc, "missing")
            for loc in locators
        ]
        decisions = recheck_copies(decisions, self.known)
        self.total = len(decisions)
        outside = set()
        for d in decisions:
            entry = self.known.get(d.locator)
            if self._outside(entry):
                assert entry is not None
                outside.add(d.locator)
                self.entries[d.locator] = entry  # not read: as it was
                report.actions["outside"] += 1
                self._progress(SourceReport(d.locator, "outside", entry.state, entry.reason))
                continue
            if d.action == "missing" and entry is not None and self._in_damaged(entry):
                self.forget(entry)  # its facts were in a damaged part, and its file is gone
                self.report.lost.append(d.locator)
                self._progress(SourceReport(d.locator, "lost", "skipped", "facts lost"))
                continue
            if d.action == "unchanged" and entry is not None:
                entry = _seen_at(entry, d.locator, found.databases)
                self.entries[d.locator] = msgspec.structs.replace(entry, missing=False)
            elif d.action == "missing" and entry is not None:
                if entry.state == "indexed":  # facts stay until pruned
                    entry = _seen_at(entry, d.locator, found.databases)
                    self.entries[d.locator] = self._kept_missing(entry)
            else:
                continue
            report.actions[d.action] += 1
            self._progress(SourceReport(d.locator, d.action, entry.state, entry.reason))
        return [d for d in decisions if d.ingest and d.locator not in outside]

    def _known_databases(self) -> dict[str, KnownDatabase]:
        """The databases whose sessions in the dataset were all last read or listed at one state
        of the database's files (none of them failed): discovery does not open those while
        they keep that state."""
        groups: dict[str, list[tuple[str, SourceEntry]]] = {}
        for locator, entry in self.known.items():
            where = rowsource.parse(locator)
            if where is not None and where.session is not None:
                groups.setdefault(where.database, []).append((locator, entry))
        known: dict[str, KnownDatabase] = {}
        for database, sessions in groups.items():
            states = {entry.database for _, entry in sessions}
            state = states.pop() if len(states) == 1 else None
            if state is None or any(e.state == "failed" or e.failed for _, e in sessions):
                continue
            stamps = {loc: (e.size, e.mtime_ns) for loc, e in sessions if not e.missing}
            gone = frozenset(loc for loc, e in sessions if e.missing)
            known[database] = KnownDatabase(state, stamps, gone)
        return known

    def _outside(self, entry: SourceEntry | None) -> bool:
        """Whether a known source is of a runtime this build does not read (the scope holds
        the runtimes of damaged partitions too: `repair_scope`)."""
        return (
            self.scope is not None
            and entry is not None
            and entry.runtime is not None
            and entry.runtime not in self.scope
        )

    def _decide(
        self,
        locator: str,
        listed: tuple[int, int] | None = None,
        framing: Framing | None = None,
    ) -> Decision:
        entry = self.known.get(locator)
        decision = decide(locator, entry, self.rebuild or self._stale(entry), listed, framing)
        origin = entry.origin if entry is not None and entry.origin else self.origin
        partition = entry.partition if entry is not None else None
        if entry is not None and self._in_damaged(entry) and decision.action != "missing":
            decision = dataclasses.replace(decision, action="repaired")  # read again, from byte 0
        return dataclasses.replace(decision, origin=origin, partition=partition)

    def _stale(self, entry: SourceEntry | None) -> bool:
        """Whether a known source is re-projected because an adapter version changed."""
        if entry is None or not self.stale:
            return False
        return entry.runtime in self.stale if entry.runtime is not None else True

    def _in_damaged(self, entry: SourceEntry) -> bool:
        return entry.live and entry.partition in self.damaged

    def missing_sessions(self) -> dict[int, list[int]]:
        """The sessions of vanished sources with their record counts (for move detection)."""
        missing: dict[int, list[int]] = {}
        for e in self.entries.values():
            if e.missing and e.session_id is not None:
                missing.setdefault(e.session_id, []).append(e.records)
        return missing

    def resumable(self, decisions: list[Decision]) -> dict[str, str]:
        """The stored checkpoints of appended sources, by locator."""
        out = {}
        for d in decisions:
            entry = self.known.get(d.locator)
            # a copy published none of the rows its checkpoint settled: it is read whole
            copy = entry is not None and entry.duplicate_of is not None
            if d.action == "appended" and entry is not None and entry.checkpoint and not copy:
                out[d.locator] = str(self.store.fetch(entry.checkpoint))  # the workers read it
        return out

    # -- outcomes ---------------------------------------------------------------------------

    def consume(self, outcome: SourceOutcome) -> None:
        """Record one source's outcome (its rows are already staged)."""
        self.report.actions[outcome.report.action] += 1
        self._progress(self._take(outcome))

    def _take(self, outcome: SourceOutcome) -> SourceReport:
        """Take a source's outcome into the new generation's entries; what the report says
        of it (a vanished source whose facts stay is reported indexed)."""
        report, staged = outcome.report, outcome.staged
        stored = self.known.get(report.locator)
        if staged is None and report.action == "outside":
            # a runtime this build does not read: as it was, or not recorded
            if stored is not None:
                self.entries[report.locator] = stored
            return report
        if staged is None:  # vanished between discovery and reading: as if it were missing
            if stored is not None and self._in_damaged(stored):
                self.forget(stored)
                self.report.lost.append(report.locator)
            elif stored is not None and stored.state == "indexed":
                self.entries[report.locator] = self._kept_missing(stored)
                return dataclasses.replace(report, state="indexed")
            return report
        if stored is not None and stored.state == "indexed" and self._in_damaged(stored):
            if report.state != "indexed":  # it cannot be read again: its facts are lost
                self.report.lost.append(report.locator)
        elif report.state == "failed" and stored is not None and stored.state == "indexed":
            # its facts as last published stay (as a missing source's do), until a build
            # reads it again: the entry says why this one could not (`failed`)
            failed = msgspec.structs.replace(stored, missing=False, failed=report.reason)
            self.entries[report.locator] = failed
            return report
        entry = staged.entry
        self.read.add(report.locator)
        tail = staged.resumed_tail
        if tail is not None and stored is not None and stored.partition == entry.partition:
            self._forget_tail(stored, tail)
        else:
            self.forget(stored)
        if staged.checkpoint is not None:
            assert entry.source_id is not None
            name = f"checkpoints/{entry.source_id:016x}-{self.generation:06d}.pickle"
            entry = msgspec.structs.replace(entry, checkpoint=name)
            self.checkpoints.append((staged.checkpoint, name))
        self.entries[report.locator] = entry
        if staged.prefix_digests:
            self.live_digests[report.locator] = staged.prefix_digests
        return report

    def resolve_moves(self) -> None:
        """Vanished sources whose facts a live file of this build now holds are dropped."""
        for locator, entry in list(self.entries.items()):
            if not entry.missing:
                continue
            algorithm = entry.fingerprint or FINGERPRINT_ALGORITHM
            for live, digests in self.live_digests.items():
                if self.entries[live].session_id != entry.session_id:
                    continue
                if algorithm == FINGERPRINT_ALGORITHM:
                    digest = digests.get(entry.records)
                else:  # indexed under an older algorithm: compare under that one
                    digest = prefix_digest(live, entry.records, algorithm)
                if digest == entry.digest:
                    self.forget(entry)
                    del self.entries[locator]
                    self.report.actions["moved"] += 1
                    self.report.results.append(
                        SourceReport(locator, "moved", "skipped", f"moved to {live}")
                    )
                    break

    def resolve_copies(self, stage: Stage) -> None:
        """Sources of the Sessions this build read that copy another source's records publish
        only their source row, naming the original (traceidx.pipeline.copies)."""
        sessions = {
            e.session_id
            for loc in self.read
            if (e := self.entries.get(loc)) is not None and e.session_id is not None
        }
        if not sessions:
            return
        counted = {loc for loc, e in self.known.items() if e.counted}
        found = originals(self.entries, sessions, counted, prefix_reader(self.live_digests))
        copies: dict[str, SourceEntry] = {}
        hosts: dict[str, int] = {}
        for locator, host in sorted(found.items()):
            entry = self.entries[locator]
            read = locator in self.read
            if host is None or (not read and entry.duplicate_of == host):
                continue  # an original, or a copy of the same original as before
            if read:  # its staged rows stay unpublished
                assert entry.source_id is not None
                stage.skip.add(entry.source_id)
            # its published rows go, all of them (a counted source's, a copy's source row)
            self.forget(self.known.get(locator))
            entry = msgspec.structs.replace(entry, duplicate_of=host)
            self.entries[locator] = copies[locator] = entry
            source_id = self.entries[host].source_id
            assert source_id is not None
            hosts[locator] = source_id
            self.report.copies[locator] = host
        stage_rows(stage, copies, hosts)

    def changed(self, staged: bool) -> bool:
        """Whether the new generation differs from the previous one in its facts or in what
        it says of the sources whose facts it holds or could not read (a new dataset is always
        published); a source newly skipped, which holds no fact, publishes no generation (it
        is recorded with the next one)."""
        first = self.previous.generation == 0
        facts = staged or bool(self.drop or self.tail_drop)
        return first or facts or _not_skipped(self.entries) != _not_skipped(self.known)

    def forget(self, entry: SourceEntry | None) -> None:
        """The rows a stored source published must go."""
        _drop(self.drop, entry)

    def _forget_tail(self, entry: SourceEntry, tail: dict[str, list[int]]) -> None:
        """The rows a resumed source re-states must go; its settled rows stay."""
        assert entry.partition is not None and entry.source_id is not None
        drop = self.tail_drop.setdefault(Partition.from_key(entry.partition), {})
        drop.setdefault("sources", set()).add(entry.source_id)
        for table in ("loops", "items", "model_calls"):
            drop.setdefault(table, set()).update(tail.get(table, []))

    def _kept_missing(self, entry: SourceEntry) -> SourceEntry:
        """The entry of an indexed source whose file is gone (its facts stay)."""
        if self.older is not None and entry.fingerprint is None:
            return msgspec.structs.replace(entry, missing=True, fingerprint=self.older)
        return msgspec.structs.replace(entry, missing=True)

    def _progress(self, result: SourceReport) -> None:
        self.report.results.append(result)
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total, result)


def _not_skipped(entries: dict[str, SourceEntry]) -> dict[str, SourceEntry]:
    return {locator: e for locator, e in entries.items() if e.state != "skipped"}


def dropped(entries: Iterable[SourceEntry]) -> dict[Partition, set[int]]:
    """The sources whose published rows must go, by the partition that holds them (of
    `entries`, those whose rows are published)."""
    drop: dict[Partition, set[int]] = {}
    for entry in entries:
        _drop(drop, entry)
    return drop


def _drop(drop: dict[Partition, set[int]], entry: SourceEntry | None) -> None:
    """Add the source of a stored entry whose rows are published to `drop`."""
    if entry is not None and entry.state == "indexed" and entry.partition is not None:
        source = entry.source_id if entry.source_id is not None else -1
        drop.setdefault(Partition.from_key(entry.partition), set()).add(source)
