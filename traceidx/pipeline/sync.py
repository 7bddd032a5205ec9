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
  only its unsettled rows are replaced (traceidx.projection.checkpoint); the result is the same. A
  document source (traceidx.sources.document: a JSON file its runtime rewrites whole) has no
  checkpoint: whatever changed, it is read whole again.
* **missing** — a source in the dataset whose file is gone keeps its facts (runtimes delete
  old transcripts; the dataset is the user's history) and is marked ``missing`` until
  ``traceidx prune`` removes it, unless it **moved**: a file that vanished is superseded by a
  file of this build that supports the same Session and whose first records have exactly the
  vanished file's record fingerprints (Codex moving a rollout into ``archived_sessions``, a
  user moving a folder). Then only the live file's facts remain. A vanished file indexed
  under an older fingerprint algorithm (its entry names it) is compared under that one
  (`traceidx.sources.prefixes`).
* **repaired** — a source whose facts lived in a damaged or missing part
  (traceidx.store.dataset.check_parts) is re-projected from its first byte, whatever its file did;
  if its file is gone, its facts are lost and reported by name.
* **rechecked** — a copy of another source's records (traceidx.pipeline.copies) whose original
  changed, vanished or left the dataset is read again from its first byte, so that it is
  counted again if it no longer is a copy.
* **superseded** — discovery reports files whose facts another file holds (older dsh log
  generations, a compressed copy beside a plain rollout); if such a file was in the dataset,
  its facts are removed.

A session of a database (traceidx.sources.rowsource) is decided the same way, its stamp (rows,
latest change) standing for a file's size and mtime; a changed session is *rewritten*
(re-projected whole: rows are updated in place, so there is no appended prefix to keep). So
is a session folder (traceidx.sources.folder), its stamp being its members' total size and
latest modification time.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal, get_args

from traceidx.sources import folder, rowsource
from traceidx.sources.discover import framing_of
from traceidx.sources.sourceio import head_fingerprint, stat_of
from traceidx.sources.stream import Framing
from traceidx.store.manifest import SourceEntry

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

#: what a build report says became of a source: its sync action, or what planning and the
#: workers found instead (a file superseded by another, a runtime this build does not read,
#: facts lost with a damaged part, a vanished file whose facts a live one holds)
ReportAction = Action | Literal["superseded", "outside", "lost", "moved"]


#: the actions that read the source (every one but these two)
_READ = frozenset(get_args(Action)) - {"unchanged", "missing"}


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with one locator, and the origin its source row names (small and picklable:
    the workers are handed decisions, traceidx.pipeline.worker)."""

    locator: str
    action: Action
    size: int = 0
    origin: str | None = None
    #: how discovery framed it (None: as `traceidx.sources.discover.framing_of` says)
    framing: Framing | None = None
    #: the partition its published rows are in (a resumed source's rows must stay there)
    partition: str | None = None

    @property
    def ingest(self) -> bool:
        return self.action in _READ


def decide(
    locator: str,
    entry: SourceEntry | None,
    rebuild: bool,
    listed: tuple[int, int] | None = None,
    framing: Framing | None = None,
) -> Decision:
    """The action for one locator given its stored manifest entry (and its size and
    modification time if a listing gave them: objects on remote storage are not asked one by
    one), and how it is framed (by default as its locator says)."""
    framing = framing or framing_of(locator)
    decision = _decide(locator, entry, rebuild, listed, framing)
    return dataclasses.replace(decision, framing=framing)


def _decide(
    locator: str,
    entry: SourceEntry | None,
    rebuild: bool,
    listed: tuple[int, int] | None,
    framing: Framing,
) -> Decision:
    where = rowsource.parse(locator) if framing == "rows" else None
    session = where is not None and where.session is not None  # (not the database itself)
    whole = session or framing == "folder"  # re-read whole whenever it changed
    try:
        if listed is not None:
            size, mtime_ns = listed
        elif framing == "folder":
            size, mtime_ns = folder.stamp(locator)
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
    if whole:
        return Decision(locator, "rewritten", size)  # changed in place: read it whole
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
