"""A runtime that keeps its sessions in a SQLite database, for the tests of database framing.

`install` registers it (with `monkeypatch`) beside the real runtimes: its database is any file
named ``rowdemo.db``, with the tables `make_database` creates (OpenCode's shape, cut down):
``session`` (one row per session), ``message`` (a session's messages) and ``part`` (a
message's parts), each row's JSON in ``data``. Its adapter opens a Loop on every user
message and drafts each text part as the request or the agent's commentary.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from traceidx.adapters.base import Adapter
from traceidx.domain.drafts import Draft, DraftLoop, DraftSession, RecordFacts
from traceidx.runtimes import RUNTIMES, Database, RowTable, Runtime, TraceHome

DATABASE = Database(
    names=("rowdemo.db",),
    tables=(
        RowTable("session", session="id"),
        RowTable(
            "message", session="session_id", parent="session_id", order=("time_created", "id")
        ),
        RowTable("part", session="session_id", parent="message_id"),
    ),
)

SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL, title TEXT NOT NULL,
                      time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
                      time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
                      data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
                   time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
                   data TEXT NOT NULL);
CREATE INDEX part_message ON part (message_id, id);
"""


class RowDemoAdapter(Adapter):
    """Projects one session of a ``rowdemo.db``."""

    runtime = "rowdemo"

    @classmethod
    def claims(cls, head: list[Any]) -> bool:
        first = head[0] if head else None
        return isinstance(first, dict) and first.get("table") == "session"

    def __init__(self) -> None:
        self.session: DraftSession | None = None
        self.loops: list[DraftLoop] = []
        self.items = []
        self.unknown: dict[str, int] = {}
        self.position = 0
        self.time: int | None = None
        self.roles: dict[str, str] = {}

    def feed(self, position: int, obj: Any) -> RecordFacts:
        self.position = position
        table, row = obj["table"], obj["row"]
        self.time = row.get("time_created")
        if table == "session":
            self.session = DraftSession(row["id"], position, created_at=self.time)
            self.session.working_directory = row["directory"]
        elif table == "message":
            role = json.loads(row["data"])["role"]
            self.roles[row["id"]] = role
            if role == "user":
                self.loops.append(DraftLoop(start=position))
        elif table == "part":
            data = json.loads(row["data"])
            loop = self.loops[-1] if self.loops else None
            human = self.roles.get(row["message_id"]) == "user"
            role = "human.request" if human else "agent.commentary"
            self.emit(role, "structural", {"text": data["text"], "has_images": False}, loop)
        else:
            self.count_unknown(table)
        return RecordFacts(self.time, table)

    def finish(self) -> Draft:
        return Draft(self.session, self.loops, self.items, self.unknown)


def install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the runtime for one test."""
    home = TraceHome("ROWDEMO_HOME", ".rowdemo", (".",))
    runtime = Runtime(
        name="rowdemo",
        title="Row demo",
        module="tests.support.rowdemo",
        adapter="RowDemoAdapter",
        version=1,
        homes=(home,),
        tools={},
        fixtures=(),
        database=DATABASE,
    )
    monkeypatch.setitem(RUNTIMES, "rowdemo", runtime)


def make_database(path: Path, sessions: int = 2, wal: bool = False) -> sqlite3.Connection:
    """A ``rowdemo.db`` at `path` with `sessions` sessions of one exchange each (a user
    message and its part, an assistant message and its part); the open connection, whose
    closing checkpoints the WAL away (keep it open to leave committed rows in the WAL)."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(f"PRAGMA journal_mode = {'WAL' if wal else 'DELETE'}")
    con.executescript(SCHEMA)
    for n in range(sessions):
        add_session(con, f"ses_{n}", 1000 * n)
    return con


def add_session(con: sqlite3.Connection, session: str, at: int) -> None:
    """One session with one exchange, written at times from `at` on."""
    con.execute("BEGIN")
    con.execute("INSERT INTO session VALUES (?, ?, ?, ?, ?)", (session, "/w", "t", at, at))
    for k, (role, text) in enumerate((("user", "hello"), ("assistant", "hi there"))):
        message = f"msg_{session}_{k}"
        data = json.dumps({"role": role})
        con.execute(
            "INSERT INTO message VALUES (?, ?, ?, ?, ?)", (message, session, at + k, at + k, data)
        )
        part = json.dumps({"type": "text", "text": text})
        con.execute(
            "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
            (f"prt_{session}_{k}", message, session, at + k, at + k, part),
        )
    con.execute("COMMIT")
