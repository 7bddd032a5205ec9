"""The manifest's typed shape: a generation's parts, bucket layout and per-source sync state.

``manifest.json`` is the one file that makes a generation current (traceidx.store.dataset swaps it
in with one rename). It holds:

* ``parts``: partition key (``runtime/month/bucket``) -> table -> the part file, with the
  size and xxh3-64 checksum it had when it was written, so that damage on disk is found
  (readers check sizes; ``status`` and ``build`` check checksums);
* ``buckets``: each group's bucket count (``runtime/month`` -> power of two);
* ``previous``: the previous generation's files, kept on disk until the next publication so
  that a reader holding the old manifest can finish;
* ``sources``: locator -> what the last build knew of that file (`SourceEntry`);
* ``settings``: the settings that shape facts; a build with others re-projects everything.

Format 2 (parts as bare paths, sources as untyped objects) is read and upgraded: its parts
carry no size or checksum until they are rewritten.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

import msgspec

FORMAT_VERSION = 3
#: older formats this version reads (and upgrades on its next publication)
READABLE_FORMATS = (2, FORMAT_VERSION)
#: a group's bucket count in a format-2 manifest written before bucket counts were kept
LEGACY_BUCKETS = 8

#: what the last build made of a source: its facts published, deliberately not recorded (not
#: a trace, empty, superseded…), or not readable (why, in `reason`)
SourceState = Literal["indexed", "skipped", "failed"]


class PartFile(msgspec.Struct, frozen=True, omit_defaults=True):
    """One published Parquet file: its dataset-relative path, size and content checksum
    (None for parts published before checksums were kept)."""

    path: str
    size: int | None = None
    checksum: str | None = None


class FactSettings(msgspec.Struct, frozen=True):
    """The settings that shape published facts."""

    text_limit: int
    max_record_bytes: int
    fingerprint: str
    ids: str
    token_estimator: str
    #: a digest of the published tables' Arrow schemas: parts of another schema cannot be
    #: read beside new ones, so a build of another schema re-projects every source
    schema: str = ""
    #: secrets in published text replaced (``build --redact``): a build that differs re-projects
    redact: bool = False
    #: each adapter's projection version (runtime -> `Adapter.version`): a build by adapters
    #: that project otherwise re-projects every source
    adapters: dict[str, int] = msgspec.field(default_factory=dict)


class SourceEntry(msgspec.Struct, omit_defaults=True, kw_only=True):
    """What the last build knew of one source file (`state`: indexed, skipped or failed)."""

    state: SourceState
    runtime: str | None = None
    size: int = 0
    mtime_ns: int = 0
    indexed_bytes: int = 0
    tail_bytes: int = 0
    compression: str | None = None
    reason: str | None = None
    malformed: int = 0
    oversized: int = 0
    joined: int = 0
    unknown_types: dict[str, int] = {}
    warnings: list[str] = []
    torn_bytes: int = 0
    #: the fingerprint of the file's first bytes (sync's appended-or-rewritten test)
    head: str | None = None
    source_id: int | None = None
    session_id: int | None = None
    #: the partition key its rows live in
    partition: str | None = None
    records: int = 0
    loops: int = 0
    items: int = 0
    #: the digest of its record fingerprints (move detection)
    digest: str | None = None
    #: where its reading stood, to resume an append (dataset-relative)
    checkpoint: str | None = None
    #: the file is gone; its facts stay until `traceidx prune`
    missing: bool = False
    #: the last build could not read it (why); its facts as last published stay
    failed: str | None = None
    #: the fingerprint algorithm of a missing source indexed under an older one
    fingerprint: str | None = None
    #: the machine or person the file came from, as first indexed (``build --origin``)
    origin: str | None = None
    #: the locator of the source whose records hold this file's: this one is a copy (the same
    #: records, or a prefix of them) and publishes only its source row (traceidx.pipeline.copies)
    duplicate_of: str | None = None
    #: secrets replaced in its published text, by type (``build --redact``)
    redacted: dict[str, int] = {}
    #: a session of a database: the state of the database's files (sizes and modification
    #: times of the database and its WAL) it was last read or listed at (traceidx.sources.rowsource)
    database: str | None = None

    def failed_with(self, reason: str) -> SourceEntry:
        """This file's entry after a failure: the state of the file read, why, and no facts."""
        return SourceEntry(
            state="failed",
            reason=reason,
            runtime=self.runtime,
            size=self.size,
            mtime_ns=self.mtime_ns,
            indexed_bytes=self.indexed_bytes,
            tail_bytes=self.tail_bytes,
            compression=self.compression,
            origin=self.origin,
        )

    @property
    def live(self) -> bool:
        """Its rows are published (a copy's: its source row)."""
        return self.state == "indexed" and self.partition is not None

    @property
    def counted(self) -> bool:
        """Its facts count: indexed, and not a copy of another source's."""
        return self.state == "indexed" and self.duplicate_of is None

    @property
    def status(self) -> str:
        """Its state as `traceidx status` counts it: an indexed source whose file is gone is
        missing, one the last build could not read failed (its previous facts kept), one whose
        records another source holds a copy (counted once); else its `state`."""
        if self.state == "indexed" and self.missing:
            return "missing"
        if self.state == "indexed" and self.failed:
            return "failed (previous facts kept)"
        if self.state == "indexed" and self.duplicate_of:
            return "copy (counted once)"
        return self.state


