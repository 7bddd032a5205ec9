"""The dataset on disk: lock, manifest, partitions, and the atomic swap of generations.

Layout (the manifest's shape is traceidx.store.manifest)::

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

A dataset's folder holds nothing but what traceidx writes (`own`): the manifest, the lock, the
table folders, ``checkpoints``, staging folders, and the summary and rollup the read side keeps
beside the manifest. A build takes a new or empty folder, or one that holds a dataset (a
traceidx manifest, or only such entries: a first build that died); any other folder is refused
before anything in it changes (`refuse_foreign`), so that a mistyped ``--dataset`` never
changes a person's files.

A dataset is private: it holds copies of prompts, code, tool output and whatever secrets those
contained. While a build holds the lock, the process's umask is 0o077, so every folder it
creates is 0o700 and every file 0o600 (parts, manifest, spool, checkpoints, the lock), and
paths of a dataset created with wider modes are tightened (`tighten`). Damage is found by
`check_parts`: each part's size and Parquet footer (cheap, on every read) and its checksum
(``status`` and ``build``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import msgspec
import xxhash

from traceidx.domain.model import TABLES
from traceidx.errors import DatasetError, DatasetLocked
from traceidx.store import manifest as manifests
from traceidx.store.manifest import (
    FORMAT_VERSION,
    FactSettings,
    Manifest,
    PartFile,
    Published,
    SourceEntry,
)

_M = TypeVar("_M", bound=Published)

#: a group's buckets double once one holds more than this many records...
PART_RECORDS = 100_000
#: ...up to this many buckets
MAX_BUCKETS = 64
MANIFEST = "manifest.json"
STAGING_PREFIX = ".staging-"
LOCK = ".lock"
CHECKPOINTS = "checkpoints"
#: what the read side keeps beside the manifest (traceidx.analysis.summary and .rollup), each
#: written through a partial file ``.<name>.<pid>.partial``
BESIDE_MANIFEST = ("summary.json", "usage-rollup.json")
#: the top-level names of a dataset's own entries (on object storage ``manifests`` holds the
#: manifests of its generations)
OWN_NAMES = frozenset(
    {MANIFEST, f".{MANIFEST}.tmp", LOCK, CHECKPOINTS, "manifests", *TABLES, *BESIDE_MANIFEST}
)
_OWN_PREFIXES = (STAGING_PREFIX, *(f".{name}." for name in BESIDE_MANIFEST))


#: what a dataset's folders and files may be: their owner's alone
PRIVATE_FOLDER, PRIVATE_FILE = 0o700, 0o600
_UMASK = 0o077


def own(name: str) -> bool:
    """Whether a top-level name of a dataset's folder (or prefix) is one traceidx writes."""
    return name in OWN_NAMES or name.startswith(_OWN_PREFIXES)


class _ManifestProbe(msgspec.Struct):
    """What makes a JSON file a traceidx manifest (of any format)."""

    format_version: int
    generation: int


def _is_manifest(path: Path) -> bool:
    """Whether a file is a traceidx manifest (of any format: one this version cannot read is
    refused as such where it is read)."""
    try:
        msgspec.json.decode(path.read_bytes(), type=_ManifestProbe)
    except (OSError, msgspec.DecodeError):
        return False
    return True


def foreign(dataset: Path) -> list[str]:
    """The entries that make a folder no dataset of traceidx's, sorted (folders with a
    trailing ``/``): none for a folder that does not exist, is empty, holds a traceidx
    manifest, or holds only a dataset's own entries."""
    try:
        entries = list(os.scandir(dataset))
    except (FileNotFoundError, NotADirectoryError):
        return []
    if any(e.name == MANIFEST for e in entries) and _is_manifest(dataset / MANIFEST):
        return []
    strange = [e for e in entries if not own(e.name) or e.name == MANIFEST]
    return sorted(e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in strange)


def refuse_foreign(dataset: Path | str, found: list[str]) -> None:
    """Refuse a dataset location that holds `found` (what `foreign` lists), in one line."""
    if not found:
        return
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    raise DatasetError(
        f"{dataset}: not a traceidx dataset (it holds {shown}), left as it is; name a new or "
        "empty folder, or an existing dataset, with --dataset"
    )


def check_folder(dataset: Path) -> None:
    """Refuse (DatasetError) a dataset folder that holds anything but a dataset (`foreign`)."""
    refuse_foreign(dataset, foreign(dataset))


