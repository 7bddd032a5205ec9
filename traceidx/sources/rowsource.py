"""Framing of database sources: a runtime's SQLite database read as one Source per session.

Some runtimes keep every session in one SQLite database whose rows they update in place
(OpenCode: ``opencode.db``, tables ``session``, ``message``, ``part``). A runtime declares the
database's file names and the tables of a session's rows in the registry
(`traceidx.runtimes.Database`); this module is the only code that opens such a database.

**Sources.** traceidx's unit of work, of identity and of incremental sync is a Source with one
Session, so a database is read as one Source per native session: its locator is the
database's canonical path, ``#``, and the session's native id (``/…/opencode.db#ses_…``).
Discovery lists the sessions of each database it finds (`listing`); a database it cannot
read stays one candidate under its own path, which ingest then reports as failed (or skipped,
when it is a SQLite database without the declared tables) with the reason.

**Records.** A Record is one row, located by (table, key) (`traceidx.domain.model.RowKey`),
the key unique among the session's rows of its table (OpenClaw numbers each session's events
from 0). A session's rows are framed in a fixed order: the session row, then the rows of each
later table right after their parent row (OpenCode: each message, by creation time, followed
by its parts), rows whose parent is not the session's come last. Each row is serialised as
one compact JSON line ``{"table": <name>, "row": {<column>: <stored value>, …}}``, the
columns in the table's declared order, text as stored (bytes that are not UTF-8 replaced), a
blob in base64. A column the table declares `packed` (`traceidx.runtimes.Packed`: OpenClaw
stores a large event as zstd in ``event_zstd`` and NULL in ``event_json``) is framed decoded,
in its own place, and the compressed column is left out of the line (a value that does not
decode stays as stored, the column NULL). A database whose layout declares a `mark` (Kilo
Code's, whose tables are OpenCode's) writes it first, ``{"database": <mark>, "table": …}``, so
that its adapter is detected from the records as any other runtime's is. That line is what
the adapter decodes, its XXH3-128 is the record's fingerprint (a fingerprint over the row's
values), and the lines of a session one after another (``\\n``-separated) are the source's
*logical stream*: a record's ``content_range`` is its range there, as a zstd source's is a
range in its decoded stream. ``inspect`` re-reads a row by its key and checks its fingerprint
(`read_row`).

**Reading without writing or locking.** The database is never opened for writing, and no lock
is taken on it or on its ``-wal``/``-shm`` files, so the runtime never waits for traceidx.
When the database has no write-ahead log beside it (or an empty one) it is opened in place,
read-only and immutable (``file:…?mode=ro&immutable=1``): SQLite then reads the file alone
and takes no locks. A runtime writes to its WAL, not to the database file, except when it
checkpoints; a read during which the database file changed is refused
(`Changed`), and the next build reads that source again. When the database has a non-empty
WAL (OpenCode leaves one when it exits; most recent rows are only there), the committed rows
in the WAL are part of the evidence: the database and its WAL are copied into a private
temporary folder (copied again when the database file changed during the copy; a WAL that
grew meanwhile is harmless: SQLite ignores a torn or uncommitted tail when it recovers the
copy), and the copy is read. A copy serves every read of the same database state in the
process (the snapshot is kept while its database and WAL are unchanged) and is removed when
a newer one replaces it and when the process exits.

**Change detection.** While a database's files keep their size and modification time (the
database file's and its WAL's: `state_of`), none of its rows changed: a session source
records the state it was read at, and a build whose sources of a database all carry its
current state does not open it (discovery takes the sessions from the dataset). Otherwise
the database is listed, and each session compared by its *stamp*.

A session's *stamp* is (its number of rows, the latest change time of
any of them in nanoseconds), from the tables' change-time columns (OpenCode's
``time_updated``, which it sets on every update). Sync compares it as a file's (size, mtime):
an unchanged stamp means the session's rows are unchanged, so a session the runtime did not
touch is not read again, whatever happened to the others in the same database; a changed one
re-projects that session whole. A session whose row is gone from its database is
``missing``, as a deleted file is.

Only local databases are read (a database on object storage is not a source).
"""

from __future__ import annotations

import errno
import fnmatch
import multiprocessing.util
import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote

