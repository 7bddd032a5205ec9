"""Kilo Code CLI: its own database told from OpenCode's, and what Kilo writes otherwise than
OpenCode (runs killed during start-up, transient progress parts, a subagent's cost rolled into
its parent's message, stream errors that end the turn).

The reading Kilo shares with OpenCode is tested in ``tests/adapters/test_opencode_adapter.py``;
the generated sessions against their ground truth in ``tests/corpus/test_expect.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.support.facts import (
    assert_database_fixture_is_the_corpus_s,
    database_sessions,
    decoded_records,
    dict_rows,
)
from tests.support.files import WITH_CORPUS, fixture_path, traceidx_cli
from traceidx.adapters import adapter, detect
from traceidx.adapters.kilo import KiloAdapter
from traceidx.adapters.opencode import OpenCodeAdapter
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.runtimes import RUNTIMES, names
from traceidx.sources.discover import default_roots

FIXTURE = fixture_path("generated", "kilo", "s1", "kilo.db")
OPENCODE = fixture_path("generated", "opencode", "s1", "opencode.db")
#: a run killed during start-up, before its first message: a session row alone
NO_MESSAGES = "ses_daeff4e38ffe37lNtmUOvc3kba"
#: a run killed during start-up after its prompt: the assistant message holds only the spinner
SPINNER = "ses_daf05e122ffepC7RmFeiu2AtYU"
RETRIES_EXHAUSTED = "ses_daf01d687ffeYv5W5wBIiSwI0t"
PARENT = "ses_daefd94fdffeESgrKp8jJXUapc"
CHILD = "ses_daefa7328ffesUs9Qf9itf627J"
COMPACTION = "ses_daef99d58ffewpoLJbtVlPnuco"
INTERRUPT = "ses_daeee9a50ffeqkK80qZfRvP116"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed Kilo fixture built once."""
    out = tmp_path_factory.mktemp("kilo") / "ds"
    report = build([FIXTURE.parent], out, jobs=1)
    assert report.exit_code == 0, [(r.locator, r.reason) for r in report.results]
    return out


def _session_rows(con: Any, native: str, sql: str) -> list[dict[str, Any]]:
    return dict_rows(
        con,
        sql.replace("{session}", f"(SELECT session_id FROM sessions WHERE native_id = '{native}')"),
    )


def _head(locator: Path) -> list[Any]:
    return [v for _, values in decoded_records(locator)[:32] for v in values]


# -- where the database is, and whose it is --------------------------------------------------------


