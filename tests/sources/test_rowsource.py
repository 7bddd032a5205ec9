"""Database sources (traceidx.sources.rowsource): one Source per session of a runtime's SQLite
database, a Record per row, read without writing or locking the database, re-read per
session when its rows change.

The runtime here is `tests.support.rowdemo` (a database in OpenCode's shape, cut down), registered
for each test; the real OpenCode database is read in ``tests/adapters/test_opencode_adapter.py``.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import sqlite3
from pathlib import Path

import pytest

from tests.support import rowdemo
from tests.support.files import ROOT
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build, prune
from traceidx.sources import rowsource
from traceidx.sources.frame import fingerprint


@pytest.fixture(autouse=True)
def _runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    rowdemo.install(monkeypatch)


def _files(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file of a folder: its content digest and modification time."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
    }


def _actions(report: object) -> dict[str, str]:
    return {r.locator.rsplit("#", 1)[-1]: r.action for r in report.results}  # type: ignore[attr-defined]


def test_each_session_is_a_source_and_each_row_a_record(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    rowdemo.make_database(home / "rowdemo.db", sessions=2).close()
    report = build([home], tmp_path / "ds", jobs=1)
    assert report.exit_code == 0
    database = str((home / "rowdemo.db").resolve())
    assert sorted(r.locator for r in report.results) == [
        f"{database}#ses_0",
        f"{database}#ses_1",
    ]
    con = connect(tmp_path / "ds")
    rows = con.sql(
        "SELECT r.source_position, r.content_range, r.row, r.native_type, r.fingerprint "
        "FROM records r JOIN sources s USING (source_id) WHERE s.locator LIKE '%#ses_1' "
        "ORDER BY r.source_position"
    ).fetchall()
    # the session row, then each message (by time) followed by its parts
    assert [(row["table"], row["key"]) for _, _, row, _, _ in rows] == [
        ("session", "ses_1"),
        ("message", "msg_ses_1_0"),
        ("part", "prt_ses_1_0"),
        ("message", "msg_ses_1_1"),
        ("part", "prt_ses_1_1"),
    ]
    assert [position for position, *_ in rows] == [0, 1, 2, 3, 4]
    ranges = [(r["start"], r["end"]) for _, r, *_ in rows]
    assert ranges[0][0] == 0 and all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))
    # a record's bytes are its row's stored values; its fingerprint is theirs
    locator = f"{database}#ses_1"
    for _, _, row, _, expected in rows:
        line = rowsource.read_row(locator, row["table"], row["key"])
        assert fingerprint(line) == expected
    part = rowsource.read_row(locator, "part", "prt_ses_1_1")
    assert part.startswith(b'{"table":"part","row":{"id":"prt_ses_1_1","message_id":')
    assert con.sql("SELECT count(*) FROM sessions").fetchall() == [(2,)]
    items = con.sql("SELECT semantic.role, semantic.text.text.value FROM items").fetchall()
    assert (
        sorted(items) == [("agent.commentary", "hi there")] * 2 + [("human.request", "hello")] * 2
    )


def test_rows_only_in_the_wal_are_read_and_no_file_of_the_runtime_changes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    writer = rowdemo.make_database(home / "rowdemo.db", sessions=3, wal=True)
    try:  # the writer stays open: its committed rows are in the WAL, not in the database file
        assert (home / "rowdemo.db-wal").stat().st_size > 0
        before = _files(home)
        report = build([home], tmp_path / "ds", jobs=1)
        assert report.exit_code == 0
        assert _files(home) == before  # the database, its WAL and its -shm: bytes and mtimes
        con = connect(tmp_path / "ds")
        assert con.sql("SELECT count(*) FROM sessions").fetchall() == [(3,)]
        assert con.sql("SELECT count(*) FROM records").fetchall() == [(15,)]
        copies = [f for f in Path(rowsource.tempfile.gettempdir()).glob("traceidx-db-*")]
        assert copies  # the snapshot read, kept while the database is unchanged...
        rowsource.close_all()
        assert not [c for c in copies if c.exists()]  # ...and removed with it
    finally:
        writer.close()


@pytest.mark.parametrize("wal", [False, True], ids=["in-place", "copied"])
def test_a_writer_is_never_blocked_by_a_read(tmp_path: Path, wal: bool) -> None:
    path = tmp_path / "rowdemo.db"
    writer = rowdemo.make_database(path, sessions=2, wal=wal)
    writer.execute("PRAGMA busy_timeout = 0")  # a lock held by the reader would fail at once
    # the database changed under a read in place: that read is refused (the next build reads
    # the session again); a copy is a state of its own
    refused = contextlib.nullcontext() if wal else pytest.raises(rowsource.Changed)
    try:
        with refused, rowsource.reading(str(path), rowdemo.DATABASE) as reader:
            rows = reader.rows("ses_0")
            next(rows)  # a read in progress
            rowdemo.add_session(writer, "ses_7", 7000)
            if wal:
                busy, _, _ = writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                assert busy == 0
            assert len(list(rows)) == 4
    finally:
        writer.close()
        rowsource.close_all()


def test_only_the_sessions_whose_rows_changed_are_read_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    writer = rowdemo.make_database(home / "rowdemo.db", sessions=3)
    try:
        build([home], tmp_path / "ds", jobs=1)
        assert set(_actions(build([home], tmp_path / "ds", jobs=1)).values()) == {"unchanged"}
        writer.execute(  # the runtime rewrites a part in place, as it does while streaming
            "UPDATE part SET data = json_set(data, '$.text', 'hi again'), time_updated = 5000 "
            "WHERE id = 'prt_ses_1_1'"
        )
        rowdemo.add_session(writer, "ses_9", 9000)
        writer.execute("DELETE FROM part WHERE session_id = 'ses_2'")
        writer.execute("DELETE FROM message WHERE session_id = 'ses_2'")
        writer.execute("DELETE FROM session WHERE id = 'ses_2'")
        report = build([home], tmp_path / "ds", jobs=1)
        assert _actions(report) == {
            "ses_0": "unchanged",
            "ses_1": "rewritten",
            "ses_2": "missing",  # its facts stay until pruned, as a deleted file's do
            "ses_9": "new",
        }
        con = connect(tmp_path / "ds")
        texts = con.sql("SELECT semantic.text.text.value FROM items").fetchall()
        assert ("hi again",) in texts
        assert prune(tmp_path / "ds").removed == [f"{(home / 'rowdemo.db').resolve()}#ses_2"]
    finally:
        writer.close()


def test_a_damaged_or_foreign_database_fails_or_is_skipped_alone(tmp_path: Path) -> None:
    broken, foreign, good = (tmp_path / name for name in ("broken", "foreign", "good"))
    for folder in (broken, foreign, good):
        folder.mkdir()
    (broken / "rowdemo.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    sqlite3.connect(foreign / "rowdemo.db").execute(
        "CREATE TABLE session (id TEXT)"
    ).connection.close()
    rowdemo.make_database(good / "rowdemo.db", sessions=1).close()
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "rowdemo.db").write_bytes(b"")
    report = build([broken, foreign, good, tmp_path / "empty"], tmp_path / "ds", jobs=1)
    outcome = {Path(r.locator.split("#")[0]).parent.name: r for r in report.results}
    assert outcome["good"].state == "indexed"
    assert outcome["broken"].state == "failed"
    assert "not a readable SQLite database" in (outcome["broken"].reason or "")
    assert outcome["foreign"].state == "skipped"
    assert "not this runtime's: its table 'session' has no column" in (
        outcome["foreign"].reason or ""
    )
    assert outcome["empty"].state == "skipped"  # an empty file is a database with no table
    assert report.exit_code == 1  # the damaged one failed; the others were read
    assert connect(tmp_path / "ds").sql("SELECT count(*) FROM sessions").fetchall() == [(1,)]


def test_locators_name_a_database_and_a_session() -> None:
    where = rowsource.parse("/data/x#y/rowdemo.db#ses_1#2")
    assert where is not None and (where.database, where.session) == (
        "/data/x#y/rowdemo.db",
        "ses_1#2",
    )
    bare = rowsource.parse("/data/rowdemo.db")
    assert bare is not None and bare.session is None
    assert rowsource.parse("/data/other.db#ses_1") is None
    assert rowsource.parse("/data/session.jsonl") is None
    assert rowsource.parse("s3://bucket/rowdemo.db#ses_1") is None
    assert os.path.basename(rowsource.locator_of("/d/rowdemo.db", "s")) == "rowdemo.db#s"


def test_a_database_whose_files_did_not_change_is_not_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    writer = rowdemo.make_database(home / "rowdemo.db", sessions=3, wal=True)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    try:
        build([home], tmp_path / "ds", jobs=1)
        writer.execute("DELETE FROM part WHERE session_id = 'ses_2'")
        writer.execute("DELETE FROM message WHERE session_id = 'ses_2'")
        writer.execute("DELETE FROM session WHERE id = 'ses_2'")
        report = build([home], tmp_path / "ds", jobs=1)  # opened: its WAL changed
        assert _actions(report)["ses_2"] == "missing"
        opened: list[str] = []
        snapshot = rowsource._snapshot

        def spy(path: str) -> object:
            opened.append(path)
            return snapshot(path)

        monkeypatch.setattr(rowsource, "_snapshot", spy)
        rowsource.close_all()
        report = build([home], tmp_path / "ds", jobs=1)
        assert opened == []  # neither listed nor read: the dataset has every session's state
        assert _actions(report) == {"ses_0": "unchanged", "ses_1": "unchanged", "ses_2": "missing"}
        rowdemo.add_session(writer, "ses_5", 5000)
        report = build([home], tmp_path / "ds", jobs=1)
        assert opened and _actions(report)["ses_5"] == "new"
    finally:
        writer.close()
        rowsource.close_all()


#: a second process that keeps writing sessions into the database while a build reads it
_WRITER = """
import sqlite3, sys, time
from tests.support.rowdemo import add_session
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA busy_timeout = 5000")
for n in range(100, 100 + int(sys.argv[2])):
    add_session(con, f"ses_{n}", 1000 * n)
    time.sleep(0.005)