class Published(msgspec.Struct, kw_only=True):
    """One generation of a dataset as the readers of its tables need it: its parts (a
    manifest decoded as this skips its source entries unread)."""

    format_version: int = FORMAT_VERSION
    generation: int = 0
    published_at: str | None = None
    settings: FactSettings | None = None
    parts: dict[str, dict[str, PartFile]] = {}
    buckets: dict[str, int] = {}
    previous: list[str] = []

    def files(self, table: str) -> list[str]:
        """The live part files of a table, sorted."""
        return sorted(p[table].path for p in self.parts.values() if table in p)

    def tables(self) -> dict[str, list[str]]:
        """The live part files of every table that has any, sorted."""
        out: dict[str, list[str]] = {}
        for tables in self.parts.values():
            for table, part in tables.items():
                out.setdefault(table, []).append(part.path)
        return {table: sorted(out[table]) for table in sorted(out)}

    def part_files(self) -> list[PartFile]:
        """Every live part file, by path."""
        return sorted((f for p in self.parts.values() for f in p.values()), key=lambda f: f.path)

    def layout(self) -> dict[str, int]:
        """The bucket count of each group."""
        return dict(self.buckets)


class Manifest(Published, kw_only=True):
    """One generation of a dataset."""

    sources: dict[str, SourceEntry] = {}

    def source_states(self) -> Counter[tuple[str, str]]:
        """How many sources of each runtime (``-`` when unknown) are in each
        `SourceEntry.status`."""
        return Counter((entry.runtime or "-", entry.status) for entry in self.sources.values())


def decode_published(data: bytes) -> Published:
    """A manifest's parts from its JSON, its source entries skipped (see `decode`)."""
    try:
        current = msgspec.json.decode(data, type=Published)
    except msgspec.DecodeError:
        return decode(data)
    if current.format_version == FORMAT_VERSION and (current.buckets or not current.parts):
        return current
    return decode(data)


def decode(data: bytes) -> Manifest:
    """A manifest from its JSON (format 2 upgraded); raises ValueError for another format."""
    try:  # the current format decodes straight into the Structs
        current = msgspec.json.decode(data, type=Manifest)
    except msgspec.DecodeError:
        pass
    else:
        if current.format_version == FORMAT_VERSION and (current.buckets or not current.parts):
            return current
    raw = msgspec.json.decode(data)
    if not isinstance(raw, dict):
        raise ValueError("not a JSON object")
    version = raw.get("format_version")
    if version not in READABLE_FORMATS:
        raise ValueError(f"dataset format {version} is not one of {READABLE_FORMATS}")
    if version == 2:
        raw = _upgrade(raw)
    if "buckets" not in raw:  # written before bucket counts were kept
        raw["buckets"] = {key.rsplit("/", 1)[0]: LEGACY_BUCKETS for key in raw.get("parts", {})}
    try:
        return msgspec.convert(raw, Manifest)
    except msgspec.ValidationError as exc:
        raise ValueError(str(exc)) from exc


def encode(manifest: Manifest) -> bytes:
    """The manifest as indented JSON (sorted keys, so equal manifests are equal bytes)."""
    return msgspec.json.format(msgspec.json.encode(manifest, order="sorted"), indent=1)


def _upgrade(raw: dict[str, Any]) -> dict[str, Any]:
    """A format-2 manifest in format 3's shape."""
    parts = {
        key: {table: {"path": path} for table, path in tables.items()}
        for key, tables in raw.get("parts", {}).items()
    }
    previous = sorted(f for files in raw.get("previous_tables", {}).values() for f in files)
    return {
        "format_version": FORMAT_VERSION,
        "generation": raw.get("generation", 0),
        "published_at": raw.get("published_at"),
        "settings": raw.get("settings"),
        "parts": parts,
        **({"buckets": raw["buckets"]} if "buckets" in raw else {}),
        "previous": previous,
        "sources": raw.get("sources", {}),
    }