import msgspec
import zstandard

from traceidx.runtimes import RUNTIMES, Database, Packed, RowTable, any_name, databases

#: between a database's path and a session's native id in a locator
SEPARATOR: Final = "#"
#: how many times a database is copied (or read in place) before a change during the read
#: is reported
ATTEMPTS: Final = 3
#: the most bytes a packed value may decode to (OpenClaw caps an event at 4 MiB)
MAX_UNPACKED: Final = 64 << 20

_ENCODER: Final = msgspec.json.Encoder()


class Unreadable(Exception):
    """The database cannot be read (not a SQLite database, damaged, unreadable)."""


class Foreign(Exception):
    """A SQLite database without the tables and columns its name's runtime declares."""


class Changed(Exception):
    """The database file changed while it was read in place (a checkpoint)."""


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def layout_of(path: str) -> tuple[str, Database] | None:
    """The runtime and database layout a file's name declares it to be, if any."""
    name = os.path.basename(path)
    names = tuple(p for e in RUNTIMES.values() if e.database is not None for p in e.database.names)
    if not any_name(names)(name):
        return None
    for runtime, database in databases().items():
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in database.names):
            return runtime, database
    return None


@dataclass(frozen=True, slots=True)
class Located:
    """A locator of a database source: the database's path, the session's native id (None
    for a database no listing came from), and the database's declared layout."""

    database: str
    session: str | None
    layout: Database


def parse(locator: str) -> Located | None:
    """What a locator names if it names a database or a session in one (local paths only)."""
    if "://" in locator:
        return None
    found = layout_of(locator)
    if found is not None:
        return Located(locator, None, found[1])
    at = locator.find(SEPARATOR)
    while at > 0:
        found = layout_of(locator[:at])
        if found is not None and at + 1 < len(locator):
            return Located(locator[:at], locator[at + 1 :], found[1])
        at = locator.find(SEPARATOR, at + 1)
    return None


def names_session(path: str) -> bool:
    """Whether `path` is the locator of a session of a database file that exists."""
    where = parse(path)
    return where is not None and where.session is not None and os.path.isfile(where.database)


def locator_of(database: str, session: str) -> str:
    """The locator of a session of a database (its canonical path)."""
    return f"{database}{SEPARATOR}{session}"


# -- snapshots -----------------------------------------------------------------------------

#: (size, mtime ns) of the database file, and of its WAL when it is not empty
_State = tuple[tuple[int, int], tuple[int, int] | None]


def _state(path: str) -> _State:
    found = os.stat(path)
    if not stat.S_ISREG(found.st_mode):
        raise Unreadable(f"{path}: not a regular file")
    try:
        wal = os.stat(path + "-wal")
    except FileNotFoundError:
        return (found.st_size, found.st_mtime_ns), None
    if wal.st_size == 0:
        return (found.st_size, found.st_mtime_ns), None
    return (found.st_size, found.st_mtime_ns), (wal.st_size, wal.st_mtime_ns)


def state_of(path: str) -> str:
    """The state of a database's files: the size and modification time of the database file
    and of its WAL (when not empty). While it holds, every row is as it was."""
    return _key(_state(path))


def _key(state: _State) -> str:
    (size, mtime), wal = state
    return f"{size}:{mtime}" + (f"+{wal[0]}:{wal[1]}" if wal is not None else "")


def _text(data: bytes) -> str:
    """A stored text value (bytes that are not UTF-8 replaced, so every row can be framed)."""
    return data.decode("utf-8", "replace")


@dataclass(slots=True)
class _Snapshot:
    """An open, read-only view of one state of a database."""

    path: str
    state: _State
    connection: sqlite3.Connection
    #: the private folder of the copy read; None when the database is read in place
    folder: str | None

    def close(self) -> None:
        self.connection.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


#: the snapshot of each database this process read last (one state per database)
_SNAPSHOTS: dict[str, _Snapshot] = {}
#: snapshots a forked child inherited: its parent's, never used nor closed here
_INHERITED: list[_Snapshot] = []
#: the process whose exit closes `_SNAPSHOTS` (a finalizer registered there)
_FINALIZED: list[int] = []


def _forget_inherited() -> None:
    _INHERITED.extend(_SNAPSHOTS.values())
    _SNAPSHOTS.clear()
    _FINALIZED.clear()