con.close()
"""


@pytest.mark.parametrize("wal", [False, True], ids=["in-place", "copied"])
def test_a_build_while_another_process_writes_publishes_whole_sessions(
    tmp_path: Path, wal: bool
) -> None:
    """A build during a second process's writes publishes every session it read whole (a
    consistent snapshot), or leaves a changed session for the next build; that build, after
    the writes, holds every session whole."""
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    path = home / "rowdemo.db"
    make = rowdemo.make_database(path, sessions=30, wal=wal)
    make.close()
    root = ROOT
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), "150"], cwd=root, env={**os.environ}
    )
    try:
        first = build([home], tmp_path / "ds", jobs=1)
    finally:
        assert writer.wait(timeout=120) == 0
    assert first.exit_code in (0, 1)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        rows = dict(
            con.execute(
                "SELECT s.id, 1 + (SELECT count(*) FROM message m WHERE m.session_id = s.id) "
                "+ (SELECT count(*) FROM part p WHERE p.session_id = s.id) FROM session s"
            ).fetchall()
        )
    for attempt in range(2):
        published = dict(
            connect(tmp_path / "ds")
            .sql(
                "SELECT s.native_id, count(*) FROM records r JOIN sessions s "
                "ON list_contains(s.source_ids, r.source_id) GROUP BY 1"
            )
            .fetchall()
        )
        assert published and all(published[s] == rows[s] for s in published), attempt
        if attempt == 0:
            assert build([home], tmp_path / "ds", jobs=1).exit_code == 0
    assert published == rows  # after the writes: every session, whole
    rowsource.close_all()
