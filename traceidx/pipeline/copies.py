"""Copies: the same trace file collected twice is recognised by its record fingerprints and
counted once.

A source is a *copy* of another when both support the same Session and its record
fingerprints are the other's, all of them (the same file under another origin or folder) or
the first of them (a backup taken earlier: a prefix). The rule, over the sources of a Session
in the dataset after a build:

* the longer source wins: a source is a copy of a source with more records that holds its
  records as a prefix; between equal copies, the one counted before this build (else the
  first by locator) stays the original;
* a copy keeps its own source row (with its origin, and `duplicate_of` naming the original)
  but publishes no records, sessions, loops or items: every count and token total counts the
  original's only;
* a copy whose original changes or leaves the dataset is read again (``rechecked``), and
  counts again if it no longer is a copy; one whose original's file is gone stays a copy
  (the original's facts stay until ``traceidx prune``).

Prefixes are compared by the digest of the first N record fingerprints (`prefixes.prefix_digests`):
from the longer source's own digests when the build read it with that count in view, else read
from its file, once for every count of its Session's sources (a longer source whose file is
gone holds only the copies found before).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from pathlib import Path

from traceidx.domain.model import Source
from traceidx.pipeline.staging import Stage, fine_bucket, fine_order, spool
from traceidx.pipeline.sync import Decision
from traceidx.sources.frame import FINGERPRINT_ALGORITHM
from traceidx.sources.prefixes import prefix_digests
from traceidx.store.manifest import SourceEntry
from traceidx.tables.encode import encode_rows

#: the digest of a source's first N record fingerprints (None when it cannot be known), given
#: every count its group may ask for (a file is read once for all of them)
PrefixDigest = Callable[[str, int, Collection[int]], str | None]


def recheck_copies(decisions: list[Decision], known: dict[str, SourceEntry]) -> list[Decision]:
    """The decisions with every unchanged copy whose original changed or left the dataset
    read again (an original whose file is gone keeps its facts, and its copies stay copies)."""
    action: dict[str, str] = {d.locator: d.action for d in decisions}
    out = []
    for d in decisions:
        entry = known.get(d.locator)
        host = entry.duplicate_of if entry is not None else None
        kept = host is None or action.get(host) in ("unchanged", "missing")
        if d.action == "unchanged" and not kept:
            d = dataclasses.replace(d, action="rechecked")
        out.append(d)
    return out


def _comparable(entry: SourceEntry) -> bool:
    return (
        entry.state == "indexed"
        and entry.session_id is not None
        and entry.digest is not None
        and entry.fingerprint is None  # indexed under the current fingerprint algorithm
    )


def originals(
    entries: dict[str, SourceEntry],
    sessions: set[int],
    counted_before: set[str],
    prefix: PrefixDigest,
) -> dict[str, str | None]:
    """For every comparable source of `sessions`: the original it is a copy of, or None."""
    members: dict[int, list[str]] = {}
    for locator, entry in entries.items():
        if _comparable(entry) and entry.session_id in sessions:
            members.setdefault(entry.session_id, []).append(locator)
    out: dict[str, str | None] = {}
    for group in members.values():
        group.sort(key=lambda loc: (-entries[loc].records, loc not in counted_before, loc))
        counts = {entries[loc].records for loc in group}
        winners: list[str] = []
        for locator in group:
            entry = entries[locator]
            host = next((w for w in winners if _holds(entries, w, entry, prefix, counts)), None)
            out[locator] = host
            if host is None:
                winners.append(locator)
    return out


def _holds(
    entries: dict[str, SourceEntry],
    host: str,
    entry: SourceEntry,
    prefix: PrefixDigest,
    counts: Collection[int],
) -> bool:
    """Whether source `host`'s records start with all of `entry`'s."""
    longer = entries[host]
    if longer.records == entry.records:
        return longer.digest == entry.digest
    if longer.missing:  # its file is gone: only what was found before
        return entry.duplicate_of == host
    return prefix(host, entry.records, counts) == entry.digest


def prefix_reader(digests: dict[str, dict[int, str]]) -> PrefixDigest:
    """Prefix digests from a build's own (by locator and count), else from the file, read
    once for every count of its group."""
    read: dict[str, dict[int, str]] = {}

    def prefix(locator: str, count: int, counts: Collection[int]) -> str | None:
        known = digests.get(locator, {})
        if count in known:
            return known[count]
        if locator not in read:
            read[locator] = prefix_digests(locator, counts, FINGERPRINT_ALGORITHM)
        return read[locator].get(count)

    return prefix


def stage_rows(stage: Stage, copies: dict[str, SourceEntry], hosts: dict[str, int]) -> None:
    """Stage the source row of each copy (locator -> entry; `hosts`: the original's source id
    by copy), in its Session's partition group, ordered as spooled rows are."""
    groups: dict[str, list[tuple[int, int, Source]]] = {}
    for locator, entry in sorted(copies.items()):
        assert entry.partition is not None and entry.session_id is not None
        assert entry.source_id is not None and entry.runtime is not None
        fine = fine_bucket(entry.session_id)
        row = Source(
            entry.source_id,
            locator,
            entry.runtime,
            "zstd" if entry.compression == "zstd" else "none",
            entry.origin,
            hosts[locator],
        )
        group = entry.partition.rsplit("/", 1)[0]
        groups.setdefault(group, []).append((fine_order(fine), fine, row))
    for group, rows in sorted(groups.items()):
        rows.sort(key=lambda r: r[:2])
        segments: list[tuple[int, int]] = []
        for _, fine, _ in rows:
            if segments and segments[-1][0] == fine:
                segments[-1] = (fine, segments[-1][1] + 1)
            else:
                segments.append((fine, 1))
        data = encode_rows({"sources": [row for _, _, row in rows]})["sources"]
        path = Path(stage.folder) / f"copies-{group.replace('/', '-')}-sources.arrow"
        for key, spooled in spool(path, "sources", [(group, data, tuple(segments))]):
            stage.add(key, "sources", spooled)