os.register_at_fork(after_in_child=_forget_inherited)


def close_all() -> None:
    """Close every snapshot of this process and remove its copies."""
    while _SNAPSHOTS:
        _SNAPSHOTS.popitem()[1].close()


def _drop(path: str) -> None:
    """Close the kept snapshot of a database, if any."""
    old = _SNAPSHOTS.pop(path, None)
    if old is not None:
        old.close()


def _keep(snapshot: _Snapshot) -> None:
    if not _FINALIZED:  # at this process's exit (also a pool worker's, which skips atexit)
        multiprocessing.util.Finalize(None, close_all, exitpriority=0)
        _FINALIZED.append(os.getpid())
    _drop(snapshot.path)
    _SNAPSHOTS[snapshot.path] = snapshot


def _in_place(path: str, state: _State) -> _Snapshot:
    uri = f"file:{quote(os.path.abspath(path))}?mode=ro&immutable=1"
    connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
    connection.text_factory = _text
    return _Snapshot(path, state, connection, None)


def _copied(path: str, state: _State) -> _Snapshot:
    """A copy of the database and its WAL in a private folder, opened (the copy is ours:
    SQLite recovers its WAL there)."""
    folder = tempfile.mkdtemp(prefix="traceidx-db-")
    try:
        name = os.path.join(folder, "db.sqlite")
        for _ in range(ATTEMPTS):
            shutil.copyfile(path, name)
            try:
                shutil.copyfile(path + "-wal", name + "-wal")
            except FileNotFoundError:  # checkpointed and removed meanwhile
                if os.path.exists(name + "-wal"):
                    os.remove(name + "-wal")
            now = _state(path)
            if now[0] == state[0]:  # the database file did not change while it was copied
                break
            state = now
        else:
            raise Changed(f"{path}: the database changed while it was copied")
        connection = sqlite3.connect(name, check_same_thread=False)
        connection.text_factory = _text
        connection.execute("PRAGMA query_only = 1")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return _Snapshot(path, state, connection, folder)


def _snapshot(path: str) -> _Snapshot:
    """An open view of the database's current state (the kept one while it is current)."""
    state = _state(path)
    kept = _SNAPSHOTS.get(path)
    if kept is not None and kept.state == state:
        return kept
    snapshot = _in_place(path, state) if state[1] is None else _copied(path, state)
    _keep(snapshot)
    return snapshot


# -- reading ---------------------------------------------------------------------------------