@contextmanager
def locked(dataset: Path) -> Iterator[None]:
    """Hold the dataset's exclusive build lock (non-blocking: raises DatasetLocked), with the
    process's umask at 0o077 so that everything the build creates is private; a folder that
    holds anything but a dataset is refused first (`check_folder`), untouched."""
    check_folder(dataset)
    old_umask = os.umask(_UMASK)
    try:
        dataset.mkdir(parents=True, exist_ok=True)
        os.chmod(dataset, PRIVATE_FOLDER)
        fd = os.open(dataset / LOCK, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            os.fchmod(fd, PRIVATE_FILE)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise DatasetLocked(
                    f"{dataset} is being built by another traceidx process; wait for that build "
                    "to finish, then retry"
                ) from exc
            yield
        finally:
            os.close(fd)
    finally:
        os.umask(old_umask)


def _own_paths(dataset: Path) -> Iterator[Path]:
    """The dataset's folder and every path of its own entries (`own`): what traceidx wrote."""
    yield dataset
    for entry in sorted(dataset.iterdir()):
        if own(entry.name):
            yield entry
            if entry.is_dir() and not entry.is_symlink():
                yield from entry.rglob("*")


def exposed(dataset: Path) -> list[Path]:
    """The dataset's paths (itself and its own entries; nothing else a folder holds) that
    group or others may access."""
    out = []
    try:
        paths = list(_own_paths(dataset))
    except FileNotFoundError:
        return []
    for path in paths:
        try:
            mode = path.lstat().st_mode
        except OSError:
            continue
        if mode & 0o077 and not stat.S_ISLNK(mode):
            out.append(path)
    return out


def tighten(dataset: Path) -> int:
    """Make every path of the dataset its owner's alone; how many were wider."""
    paths = exposed(dataset)
    for path in paths:
        private = PRIVATE_FOLDER if path.is_dir() else PRIVATE_FILE
        os.chmod(path, stat.S_IMODE(path.lstat().st_mode) & private)
    return len(paths)


#: what repairs a damaged part (the next step a reader's or `status`'s report names)
REPAIR = "`traceidx build` re-projects the sources whose facts it held"


@dataclass(frozen=True, slots=True)
class Damage:
    """A live part that is missing or not what the manifest recorded."""

    key: str  # its partition
    table: str
    path: str  # dataset-relative
    what: str

    def line(self, dataset: Path | str, next_step: str = REPAIR) -> str:
        """One line: where (in a local or a remote dataset), what, and the next step."""
        where = f"{str(dataset).rstrip('/')}/{self.path}"
        return f"{where}: {self.what}; {next_step}"


_FOOTER = b"PAR1"


def check_parts(dataset: Path, manifest: Published, *, checksums: bool) -> list[Damage]:
    """The live parts that are missing, of another size, without a Parquet footer or (with
    `checksums`) of another checksum than the manifest recorded."""
    out = []
    for key in sorted(manifest.parts):
        for table, part in sorted(manifest.parts[key].items()):
            what = _check(dataset / part.path, part, checksums)
            if what is not None:
                out.append(Damage(key, table, part.path, what))
    return out


def _check(path: Path, part: PartFile, checksums: bool) -> str | None:
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if part.size is not None and size != part.size:
                return f"damaged part: {size:,} bytes where {part.size:,} were written"
            if size < 2 * len(_FOOTER):
                return "damaged part: too short for a Parquet file"
            stream.seek(size - len(_FOOTER))
            if stream.read(len(_FOOTER)) != _FOOTER:
                return "damaged part: no Parquet footer"
    except FileNotFoundError:
        return "missing part"
    except OSError as exc:
        return f"unreadable part ({exc.strerror or exc})"
    if checksums and part.checksum is not None and file_checksum(path) != part.checksum:
        return "damaged part: its checksum differs from the one recorded when it was written"
    return None


def _manifest_bytes(dataset: Path) -> bytes | None:
    path = dataset / MANIFEST
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DatasetError(f"{path}: unreadable manifest ({exc.strerror or exc})") from exc


_ELSEWHERE = "a new dataset directory (or delete this one)"


def read_manifest(dataset: Path) -> Manifest | None:
    """The current manifest, or None when the dataset has never been published."""
    data = _manifest_bytes(dataset)
    return None if data is None else decode_manifest(data, dataset / MANIFEST, _ELSEWHERE)


def read_published(dataset: Path) -> Published | None:
    """The current manifest's parts (its sources left unread), or None when the dataset has
    never been published: what a reader of the tables needs."""
    data = _manifest_bytes(dataset)
    if data is None:
        return None
    return _decoded(manifests.decode_published, data, dataset / MANIFEST, _ELSEWHERE)


def decode_manifest(data: bytes, where: object, elsewhere: str) -> Manifest:
    """A manifest read from `where`; DatasetError (build into `elsewhere`) if it is of
    another format."""
    return _decoded(manifests.decode, data, where, elsewhere)


def _decoded(decode: Callable[[bytes], _M], data: bytes, where: object, elsewhere: str) -> _M:
    try:
        return decode(data)
    except ValueError as exc:
        raise DatasetError(
            f"{where}: not a manifest this traceidx reads ({exc}); build into {elsewhere} "
            "and rebuild"
        ) from exc


#: the checksum recorded for each part (`PartFile.checksum`)
CHECKSUM = "xxh3_64"
_CHECKSUM_CHUNK = 1 << 20


def file_checksum(path: Path) -> str:
    """The xxh3-64 digest of a file's bytes (hex)."""
    digest = xxhash.xxh3_64()
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHECKSUM_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def part_file(dataset: Path, relative: str) -> PartFile:
    """A part just written, with its size and checksum."""
    path = dataset / relative
    return PartFile(relative, path.stat().st_size, file_checksum(path))


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

    def path(self, table: str, generation: int, tag: str = "") -> str:
        return (
            f"{table}/runtime={self.runtime}/month={self.month}/"
            f"part-{generation:06d}-{self.bucket}{tag}.parquet"
        )


def partition_of(
    runtime: str, created_at_ms: int | None, session_id: int, layout: dict[str, int]
) -> Partition:
    """The partition of a source from its session's creation time, in a `layout` (group ->
    bucket count; a group it lacks has one bucket)."""
    month = "unknown"
    if created_at_ms is not None:
        # a time a trace states may lie past what a datetime holds (years 1 to 9999)
        with suppress(ValueError, OverflowError, OSError):
            month = datetime.fromtimestamp(created_at_ms / 1000, UTC).strftime("%Y-%m")
    return Partition(runtime, month, session_id % layout.get(f"{runtime}/{month}", 1))


def new_manifest(
    previous: Manifest,
    generation: int,
    parts: dict[str, dict[str, PartFile]],
    sources: dict[str, SourceEntry],
    settings: FactSettings,
    layout: dict[str, int],
) -> Manifest:
    """The manifest of a new generation (`parts`: partition key -> table -> live file;
    `layout`: group -> bucket count)."""
    return Manifest(
        format_version=FORMAT_VERSION,
        generation=generation,
        published_at=datetime.now(UTC).isoformat(timespec="seconds"),
        settings=settings,
        parts={k: parts[k] for k in sorted(parts)},
        buckets={g: layout[g] for g in sorted(layout)},
        previous=[f.path for f in previous.part_files()],
        sources={k: sources[k] for k in sorted(sources)},
    )


def swap_manifest(dataset: Path, manifest: Manifest) -> None:
    """Make `manifest` current with one atomic rename (after fsync of the file)."""
    tmp = dataset / f".{MANIFEST}.tmp"
    with open(tmp, "wb") as out:
        out.write(manifests.encode(manifest))
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, dataset / MANIFEST)
    dir_fd = os.open(dataset, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def collect_garbage(dataset: Path, manifest: Manifest | None) -> int:
    """Remove staging folders, parts neither live nor previous and checkpoints no source
    names; returns files removed."""
    keep: set[str] = set()
    if manifest is not None:
        keep.update(f.path for f in manifest.part_files())
        keep.update(manifest.previous)
        keep.update(e.checkpoint for e in manifest.sources.values() if e.checkpoint)
    removed = 0
    for entry in dataset.glob(f"{STAGING_PREFIX}*"):
        shutil.rmtree(entry, ignore_errors=True)
        removed += 1
    (dataset / f".{MANIFEST}.tmp").unlink(missing_ok=True)
    checkpoints = dataset / CHECKPOINTS
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
