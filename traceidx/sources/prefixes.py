"""Prefixes: what a source's first records fingerprint to, so that a build can recognise a
file that moved or a copy of another (its first bytes: `sourceio.head_digest`)."""

from __future__ import annotations

from collections.abc import Collection

from traceidx.sources.discover import framing_of
from traceidx.sources.records import SourceKeys
from traceidx.sources.stream import NotASource, SourceStream, Unavailable


def prefix_digest(locator: str, count: int, algorithm: str) -> str | None:
    """The digest of the first `count` record fingerprints of a file under a fingerprint
    algorithm (`SourceKeys.digests`); None if the file holds fewer records or cannot be
    read."""
    return prefix_digests(locator, (count,), algorithm).get(count)


def prefix_digests(locator: str, counts: Collection[int], algorithm: str) -> dict[int, str]:
    """`prefix_digest` at each of `counts` the source reaches, read once (up to the largest);
    none if it cannot be read."""
    if not counts:
        return {}
    keys, most = SourceKeys(), max(counts)
    stream = SourceStream(locator, framing_of(locator), algorithm=algorithm)
    try:
        for batch in stream.batches():
            for line in batch.lines:
                keys.add(None, line.fingerprint.encode("ascii"))
                if len(keys) == most:
                    return keys.digests(counts)[1]
    except (OSError, NotASource, Unavailable):
        return {}
    return keys.digests([c for c in counts if c <= len(keys)])[1]