class Reader:
    """A session-wise reader of one state of a database, in its declared layout."""

    def __init__(self, connection: sqlite3.Connection, layout: Database, state: str = "") -> None:
        self.connection = connection
        self.layout = layout
        #: the state of the database's files read (`state_of`)
        self.state = state
        self.tables = {table.name: table for table in layout.tables}

    def check(self) -> None:
        """Foreign unless every declared table and column is there."""
        for table in self.layout.tables:
            columns = {
                row[1]
                for row in self.connection.execute(f"PRAGMA table_info({_quoted(table.name)})")
            }
            if not columns:
                raise Foreign(f"it has no table {table.name!r}")
            wanted = {table.key, table.session, table.changed, *table.order}
            wanted.update(c for p in table.packed for c in (p.column, p.source))
            if table.parent is not None:
                wanted.add(table.parent)
            missing = sorted(wanted - columns)
            if missing:
                raise Foreign(f"its table {table.name!r} has no column {missing[0]!r}")

    def _stamps(self, session: str | None) -> dict[str, tuple[int, int]]:
        counts: dict[str, list[int]] = {}
        for table in self.layout.tables:
            who, changed = _quoted(table.session), _quoted(table.changed)
            sql = f"SELECT {who}, count(*), max({changed}) FROM {_quoted(table.name)}"
            found = (
                self.connection.execute(f"{sql} GROUP BY 1")
                if session is None
                else self.connection.execute(f"{sql} WHERE {who} = ? GROUP BY 1", (session,))
            )
            for native, rows, latest in found:
                if not isinstance(native, str):
                    continue
                if table is self.layout.tables[0]:
                    counts[native] = [0, 0]
                elif native not in counts:
                    continue  # rows of a session the session table does not hold
                stamp = counts[native]
                stamp[0] += rows
                if isinstance(latest, int) and latest > stamp[1]:
                    stamp[1] = latest
        return {native: (rows, latest * 1_000_000) for native, (rows, latest) in counts.items()}

    def stamps(self) -> dict[str, tuple[int, int]]:
        """Every session's stamp (rows, latest change in ns), by native id."""
        return self._stamps(None)

    def stamp(self, session: str) -> tuple[int, int] | None:
        """A session's stamp; None when the database does not hold it."""
        return self._stamps(session).get(session)

    def _select(
        self, table: RowTable, where: str, args: tuple[Any, ...]
    ) -> Iterator[tuple[str, bytes]]:
        """(key, line) of the rows of a table that `where` selects, in the table's order."""
        order = ", ".join(_quoted(c) for c in table.order)
        cursor = self.connection.execute(
            f"SELECT * FROM {_quoted(table.name)} WHERE {where} ORDER BY {order}", args
        )
        columns = [d[0] for d in cursor.description]
        key = columns.index(table.key)
        packed = [(columns.index(p.column), columns.index(p.source), p) for p in table.packed]
        for values in cursor:
            if packed:
                line = _unpacked(table.name, columns, values, packed, self.layout.mark)
            else:
                line = encode(table.name, columns, values, self.layout.mark)
            yield str(values[key]), line

    def rows(self, session: str) -> Iterator[tuple[str, str, bytes]]:
        """(table, key, line) of every row of a session, in framing order."""
        tables = self.layout.tables
        first = tables[0]
        for key, line in self._select(first, f"{_quoted(first.key)} = ?", (session,)):
            yield first.name, key, line
            yield from self._children(1, key, session)
        for level in range(1, len(tables)):  # rows whose parent row is not the session's
            table, above = tables[level], tables[level - 1]
            where = (
                f"{_quoted(table.session)} = ? AND {_quoted(table.parent or '')} NOT IN "
                f"(SELECT {_quoted(above.key)} FROM {_quoted(above.name)} "
                f"WHERE {_quoted(above.session)} = ?)"
            )
            for key, line in self._select(table, where, (session, session)):
                yield table.name, key, line
                yield from self._children(level + 1, key, session)

    def _children(self, level: int, parent: str, session: str) -> Iterator[tuple[str, str, bytes]]:
        if level >= len(self.layout.tables):
            return
        table = self.layout.tables[level]
        where = f"{_quoted(table.parent or '')} = ? AND {_quoted(table.session)} = ?"
        for key, line in self._select(table, where, (parent, session)):
            yield table.name, key, line
            yield from self._children(level + 1, key, session)

    def row(self, table: str, key: str, session: str | None = None) -> bytes | None:
        """The line of one row by its table and key (among the rows of `session`, when
        given); None when it is gone."""
        declared = self.tables.get(table)
        if declared is None:
            return None
        where, args = f"{_quoted(declared.key)} = ?", [key]
        if session is not None:
            where, args = f"{where} AND {_quoted(declared.session)} = ?", [key, session]
        for _, line in self._select(declared, where, tuple(args)):
            return line
        return None


def encode(
    table: str, columns: list[str], values: tuple[Any, ...], mark: str | None = None
) -> bytes:
    """The line of a row: its table and its stored values by column, as compact JSON; first
    the database's `mark` when its layout declares one."""
    row = {"table": table, "row": dict(zip(columns, values, strict=True))}
    return _ENCODER.encode(row if mark is None else {"database": mark, **row})


def unpack(codec: str, value: bytes) -> str | None:
    """A packed value decoded (`traceidx.runtimes.Packed`); None when it does not decode (a
    damaged frame, more than `MAX_UNPACKED` bytes, not UTF-8, an unknown codec)."""
    if codec != "zstd":
        return None
    try:
        if zstandard.frame_content_size(value) > MAX_UNPACKED:  # -1: not stated
            return None
        # a frame that ends early, or decodes to more than the bound, raises
        data = zstandard.ZstdDecompressor().decompress(value, max_output_size=MAX_UNPACKED)
        return data.decode("utf-8")
    except (zstandard.ZstdError, UnicodeDecodeError):
        return None


