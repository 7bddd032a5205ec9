"""Sync decisions: what a build does with each source, from its stored state and a stat.

The rules (after the Source/Record change rules of the contract):

* **unchanged** — the stored entry has the file's current size and mtime (ns) and its last
  build did not fail: the file is not opened; its published facts stay as they are.
* **new / appended / rewritten / retried** — anything else is re-projected from its first
  byte, and the source's previous rows are replaced as a whole. Ids are functions of the
  evidence, so lines that did not change keep their ids. The label only reports what
  happened: *appended* when the file grew and still starts with the bytes it started with
  (the first 64 KiB, or all of it if shorter, hashed as ``head``); *rewritten* when it
  shrank or its start changed; *retried* when the last build could not read it (a source
  that had been indexed before keeps the facts it had, flagged ``failed`` with the reason,
  until it is read again). An
  unterminated last line is never a Record: it waits for its newline. An *appended* long
  source with a valid checkpoint is the exception: it resumes where its reading stood and
  only its unsettled rows are replaced (traceidx.checkpoint); the result is the same. A
  document source (traceidx.document: a JSON file its runtime rewrites whole) has no
  checkpoint: whatever changed, it is read whole again.
* **missing** — a source in the dataset whose file is gone keeps its facts (runtimes delete
  old transcripts; the dataset is the user's history) and is marked ``missing`` until
  ``traceidx prune`` removes it, unless it **moved**: a file that vanished is superseded by a
  file of this build that supports the same Session and whose first records have exactly the
  vanished file's record fingerprints (Codex moving a rollout into ``archived_sessions``, a
  user moving a folder). Then only the live file's facts remain. A vanished file indexed
  under an older fingerprint algorithm (its entry names it) is compared under that one
  (`prefix_digest`).
* **repaired** — a source whose facts lived in a damaged or missing part
  (traceidx.dataset.check_parts) is re-projected from its first byte, whatever its file did;
  if its file is gone, its facts are lost and reported by name.
* **rechecked** — a copy of another source's records (traceidx.copies) whose original
  changed, vanished or left the dataset is read again from its first byte, so that it is
  counted again if it no longer is a copy.
* **superseded** — discovery reports files whose facts another file holds (older dsh log
  generations, a compressed copy beside a plain rollout); if such a file was in the dataset,
  its facts are removed.

A session of a database (traceidx.rowsource) is decided the same way, its stamp (rows,
latest change) standing for a file's size and mtime; a changed session is *rewritten*
(re-projected whole: rows are updated in place, so there is no appended prefix to keep).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal, get_args

from traceidx import rowsource
from traceidx.discover import framing_of
from traceidx.document import frame_document
from traceidx.frame import DEFAULT_MAX_RECORD_BYTES, FINGERPRINT_ALGORITHM, FINGERPRINTS, Framer
from traceidx.manifest import SourceEntry
from traceidx.records import SourceKeys
from traceidx.sourceio import HEAD_BYTES, StreamStats, logical_chunks, open_regular, stat_of

Action = Literal[
    "unchanged",
    "new",
    "appended",
    "rewritten",
    "retried",
    "repaired",
    "rechecked",
    "missing",
    "unreadable",
]


#: the actions that read the source (every one but these two)
_READ = frozenset(get_args(Action)) - {"unchanged", "missing"}


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with one locator, and the origin its source row names."""

    locator: str
    action: Action
    size: int = 0
    origin: str | None = None

    @property
    def ingest(self) -> bool:
        return self.action in _READ


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


def decide(
    locator: str, entry: SourceEntry | None, rebuild: bool, listed: tuple[int, int] | None = None
) -> Decision:
    """The action for one locator given its stored manifest entry (and its size and
    modification time if a listing gave them: objects on remote storage are not asked one by
    one)."""
    where = rowsource.parse(locator)
    session = where is not None and where.session is not None
    try:
        if listed is not None:
            size, mtime_ns = listed
        else:
            size, mtime_ns = rowsource.stamp(locator) if session else stat_of(locator)
    except FileNotFoundError:
        return Decision(locator, "missing")
    except OSError:
        return Decision(locator, "unreadable")  # ingest reports why
    if entry is None or rebuild:
        return Decision(locator, "new", size)
    if entry.state == "failed" or entry.failed:
        return Decision(locator, "retried", size)
    if entry.size == size and entry.mtime_ns == mtime_ns:
        return Decision(locator, "unchanged", size)
    if session:
        return Decision(locator, "rewritten", size)  # rows change in place: read it whole
    old_size = entry.size
    if size < old_size:
        return Decision(locator, "rewritten", size)  # it shrank
    try:
        same_head = head_fingerprint(locator, old_size) == entry.head
    except OSError:
        return Decision(locator, "unreadable")  # ingest reports why
    if same_head:
        return Decision(locator, "appended", size)
    return Decision(locator, "rewritten", size)  # its first bytes changed
