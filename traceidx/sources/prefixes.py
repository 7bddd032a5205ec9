"""Prefixes: what a source's first bytes and first records fingerprint to, so that a build can
tell a file that grew from one that was rewritten, and recognise a file that moved."""

from __future__ import annotations

from collections.abc import Collection

from traceidx.sources import folder, rowsource
from traceidx.sources.discover import framing_of
from traceidx.sources.document import frame_document
from traceidx.sources.frame import (
    DEFAULT_MAX_RECORD_BYTES,
    FINGERPRINT_ALGORITHM,
    FINGERPRINTS,
    Framer,
)
from traceidx.sources.records import SourceKeys
from traceidx.sources.sourceio import HEAD_BYTES, StreamStats, logical_chunks, open_regular


def head_digest(head: bytes) -> str:
    """The fingerprint (`frame.FINGERPRINT_ALGORITHM`) of a file's first bytes (at most
    HEAD_BYTES of them). A head stored under another algorithm never matches: the source is
    then re-read from its first byte, which is always correct."""
    return FINGERPRINTS[FINGERPRINT_ALGORITHM](head[:HEAD_BYTES])


def head_fingerprint(locator: str, size: int) -> str:
    """`head_digest` of the file's first min(HEAD_BYTES, `size`) bytes, read from disk."""
    with open_regular(locator) as stream:
        return head_digest(stream.read(min(HEAD_BYTES, size)))


def prefix_digest(locator: str, count: int, algorithm: str) -> str | None:
    """The digest of the first `count` record fingerprints of a file under a fingerprint
    algorithm (`SourceKeys.digests`); None if the file holds fewer records or cannot be
    read."""
    return prefix_digests(locator, (count,), algorithm).get(count)


def prefix_digests(locator: str, counts: Collection[int], algorithm: str) -> dict[int, str]:
    """`prefix_digest` at each of `counts` the file reaches, read once (up to the largest);
    none if it cannot be read."""
    if not counts:
        return {}
    keys, framer = SourceKeys(), Framer(algorithm=algorithm)
    most = max(counts)
    if folder.is_folder(locator):
        try:
            for record in folder.records(locator, DEFAULT_MAX_RECORD_BYTES, algorithm):
                keys.add(None, record.line.fingerprint.encode("ascii"))
                if len(keys) == most:
                    break
        except OSError:
            return {}
        return keys.digests(counts)[1]
    where = rowsource.parse(locator)
    if where is not None and where.session is not None:
        hashed = FINGERPRINTS[algorithm]
        try:
            for row in rowsource.lines(locator):
                keys.add(None, hashed(row).encode("ascii"))
                if len(keys) == most:
                    break
        except OSError:
            return {}
        return keys.digests(counts)[1]
    try:
        with open_regular(locator) as stream:
            if framing_of(locator) == "document":  # its records are its elements
                data = b"".join(logical_chunks(stream, StreamStats()))
                for part in frame_document(data, DEFAULT_MAX_RECORD_BYTES, algorithm):
                    keys.add(None, part.line.fingerprint.encode("ascii"))
                return keys.digests([c for c in counts if c <= len(keys)])[1]
            for chunk in logical_chunks(stream, StreamStats()):
                for line in framer.feed(chunk):
                    keys.add(None, line.fingerprint.encode("ascii"))
                    if len(keys) == most:
                        return keys.digests(counts)[1]
    except OSError:
        return {}
    return keys.digests(counts)[1]
