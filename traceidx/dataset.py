"""The dataset on disk: lock, manifest, partitions, and the atomic swap of generations.

Layout::

    <dataset>/manifest.json
    <dataset>/<table>/runtime=<r>/month=<YYYY-MM>/part-<generation>-<bucket>.parquet

A source's rows (its source row, records, session, loops, items) all land in the *group* of
its runtime and its session's creation month (``unknown`` when no time is known), and there
in bucket ``session_id % n``, where `n`, the group's bucket count, is a power of two kept in
the manifest (``buckets``): one file per table and partition (group and bucket). A group
starts with one bucket; a build after which a bucket holds more than `PART_RECORDS` records
doubles the group's buckets (bucket ``b`` of ``n`` splits into ``b`` and ``b + n`` of ``2n``)
as often as that helps, up to `MAX_BUCKETS`, and rewrites the group once. A session is never
split, so one huge session stays one bucket. So a small corpus is a few files, and an append
rewrites a part of bounded size however large the group grows. A build writes the parts it
changes under the new generation's names, then writes the manifest to a temporary file,
fsyncs it and renames it over ``manifest.json``; nothing before that rename is visible.
Readers take the file list from the manifest, never from a glob, so they see the old or the
new generation, never a mix. The previous generation's files stay on disk until the next
publication, so a reader that opened the old manifest can finish its queries. Anything else
(staging folders, parts of a build that died) is garbage that the next build removes.
A build holds an exclusive lock on ``<dataset>/.lock`` for its whole run.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from traceidx.model import TABLES

FORMAT_VERSION = 2
#: a group's buckets double once one holds more than this many records...
PART_RECORDS = 100_000
#: ...up to this many buckets
MAX_BUCKETS = 64
#: buckets of every group of a manifest written before bucket counts were kept
LEGACY_BUCKETS = 8
MANIFEST = "manifest.json"
STAGING_PREFIX = ".staging-"


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
            raise DatasetLocked(
                f"{dataset} is being built by another traceidx process; wait for it to finish"
            ) from exc
        yield
    finally:
        os.close(fd)


def default_dataset() -> Path:
    """`$TRACEIDX_DATASET`, else `$XDG_DATA_HOME/traceidx`, else ~/.local/share/traceidx."""
    env = os.environ.get("TRACEIDX_DATASET")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "traceidx"


def read_manifest(dataset: Path) -> dict[str, Any] | None:
    """The current manifest, or None when the dataset has never been published."""
    path = dataset / MANIFEST
    try:
        data = msgspec.json.decode(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError) as exc:
        raise DatasetError(f"{path}: unreadable manifest ({exc})") from exc
    if data.get("format_version") != FORMAT_VERSION:
        raise DatasetError(
            f"{path}: dataset format {data.get('format_version')} is not {FORMAT_VERSION}; "
            "build into a new dataset directory (or delete this one) and rebuild"
        )
    return dict(data)


@dataclass(frozen=True, slots=True, order=True)
class Partition:
    """Where one source's rows go."""

    runtime: str
    month: str
    bucket: int

    @property
    def key(self) -> str:
        return f"{self.runtime}/{self.month}/{self.bucket}"

    @property
    def group(self) -> str:
        return f"{self.runtime}/{self.month}"

    @classmethod
    def from_key(cls, key: str) -> Partition:
        runtime, month, bucket = key.split("/")
        return cls(runtime, month, int(bucket))

    def path(self, table: str, generation: int) -> str:
        return (
            f"{table}/runtime={self.runtime}/month={self.month}/"
            f"part-{generation:06d}-{self.bucket}.parquet"
        )


def partition_of(
    runtime: str, created_at_ms: int | None, session_id: int, layout: dict[str, int]
) -> Partition:
    """The partition of a source from its session's creation time, in a `layout` (group ->
    bucket count; a group it lacks has one bucket)."""
    month = "unknown"
    if created_at_ms is not None:
        month = datetime.fromtimestamp(created_at_ms / 1000, UTC).strftime("%Y-%m")
    return Partition(runtime, month, session_id % layout.get(f"{runtime}/{month}", 1))


def layout_of(manifest: dict[str, Any]) -> dict[str, int]:
    """The bucket count of each group of a manifest."""
    if "buckets" in manifest:
        return {group: int(n) for group, n in manifest["buckets"].items()}
    return {Partition.from_key(key).group: LEGACY_BUCKETS for key in manifest["parts"]}


def empty_manifest() -> dict[str, Any]:
    """The state of a dataset that was never published."""
    return {
        "format_version": FORMAT_VERSION,
        "generation": 0,
        "settings": None,
        "parts": {},
        "buckets": {},
        "tables": {t: [] for t in TABLES},
        "previous_tables": {t: [] for t in TABLES},
        "sources": {},
    }


def new_manifest(
    previous: dict[str, Any],
    generation: int,
    parts: dict[str, dict[str, str]],
    sources: dict[str, dict[str, Any]],
    settings: dict[str, Any],
    layout: dict[str, int],
) -> dict[str, Any]:
    """The manifest of a new generation (`parts`: partition key -> table -> live file;
    `layout`: group -> bucket count)."""
    tables = {t: sorted(p[t] for p in parts.values() if t in p) for t in TABLES}
    return {
        "format_version": FORMAT_VERSION,
        "generation": generation,
        "published_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": settings,
        "parts": {k: parts[k] for k in sorted(parts)},
        "buckets": {g: layout[g] for g in sorted(layout)},
        "tables": tables,
        "previous_tables": previous["tables"],
        "sources": {k: sources[k] for k in sorted(sources)},
    }


def swap_manifest(dataset: Path, manifest: dict[str, Any]) -> None:
    """Make `manifest` current with one atomic rename (after fsync of the file)."""
    tmp = dataset / f".{MANIFEST}.tmp"
    with open(tmp, "wb") as out:
        out.write(msgspec.json.format(msgspec.json.encode(manifest, order="sorted"), indent=1))
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, dataset / MANIFEST)
    dir_fd = os.open(dataset, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def collect_garbage(dataset: Path, manifest: dict[str, Any] | None) -> int:
    """Remove staging folders, parts neither live nor previous and checkpoints no source
    names; returns files removed."""
    keep: set[str] = set()
    if manifest is not None:
        for key in ("tables", "previous_tables"):
            keep.update(f for files in manifest.get(key, {}).values() for f in files)
        keep.update(e["checkpoint"] for e in manifest["sources"].values() if "checkpoint" in e)
    removed = 0
    for entry in dataset.glob(f"{STAGING_PREFIX}*"):
        shutil.rmtree(entry, ignore_errors=True)
        removed += 1
    (dataset / f".{MANIFEST}.tmp").unlink(missing_ok=True)
    checkpoints = dataset / "checkpoints"
    if checkpoints.is_dir():
        for path in checkpoints.iterdir():
            if str(path.relative_to(dataset)) not in keep:
                path.unlink(missing_ok=True)
                removed += 1
    for table in TABLES:
        root = dataset / table
        if not root.is_dir():
            continue
        for part in root.rglob("*.parquet"):
            if str(part.relative_to(dataset)) not in keep:
                part.unlink(missing_ok=True)
                removed += 1
        for folder in sorted(root.rglob("*"), reverse=True):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
    return removed