def test_a_build_without_arguments_finds_kilos_database(tmp_path: Path) -> None:
    home = tmp_path / "home"
    data = home / ".local" / "share" / "kilo"
    data.mkdir(parents=True)
    shutil.copy2(FIXTURE, data / "kilo.db")
    env = {"HOME": str(home), "XDG_DATA_HOME": "", "KILO_DB": ""}
    done = traceidx_cli("build", "--dataset", str(tmp_path / "ds"), "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["indexed"] == 11
    counted = traceidx_cli(
        "sql",
        "--dataset",
        str(tmp_path / "ds"),
        "--format",
        "json",
        "SELECT runtime, count(*) AS n FROM sessions GROUP BY runtime",
    )
    assert json.loads(counted.stdout) == [{"runtime": "kilo", "n": 11}]


def test_the_data_folder_and_the_database_variable_are_the_trace_homes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("KILO_DB", raising=False)
    assert default_roots()["kilo"] == [
        tmp_path / ".local/share/kilo",
        tmp_path / ".local/share/kilo/kilo.db",
    ]
    monkeypatch.setenv("XDG_DATA_HOME", "/data")
    monkeypatch.setenv("KILO_DB", "/elsewhere/kilo.db")
    assert default_roots()["kilo"] == [Path("/data/kilo"), Path("/elsewhere/kilo.db")]


def test_kilos_rows_are_claimed_by_kilo_only_by_the_mark_of_its_database() -> None:
    """Kilo's tables are OpenCode's, so its rows are too: what tells them apart is the mark
    the framing writes into every record of a database named as Kilo's."""
    sessions = database_sessions(FIXTURE.parent)
    assert len(sessions) == 11
    for locator in sessions:
        head = _head(locator)
        assert all(record["database"] == "kilo" for record in head), locator
        assert [name for name in names() if adapter(name).claims(head)] == ["kilo"], locator
        assert detect(head) is KiloAdapter
        unmarked = [{k: v for k, v in r.items() if k != "database"} for r in head]
        assert detect(unmarked) is OpenCodeAdapter  # the same rows from OpenCode's database
    for locator in database_sessions(OPENCODE.parent):
        assert "database" not in _head(locator)[0]
        assert not KiloAdapter.claims(_head(locator))
    assert RUNTIMES["kilo"].database is not None
    assert RUNTIMES["kilo"].database.mark == KiloAdapter.database_mark


def test_a_channel_build_database_is_kilos_too(tmp_path: Path) -> None:
    """A build of another channel than latest/beta/prod names its database
    ``kilo-<channel>.db``."""
    shutil.copy2(FIXTURE, tmp_path / "kilo-fix-windows-paths.db")
    report = build([tmp_path], tmp_path / "ds", jobs=1)
    assert report.exit_code == 0
    assert {r.runtime for r in report.results} == {"kilo"} and len(report.results) == 11


def test_inspect_verifies_a_row_against_its_marked_line(tmp_path: Path) -> None:
    home = tmp_path / "kilo"
    home.mkdir()
    shutil.copy2(FIXTURE, home / "kilo.db")
    dataset = tmp_path / "ds"
    assert traceidx_cli("build", "--dataset", str(dataset), str(home)).returncode == 0
    found = traceidx_cli(
        "sql",
        "--dataset",
        str(dataset),
        "--format",
        "json",
        "SELECT r.record_id FROM records r WHERE r.row.key = 'prt_250fbe5ea001wEJMMg0Df0WopW'",
    )
    [record] = json.loads(found.stdout)
    done = traceidx_cli(
        "inspect", "--dataset", str(dataset), "--format", "json", str(record["record_id"])
    )
    info = json.loads(done.stdout)
    assert done.returncode == 0 and info["verification"] == "verified"
    content = json.loads(info["content"])
    assert (content["database"], content["table"]) == ("kilo", "part")


# -- facts -----------------------------------------------------------------------------------------


def test_a_run_killed_during_start_up_invents_no_turn_and_no_call(dataset: Path) -> None:
    con = connect(dataset)
    for native, loops, records in ((NO_MESSAGES, 0, 1), (SPINNER, 1, 5)):
        counts = _session_rows(
            con,
            native,
            "SELECT (SELECT count(*) FROM loops WHERE session_id = {session}) AS loops, "
            "(SELECT count(*) FROM model_calls WHERE session_id = {session}) AS calls, "
            "(SELECT count(*) FROM records WHERE source_id = (SELECT source_id FROM sources "
            "WHERE locator LIKE '%#' || (SELECT native_id FROM sessions "
            "WHERE session_id = {session}))) AS records",
        )
        assert counts == [{"loops": loops, "calls": 0, "records": records}], native
    # the spinner text ("⠴ Initializing snapshot…") stays a record; the turn has no outcome
    items = _session_rows(
        con, SPINNER, "SELECT semantic.role AS role FROM items WHERE session_id = {session}"
    )
    assert items == [{"role": "human.request"}]
    ends = _session_rows(con, SPINNER, 'SELECT "end" FROM loops WHERE session_id = {session}')
    assert ends == [{"end": None}]


def test_prices_come_from_usage_not_from_the_cost_kilo_rolled_up(dataset: Path) -> None:
    """The parent's message whose step called ``task`` states its own cost plus the child
    session's whole cost; the dataset prices each call from its own usage."""
    with sqlite3.connect(f"file:{FIXTURE}?mode=ro&immutable=1", uri=True) as db:
        stated = {
            session: cost
            for session, cost in db.execute(
                "SELECT id, cost FROM session WHERE id IN (?, ?)", (PARENT, CHILD)
            )
        }
        rolled = db.execute(
            "SELECT json_extract(m.data, '$.cost') FROM message m JOIN part p "
            "ON p.message_id = m.id WHERE m.session_id = ? "
            "AND json_extract(p.data, '$.tool') = 'task'",
            (PARENT,),
        ).fetchone()[0]
    con = connect(dataset)
    priced = {
        native: _session_rows(
            con,
            native,
            "SELECT sum(cost_usd) AS cost FROM model_calls WHERE session_id = {session}",
        )[0]["cost"]
        for native in (PARENT, CHILD)
    }
    assert priced == {n: pytest.approx(stated[n], abs=1e-6) for n in (PARENT, CHILD)}
    own = rolled - stated[CHILD]  # 0.05392155 - 0.03832605
    first = _session_rows(
        con,
        PARENT,
        "SELECT c.cost_usd FROM model_calls c JOIN records r ON r.record_id = c.record_ids[1] "
        "WHERE c.session_id = {session} ORDER BY r.source_position LIMIT 1",
    )
    assert first == [{"cost_usd": pytest.approx(own, abs=1e-6)}]


def test_the_child_is_linked_to_the_task_call_of_its_parent(dataset: Path) -> None:
    con = connect(dataset)
    child = con.sql(
        "SELECT c.session_id, p.native_id FROM sessions c JOIN sessions p "
        f"ON p.session_id = c.delegated_from.session_id WHERE c.native_id = '{CHILD}'"
    ).fetchall()
    assert [native for _, native in child] == [PARENT]
    roles = _session_rows(
        con,
        PARENT,
        "SELECT semantic.role AS role, linked_session_id AS linked FROM items "
        "WHERE session_id = {session} AND semantic.role IN ('agent.delegation', "
        "'subagent.report') ORDER BY loop_position",
    )
    assert roles == [
        {"role": "agent.delegation", "linked": child[0][0]},
        {"role": "subagent.report", "linked": child[0][0]},
    ]


def test_retries_that_run_out_fail_the_turn_without_usage(dataset: Path) -> None:
    con = connect(dataset)
    calls = _session_rows(
        con,
        RETRIES_EXHAUSTED,
        "SELECT outcome, usage FROM model_calls WHERE session_id = {session}",
    )
    assert calls == [{"outcome": "error", "usage": None}]
    loops = _session_rows(
        con,
        RETRIES_EXHAUSTED,
        'SELECT "end".outcome AS outcome FROM loops WHERE session_id = {session}',
    )
    assert loops == [{"outcome": "failed"}]


def test_a_compaction_adds_the_agent_change_as_context(dataset: Path) -> None:
    con = connect(dataset)
    items = _session_rows(
        con,
        COMPACTION,
        "SELECT semantic.role AS role, semantic.context.text.value AS context FROM items "
        "WHERE session_id = {session} ORDER BY loop_position",
    )
    assert [i["role"] for i in items[-4:]] == [
        "runtime.compaction_summary",
        "runtime.instructions",
        "runtime.context",
        "agent.final_answer",
    ]
    assert "The active agent has changed from compaction to code" in items[-2]["context"]


def test_an_interrupted_command_keeps_no_output(dataset: Path) -> None:
    """Kilo writes ``metadata.output: ""`` while a command runs: it is not the output."""
    con = connect(dataset)
    tools = _session_rows(
        con,
        INTERRUPT,
        "SELECT command, output_count, exit_code FROM tool_calls WHERE session_id = {session} "
        "ORDER BY started_at",
    )
    assert [(t["output_count"], t["exit_code"]) for t in tools] == [(1, 0), (0, None)]


# -- fed rows --------------------------------------------------------------------------------------


class Rows:
    """Rows of one Kilo session as the framing gives them (marked), fed to a fresh adapter."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        session = {"id": "ses_1", "parent_id": None, "project_id": "p", "slug": "s"}
        session.update({"directory": "/w", "title": "t", "version": "7.7.7", "time_created": 1})
        self._add("session", session)

    def _add(self, table: str, row: dict[str, Any]) -> None:
        self.rows.append({"database": "kilo", "table": table, "row": row})

    def message(self, role: str, **data: Any) -> str:
        native = f"msg_{len(self.rows):03d}"
        row = {"id": native, "session_id": "ses_1", "time_created": len(self.rows)}
        self._add("message", {**row, "data": json.dumps({"role": role, "agent": "code", **data})})
        return native

    def part(self, **data: Any) -> None:
        message = next(r for r in reversed(self.rows) if r["table"] == "message")["row"]["id"]
        row = {"id": f"prt_{len(self.rows):03d}", "message_id": message, "session_id": "ses_1"}
        self._add("part", {**row, "time_created": len(self.rows), "data": json.dumps(data)})

    def feed(self) -> Any:
        assert detect(self.rows[:32]) is KiloAdapter
        adapter_ = KiloAdapter()
        for position, row in enumerate(self.rows):
            adapter_.feed(position, row)
        return adapter_.finish()


TOKENS = {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 100, "write": 20}}
ZERO = {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
TRANSIENT = {"kilocode.lifecycle": "transient"}


def test_a_stream_error_ends_the_turn_as_failed() -> None:
    """Kilo does not retry an SSE ``error`` event after the response began: the message keeps
    the error, zero tokens and what it streamed."""
    rows = Rows()
    user = rows.message("user")
    rows.part(type="text", text="do it")
    message = '{"type":"overloaded_error","message":"Overloaded"}'
    error = {"name": "UnknownError", "data": {"message": message}}
    rows.message("assistant", parentID=user, tokens=ZERO, error=error, modelID="m")
    rows.part(type="step-start")
    rows.part(type="reasoning", text="thinking")
    draft = rows.feed()
    [loop] = draft.loops
    assert (loop.outcome, loop.end) == ("failed", 3)
    assert [(s.outcome, s.input, s.output) for s in loop.usage] == [("error", 0, 0)]
    assert [(i.role, i.value.get("text")) for i in draft.items] == [
        ("human.request", "do it"),
        ("runtime.notice", message),
        ("agent.reasoning", "thinking"),
    ]


def test_a_transient_progress_part_is_never_content() -> None:
    """A transient part left in a finished step (its removal failed) is no answer, and one
    with ``synthetic`` unset is no prompt either; it stays a Record."""
    rows = Rows()
    user = rows.message("user")
    rows.part(type="text", text="⠙ Initializing session…", metadata=TRANSIENT)
    rows.part(type="text", text="hello")
    rows.message("assistant", parentID=user, tokens=TOKENS, finish="stop", modelID="m")
    rows.part(type="text", text="hi there")
    rows.part(type="text", text="⠋ Initializing snapshot…", synthetic=True, metadata=TRANSIENT)
    draft = rows.feed()
    assert [(i.role, i.value.get("text")) for i in draft.items] == [
        ("human.request", "hello"),
        ("agent.final_answer", "hi there"),
    ]
    assert draft.unknown_types == {}
    assert len(draft.loops) == 1 and len(draft.loops[0].usage) == 1


def test_a_spinner_alone_is_a_turn_without_outcome_or_call() -> None:
    rows = Rows()
    user = rows.message("user")
    rows.part(type="text", text="check it")
    rows.message("assistant", parentID=user, tokens=ZERO, modelID="m")
    rows.part(type="text", text="⠴ Initializing snapshot…", synthetic=True, metadata=TRANSIENT)
    draft = rows.feed()
    [loop] = draft.loops
    assert (loop.outcome, loop.end, loop.usage) == (None, None, [])
    assert [i.role for i in draft.items] == ["human.request"]


# -- the committed fixture -------------------------------------------------------------------------


@pytest.mark.skipif(not WITH_CORPUS, reason="the shared corpus is not here")
def test_the_fixture_holds_the_corpus_rows_of_its_sessions() -> None:
    """The committed database is the corpus's with the other sessions' rows (and every
    ``event`` row, which traceidx does not read) deleted: the rows of its sessions are the
    same, so are their records, and its ground truth is the corpus's filtered to them."""
    assert_database_fixture_is_the_corpus_s(FIXTURE, "kilo", 11)
    assert os.path.getsize(FIXTURE) < 400_000