def _unpacked(
    table: str,
    columns: list[str],
    values: tuple[Any, ...],
    packed: list[tuple[int, int, Packed]],
    mark: str | None = None,
) -> bytes:
    """The line of a row whose packed columns are framed decoded (the module docstring)."""
    row = dict(zip(columns, values, strict=True))
    for column, source, how in packed:
        stored = values[source]
        if values[column] is None and isinstance(stored, bytes):
            text = unpack(how.codec, stored)
            if text is not None:
                row[how.column] = text
                del row[how.source]
    framed = {"table": table, "row": row}
    return _ENCODER.encode(framed if mark is None else {"database": mark, **framed})


@contextmanager
def reading(path: str, layout: Database) -> Iterator[Reader]:
    """A reader of the database's current state (see the module docstring); raises
    FileNotFoundError when it is gone, `Unreadable`, `Foreign`, or `Changed` when the database
    file changed while it was read in place."""
    try:
        snapshot = _snapshot(path)
        reader = Reader(snapshot.connection, layout, _key(snapshot.state))
        reader.check()
        yield reader
    except sqlite3.Error as exc:
        _drop(path)
        raise Unreadable(f"{path}: not a readable SQLite database ({exc})") from exc
    except PermissionError as exc:
        raise Unreadable(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    if snapshot.folder is None and _state(path)[0] != snapshot.state[0]:
        _drop(path)
        raise Changed(f"{path}: the database changed while it was read (a checkpoint)")


def listing(path: str) -> dict[str, tuple[int, int]]:
    """The stamp of every session of a database (whose name declares its layout), by native
    id; raises as `reading` does."""
    return survey(path)[0]


def survey(path: str) -> tuple[dict[str, tuple[int, int]], str]:
    """`listing`, and the state of the database's files it was read at (`state_of`)."""
    found = layout_of(path)
    if found is None:
        raise Foreign(f"{path}: no runtime declares a database of this name")
    for attempt in range(ATTEMPTS):
        try:
            with reading(path, found[1]) as reader:
                stamps = reader.stamps()
        except Changed:
            if attempt == ATTEMPTS - 1:
                raise
            continue
        return stamps, reader.state
    raise AssertionError("unreachable")


def stamp(locator: str) -> tuple[int, int]:
    """A session source's stamp, as `os.stat` gives a file's (size, mtime): FileNotFoundError
    when the database or the session is gone, OSError when it cannot be read."""
    where = parse(locator)
    if where is None or where.session is None:
        raise OSError(errno.EINVAL, "not a session of a database", locator)
    try:
        with reading(where.database, where.layout) as reader:
            found = reader.stamp(where.session)
    except (Unreadable, Foreign, Changed) as exc:
        raise OSError(errno.EIO, str(exc), locator) from exc
    if found is None:
        raise FileNotFoundError(errno.ENOENT, "the session is not in its database", locator)
    return found


def lines(locator: str) -> Iterator[bytes]:
    """The lines of a session source in framing order (OSError as `stamp`)."""
    where = parse(locator)
    if where is None or where.session is None:
        raise OSError(errno.EINVAL, "not a session of a database", locator)
    try:
        with reading(where.database, where.layout) as reader:
            for _, _, line in reader.rows(where.session):
                yield line
    except (Unreadable, Foreign, Changed) as exc:
        raise OSError(errno.EIO, str(exc), locator) from exc


def read_row(locator: str, table: str, key: str) -> bytes:
    """The current line of one row of a session source (what its fingerprint covers):
    FileNotFoundError when the database or the row is gone, OSError when unreadable."""
    where = parse(locator)
    if where is None:
        raise OSError(errno.EINVAL, "not a database source", locator)
    try:
        with reading(where.database, where.layout) as reader:
            line = reader.row(table, key, where.session)
    except (Unreadable, Foreign, Changed) as exc:
        raise OSError(errno.EIO, str(exc), locator) from exc
    if line is None:
        raise FileNotFoundError(errno.ENOENT, f"no row {key!r} in table {table!r}", locator)
    return line


def gone(locator: str) -> bool:
    """Whether a session source's database, or its session in it, no longer exists (a
    database that cannot be read is not gone)."""
    try:
        stamp(locator)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False
