"""The build job: sync the dataset with the trace files, incrementally and atomically.

Three stages, under the dataset's exclusive lock, after removing the garbage a killed build
left behind (staging folders, unpublished parts):

1. **planning** (traceidx.pipeline.plan): discover candidates and decide, per source, what to do;
2. **the worker** (traceidx.pipeline.worker): ingest the changed sources in a process pool, each
   source's rows spooled to the staging folder; the build process keeps only where they are;
3. **publication** (traceidx.pipeline.publish): rewrite only the partitions that hold changed or
   removed sources, then swap the manifest.

Nothing is visible before the swap: an error or a kill at any point leaves the previous
generation intact, and the next build cleans up. A build that changes nothing publishes
nothing. Settings that shape facts (text bound, record limit) are part of the dataset: a
build with other settings re-projects every source. The dataset is one `Store`
(traceidx.store.base): a local folder is built in place and swapped under its lock; a dataset on
object storage (traceidx.store.remote) is built in a local temporary folder and published by
upload and a conditional write.
"""

from __future__ import annotations

import dataclasses
import os
import socket
from pathlib import Path

from traceidx.errors import PublishError, write_failure
from traceidx.pipeline.engines import Engine, run_batches
from traceidx.pipeline.plan import (
    BuildReport,
    Changes,
    Progress,
    default_paths,
    fact_settings,
    repair_scope,
    scoped_settings,
    stale_runtimes,
)
from traceidx.pipeline.publish import PruneReport, Publication, PublishInputs, prune
from traceidx.pipeline.staging import Stage
from traceidx.pipeline.worker import SourceOutcome, SourceReport, Task, tuned
from traceidx.projection.ingest import Settings
from traceidx.store.manifest import Manifest
from traceidx.store.open import open_store
from traceidx.tables.encode import IdGuard

__all__ = ["BuildReport", "PruneReport", "SourceOutcome", "SourceReport", "build", "prune"]


def build(
    paths: list[Path | str] | None,
    dataset: Path | str,
    *,
    settings: Settings | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    rebuild: bool = False,
    engine: Engine = "local",
    ray_address: str | None = None,
    origin: str | None = None,
) -> BuildReport:
    """Sync the dataset with `paths` (or the default roots) and publish what changed; the
    sources are read by `engine` (traceidx.pipeline.engines), publication is always this process's.
    A source indexed for the first time records `origin` (by default this machine's
    hostname); one already in the dataset keeps its own."""
    settings = settings or Settings()
    paths = default_paths(settings) if paths is None else paths
    jobs = jobs or os.cpu_count() or 1
    with open_store(dataset) as store:
        stored = store.read()
        store.collect_garbage(stored)
        previous = stored or Manifest()
        # on object storage a bucket's access is its policy's, and sizes are checked (from one
        # listing), checksums not read
        tightened = store.tighten()
        damage = store.check_parts(previous, checksums=True)
        damaged = frozenset(d.key for d in damage)
        origin = origin or socket.gethostname()
        scope = repair_scope(settings.runtimes, damaged)
        settings = dataclasses.replace(settings, runtimes=scope)
        record = scoped_settings(fact_settings(settings), previous.settings, scope)
        stale = stale_runtimes(previous.settings, record)
        rebuild = rebuild or stale is None
        changes = Changes(
            store, previous, record, rebuild, progress, damaged, origin, scope, stale or frozenset()
        )
        repairing = "this build re-projects the sources whose facts it held"
        changes.report.damaged = [d.line(dataset, repairing) for d in damage]
        changes.report.tightened = tightened
        with tuned():
            try:
                return _run(changes, paths, settings, jobs, engine, ray_address)
            except (OSError, PublishError) as exc:  # writing the new generation failed
                store.abandon()
                where = write_failure(exc, dataset) if isinstance(exc, OSError) else str(exc)
                kept = f"generation {previous.generation} stays current"
                if stored is None:
                    kept = "nothing was published"
                raise PublishError(
                    f"{where}, while writing the dataset; {kept} and the build's temporary files "
                    "were removed; free space (or fix the folder's permissions) and run the build "
                    "again"
                ) from exc


def _run(
    changes: Changes,
    paths: list[Path | str],
    settings: Settings,
    jobs: int,
    engine: Engine,
    ray_address: str | None,
) -> BuildReport:
    """Plan, process the changed sources, and publish if anything changed."""
    report = changes.report
    work = changes.plan(paths)
    stage = Stage(changes.store, changes.generation)
    stage.folder.mkdir(parents=True, exist_ok=True)
    guard = IdGuard()
    task = Task(settings, changes.missing_sessions(), stage.folder, changes.layout)
    try:
        batches = run_batches(work, task, jobs, changes.resumable(work), engine, ray_address)
        for batch in batches:
            for group, table, spooled in batch.spooled:
                guard.take(table, spooled.ids)
                stage.add(group, table, spooled)
            for table, candidates in batch.lineage:
                stage.note(table, candidates)
            for outcome in batch.outcomes:
                changes.consume(outcome)
        guard.finish()
        changes.resolve_moves()
        changes.resolve_copies(stage)
        report.sources = changes.entries
        if not changes.changed(bool(stage)):
            return report
        report.sources = Publication(_publish_inputs(changes, stage, jobs)).publish()
    finally:
        stage.discard()
    report.changed = True
    report.generation = changes.generation
    return report


def _publish_inputs(changes: Changes, stage: Stage, jobs: int) -> PublishInputs:
    """What the publication of a build's plan takes of it."""
    return PublishInputs(
        store=changes.store,
        stage=stage,
        previous=changes.previous,
        entries=changes.entries,
        drop=changes.drop,
        tail_drop=changes.tail_drop,
        record=changes.record,
        layout=changes.layout,
        damaged=changes.damaged,
        checkpoints=tuple(changes.checkpoints),
        jobs=jobs,
    )
