"""Publication: Arrow tables to partitioned Parquet plus an atomically replaced manifest.

Layout::

    <dataset>/manifest.json
    <dataset>/<table>/runtime=<r>/month=<YYYY-MM>/part-<generation>-<bucket>.parquet

A source's rows (its records, session, loops, items) all land in the partition of its
session's creation month (``unknown`` when no time is known) and in bucket
``session_id % BUCKETS``. New parts are written first under the new generation's names; the
manifest is then written to a temporary file, fsynced and renamed over ``manifest.json``;
only then are superseded parts removed. Readers take the file list from the manifest, so
they see the old or the new generation, never a mix. A build holds an exclusive lock on
``<dataset>/.lock`` for its whole run.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from traceidx.model import TABLES

FORMAT_VERSION = 1
BUCKETS = 4
MANIFEST = "manifest.json"


class DatasetLocked(RuntimeError):
    """Another build holds the dataset's lock."""


class DatasetError(RuntimeError):
    """The dataset on disk cannot be used (missing, unreadable or of another format)."""


@contextmanager
def locked(dataset: Path) -> Iterator[None]:
    """Hold the dataset's exclusive build lock (non-blocking: raises DatasetLocked)."""
    dataset.mkdir(parents=True, exist_ok=True)
    fd = os.open(dataset / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise DatasetLocked(f"{dataset} is being built by another process") from exc
        yield
    finally:
        os.close(fd)


def read_manifest(dataset: Path) -> dict[str, Any] | None:
    """The current manifest, or None when the dataset has never been published."""
    path = dataset / MANIFEST
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: unreadable manifest ({exc})") from exc
    if data.get("format_version") != FORMAT_VERSION:
        raise DatasetError(
            f"{path}: dataset format {data.get('format_version')} is not {FORMAT_VERSION}; "
            "build a new dataset"
        )
    return dict(data)


@dataclass(frozen=True, slots=True)
class Partition:
    """Where one source's rows go."""

    runtime: str
    month: str
    bucket: int

    def path(self, table: str, generation: int) -> str:
        return (
            f"{table}/runtime={self.runtime}/month={self.month}/"
            f"part-{generation:06d}-{self.bucket}.parquet"
        )


def partition_of(runtime: str, created_at_ms: int | None, session_id: int) -> Partition:
    """The partition of a source from its session's creation time."""
    month = "unknown"
    if created_at_ms is not None:
        month = datetime.fromtimestamp(created_at_ms / 1000, UTC).strftime("%Y-%m")
    return Partition(runtime, month, session_id % BUCKETS)


def publish(
    dataset: Path,
    tables: dict[Partition, dict[str, pa.Table]],
    sources: dict[str, dict[str, Any]],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """Write a new generation and swap the manifest in; returns the new manifest."""
    previous = read_manifest(dataset)
    generation = (previous["generation"] + 1) if previous else 1
    files: dict[str, list[str]] = defaultdict(list)
    for partition in sorted(tables, key=lambda p: (p.runtime, p.month, p.bucket)):
        for table, data in tables[partition].items():
            if data.num_rows == 0:
                continue
            relative = partition.path(table, generation)
            target = dataset / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(data, target, compression="zstd", write_statistics=True)
            files[table].append(relative)
    manifest = {
        "format_version": FORMAT_VERSION,
        "generation": generation,
        "published_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": settings,
        "tables": {t: files.get(t, []) for t in TABLES},
        "sources": sources,
    }
    _swap_manifest(dataset, manifest)
    _remove_superseded(dataset, previous, manifest)
    return manifest


def _swap_manifest(dataset: Path, manifest: dict[str, Any]) -> None:
    tmp = dataset / f".{MANIFEST}.tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(manifest, out, indent=1, sort_keys=True)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, dataset / MANIFEST)
    dir_fd = os.open(dataset, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _remove_superseded(
    dataset: Path, previous: dict[str, Any] | None, manifest: dict[str, Any]
) -> None:
    live = {f for fs in manifest["tables"].values() for f in fs}
    for table in TABLES:
        root = dataset / table
        if not root.is_dir():
            continue
        for part in root.rglob("*.parquet"):
            if str(part.relative_to(dataset)) not in live:
                part.unlink(missing_ok=True)
