"""OpenCode: its database read per session without a trace of the reading, and the facts its
rows support (usage units, failed attempts, interrupts, subagents, compaction, drafts).

Database framing in general is tested in ``tests/sources/test_rowsource.py``; the generated sessions
against their ground truth in ``tests/corpus/test_expect.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
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
from traceidx.adapters.opencode import OpenCodeAdapter
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.runtimes import names
from traceidx.sources import rowsource
from traceidx.sources.discover import default_roots

FIXTURE = fixture_path("generated", "opencode", "s1", "opencode.db")
INTERRUPT = "ses_db3057ea9ffeEqI3ia1mSghuvR"
OPENAI = "ses_db303d556ffeL7ma6i2qTG1dm4"
SUBAGENT_PARENT = "ses_db304e0c8ffe6ZFMNH83RCNGHW"
COMPACTION = "ses_db30461ecffeJo804GHhmfxCZO"
RETRIES_EXHAUSTED = "ses_db3061118ffeoYkUu08IAH6E02"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed OpenCode fixture built once."""
    out = tmp_path_factory.mktemp("opencode") / "ds"
    report = build([FIXTURE.parent], out, jobs=1)
    assert report.exit_code == 0, [(r.locator, r.reason) for r in report.results]
    return out


def _digests(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


# -- the database, read without a trace ----------------------------------------------------------


def test_a_read_only_data_folder_is_read_and_left_as_it_was(tmp_path: Path) -> None:
    home = tmp_path / "opencode"
    home.mkdir()
    shutil.copy2(FIXTURE, home / "opencode.db")
    (home / "opencode.db").chmod(stat.S_IRUSR)
    home.chmod(stat.S_IRUSR | stat.S_IXUSR)  # the header says WAL: SQLite may not open it there
    try:
        before = _digests(home)
        report = build([home], tmp_path / "ds", jobs=1)
        assert report.exit_code == 0
        assert len(report.results) == 10 and {r.state for r in report.results} == {"indexed"}
        assert _digests(home) == before  # no -wal, no -shm, the same bytes and mtime
    finally:
        home.chmod(stat.S_IRWXU)


def test_rows_the_runtime_left_in_its_wal_are_read_and_only_their_session_again(
    tmp_path: Path,
) -> None:
    home = tmp_path / "opencode"
    home.mkdir()
    shutil.copy2(FIXTURE, home / "opencode.db")
    build([home], tmp_path / "ds", jobs=1)
    writer = sqlite3.connect(home / "opencode.db", isolation_level=None)
    try:  # OpenCode running: it rewrites a part in place and its rows stay in the WAL
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute(
            "UPDATE part SET data = json_set(data, '$.text', 'Rewritten answer.'), "
            "time_updated = time_updated + 1000000 WHERE id = 'prt_24cfb099b001752R7jnApmBWjm' "
            "OR id = 'prt_24cfb08f7001qS8AxIKPEbXmlJ'"
        )
        assert (home / "opencode.db-wal").stat().st_size > 0
        before = _digests(home)
        report = build([home], tmp_path / "ds", jobs=1)
        assert _digests(home) == before
        actions = {r.locator.rsplit("#", 1)[1]: r.action for r in report.results}
        assert actions.pop(INTERRUPT) == "rewritten"
        assert set(actions.values()) == {"unchanged"}
        con = connect(tmp_path / "ds")
        finals = con.sql(
            "SELECT semantic.text.text.value FROM items i JOIN sessions s USING (session_id) "
            f"WHERE s.native_id = '{INTERRUPT}' AND semantic.role = 'agent.final_answer'"
        ).fetchall()
        assert finals[-1] == ("Rewritten answer.",)
    finally:
        writer.close()
        rowsource.close_all()


def test_a_damaged_database_fails_alone(tmp_path: Path) -> None:
    damaged, good = tmp_path / "damaged", tmp_path / "good"
    damaged.mkdir()
    good.mkdir()
    (damaged / "opencode.db").write_bytes(FIXTURE.read_bytes()[:8192])  # cut short
    (damaged / "opencode-dev.db").write_text("not a database at all\n" * 200)
    shutil.copy2(FIXTURE, good / "opencode.db")
    report = build([damaged, good], tmp_path / "ds", jobs=1)
    failed = {Path(r.locator).name: r.reason for r in report.results if r.state == "failed"}
    assert set(failed) == {"opencode.db", "opencode-dev.db"}
    assert all("not a readable SQLite database" in (reason or "") for reason in failed.values())
    assert sum(r.state == "indexed" for r in report.results) == 10
    assert report.exit_code == 1


def test_one_session_may_be_named_by_its_locator(tmp_path: Path) -> None:
    locator = f"{FIXTURE}#{OPENAI}"
    report = build([locator], tmp_path / "ds", jobs=1)
    assert [r.locator for r in report.results] == [f"{FIXTURE.resolve()}#{OPENAI}"]
    report = build([f"{FIXTURE}#ses_missing"], tmp_path / "ds2", jobs=1)
    assert report.problems == [
        f"{FIXTURE}#ses_missing: no session ses_missing in {FIXTURE.resolve()}"
    ]


def test_the_data_folder_and_the_database_variable_are_the_trace_homes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("OPENCODE_DB", raising=False)
    assert default_roots()["opencode"] == [
        tmp_path / ".local/share/opencode",
        tmp_path / ".local/share/opencode/opencode.db",
    ]
    monkeypatch.setenv("XDG_DATA_HOME", "/data")
    monkeypatch.setenv("OPENCODE_DB", "/elsewhere/mine.db")
    assert default_roots()["opencode"] == [Path("/data/opencode"), Path("/elsewhere/mine.db")]


# -- facts -----------------------------------------------------------------------------------


def _session_rows(con: Any, native: str, sql: str) -> list[dict[str, Any]]:
    return dict_rows(
        con,
        sql.replace("{session}", f"(SELECT session_id FROM sessions WHERE native_id = '{native}')"),
    )


def test_usage_is_in_the_contract_units_for_every_provider(dataset: Path) -> None:
    con = connect(dataset)
    calls = _session_rows(
        con,
        OPENAI,
        "SELECT c.usage, c.model, c.provider, c.outcome FROM model_calls c "
        "JOIN records r ON r.record_id = c.record_ids[1] "
        "WHERE c.session_id = {session} ORDER BY r.source_position",
    )
    # the row: tokens {input 4570, output 9, reasoning 32, cache {read 0, write 0}} (the
    # OpenAI-compatible wire said prompt 4570, completion 41 of which reasoning 32)
    assert calls[0]["usage"] == {
        "input": 4570,
        "output": 41,
        "cached": 0,
        "cache_write": 0,
        "reasoning": 32,
    }
    # tokens {input 1071, output 205, reasoning 41, cache {read 4608}}: input includes the cache
    assert calls[1]["usage"]["input"] == 1071 + 4608 and calls[1]["usage"]["cached"] == 4608
    assert {(c["model"], c["provider"], c["outcome"]) for c in calls} == {
        ("gpt-5", "mock-openai", "ok")
    }
    # Anthropic: input without the caches, which the contract adds
    plain = _session_rows(
        con, INTERRUPT, "SELECT usage FROM model_calls WHERE session_id = {session} LIMIT 1"
    )
    assert plain[0]["usage"]["input"] == 216 + 2627 + 0


def test_a_failed_request_is_an_attempt_that_billed_nothing(dataset: Path) -> None:
    con = connect(dataset)
    loops = _session_rows(
        con, RETRIES_EXHAUSTED, 'SELECT "end", usage FROM loops WHERE session_id = {session}'
    )
    assert [(loop["end"]["outcome"], loop["usage"]) for loop in loops] == [("failed", None)]
    calls = _session_rows(
        con,
        RETRIES_EXHAUSTED,
        "SELECT outcome, usage FROM model_calls WHERE session_id = {session}",
    )
    assert calls == [{"outcome": "error", "usage": None}]
    notices = _session_rows(
        con,
        RETRIES_EXHAUSTED,
        "SELECT semantic.text.text.value AS text FROM items WHERE session_id = {session} "
        "AND semantic.role = 'runtime.notice'",
    )
    assert [n["text"][:22] for n in notices] == ["Internal Server Error:"]


def test_an_interrupted_step_leaves_a_call_without_output_and_no_billed_request(
    dataset: Path,
) -> None:
    con = connect(dataset)
    tools = _session_rows(
        con,
        INTERRUPT,
        "SELECT t.command, t.output_count, t.exit_code FROM tool_calls t "
        "WHERE t.session_id = {session} ORDER BY t.started_at",
    )
    sleep = [t for t in tools if t["command"] and "sleep(30)" in t["command"]]
    assert sleep == [{"command": sleep[0]["command"], "output_count": 0, "exit_code": None}]
    loops = _session_rows(
        con,
        INTERRUPT,
        'SELECT "end".outcome AS outcome FROM loops WHERE session_id = {session} '
        "ORDER BY session_position",
    )
    assert [loop["outcome"] for loop in loops] == [None, None, None]  # the process died
    count = _session_rows(
        con, INTERRUPT, "SELECT count(*) AS n FROM model_calls WHERE session_id = {session}"
    )
    assert count == [{"n": 5}]  # six assistant messages: the cut one wrote no usage


def test_the_task_tool_delegates_to_a_child_session(dataset: Path) -> None:
    con = connect(dataset)
    items = _session_rows(
        con,
        SUBAGENT_PARENT,
        "SELECT semantic.role AS role, semantic.delegation.child_session_id AS child, "
        "semantic.delegation.agent_type AS agent, semantic.subagent_report.source_session_id "
        "AS source, semantic.subagent_report.text.value AS report FROM items "
        "WHERE session_id = {session} AND semantic.role IN ('agent.delegation', "
        "'subagent.report') ORDER BY occurred_at, role",
    )
    children = dict(
        con.sql(
            "SELECT native_id, session_id FROM sessions WHERE delegated_from.session_id = "
            f"(SELECT session_id FROM sessions WHERE native_id = '{SUBAGENT_PARENT}')"
        ).fetchall()
    )
    assert sorted(children) == ["ses_db304b647ffeY78Vs5HXeF2brd", "ses_db304bca7ffer4Umn8czsavjLJ"]
    first = children["ses_db304bca7ffer4Umn8czsavjLJ"]
    assert items[0] == {
        "role": "agent.delegation",
        "child": first,
        "agent": "general",
        "source": None,
        "report": None,
    }
    assert items[1]["role"] == "subagent.report" and items[1]["source"] == first
    assert items[1]["report"].startswith("Finished. `git status --short")  # inside <task_result>
    tasks = con.sql(
        "SELECT task.value FROM sessions WHERE native_id = 'ses_db304bca7ffer4Umn8czsavjLJ'"
    ).fetchall()
    assert tasks == [("Check the git state of the repository (status and last commit).",)]
    humans = con.sql(
        f"SELECT count(*) FROM items WHERE session_id = {first} AND semantic.role LIKE 'human.%'"
    ).fetchall()
    assert humans == [(0,)]  # the child's prompt is its parent agent's


def test_an_automatic_compaction_stays_in_its_turn(dataset: Path) -> None:
    con = connect(dataset)
    items = _session_rows(
        con,
        COMPACTION,
        "SELECT l.session_position AS loop, i.semantic.role AS role FROM items i "
        "JOIN loops l USING (loop_id) WHERE i.session_id = {session} ORDER BY i.loop_position",
    )
    roles = [i["role"] for i in items]
    assert {i["loop"] for i in items} == {0}
    assert roles[-3:] == [
        "runtime.compaction_summary",
        "runtime.instructions",
        "agent.final_answer",
    ]
    calls = _session_rows(
        con, COMPACTION, "SELECT count(*) AS n FROM model_calls WHERE session_id = {session}"
    )
    assert calls == [{"n": 4}]  # the summary request is one of the turn's


# -- fed rows ----------------------------------------------------------------------------------


class Rows:
    """Rows of one OpenCode session, built in framing order and fed to a fresh adapter."""

    def __init__(self, parent: str | None = None) -> None:
        self.rows: list[dict[str, Any]] = []
        self.count = 0
        session = {"id": "ses_1", "parent_id": parent, "project_id": "p", "slug": "s"}
        session.update({"directory": "/w", "title": "t", "version": "1", "time_created": 1})
        self.rows.append({"table": "session", "row": session})

    def message(self, role: str, **data: Any) -> str:
        self.count += 1
        native = f"msg_{self.count:03d}"
        row = {"id": native, "session_id": "ses_1", "time_created": self.count}
        row["data"] = json.dumps({"role": role, **data})
        self.rows.append({"table": "message", "row": row})
        return native

    def part(self, **data: Any) -> None:
        self.count += 1
        message = next(r for r in reversed(self.rows) if r["table"] == "message")["row"]["id"]
        row = {"id": f"prt_{self.count:03d}", "message_id": message, "session_id": "ses_1"}
        row.update({"time_created": self.count, "data": json.dumps(data)})
        self.rows.append({"table": "part", "row": row})

    def feed(self) -> Any:
        adapter = OpenCodeAdapter()
        for position, row in enumerate(self.rows):
            adapter.feed(position, row)
        return adapter.finish()


TOKENS = {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 100, "write": 20}}


def test_a_user_abort_interrupts_the_turn_and_its_step_is_an_aborted_attempt() -> None:
    rows = Rows()
    user = rows.message("user")
    rows.part(type="text", text="do it")
    aborted = {"name": "MessageAbortedError", "data": {"message": "The operation was aborted."}}
    zero = {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    rows.message("assistant", parentID=user, tokens=zero, error=aborted, modelID="m")
    draft = rows.feed()
    [loop] = draft.loops
    assert (loop.end, loop.outcome) == (3, "interrupted")
    assert [(s.outcome, s.input, s.output) for s in loop.usage] == [("aborted", 0, 0)]
    assert [i.role for i in draft.items] == ["human.request", "runtime.notice"]


def test_a_manual_compaction_is_outside_any_turn() -> None:
    rows = Rows()
    user = rows.message("user")
    rows.part(type="text", text="hello")
    rows.message("assistant", parentID=user, tokens=TOKENS, finish="stop")
    rows.part(type="text", text="hi")
    command = rows.message("user")
    rows.part(type="compaction", auto=False)
    rows.message("assistant", parentID=command, tokens=TOKENS, finish="stop", summary=True)
    rows.part(type="text", text="the summary")
    draft = rows.feed()
    assert len(draft.loops) == 1 and len(draft.loops[0].usage) == 1
    assert [(c.input, c.cached) for c in draft.calls] == [(130, 100)]
    summary = draft.items[-1]
    assert (summary.role, summary.loop, summary.value) == (
        "runtime.compaction_summary",
        None,
        {"summary": "the summary"},
    )
    assert [i.role for i in draft.items[:2]] == ["human.request", "agent.final_answer"]


def test_a_later_step_demotes_the_answer_and_an_image_marks_the_prompt() -> None:
    rows = Rows()
    user = rows.message("user")
    rows.part(type="text", text="look at this")
    rows.part(type="file", mime="image/png", url="data:")
    rows.part(type="text", text="Called the Read tool", synthetic=True)
    rows.message("assistant", parentID=user, tokens=TOKENS, finish="stop")
    rows.part(type="text", text="first")
    rows.part(type="text", text="second")
    rows.message("assistant", parentID=user, tokens=TOKENS, finish="stop")
    rows.part(type="retry", attempt=1, error={"name": "APIError", "data": {"message": "busy"}})
    rows.part(type="text", text="third")
    rows.part(type="mystery")
    draft = rows.feed()
    roles = [(i.role, i.value.get("text")) for i in draft.items]
    assert roles == [
        ("human.request", "look at this"),
        ("runtime.context", "Called the Read tool"),
        ("agent.commentary", "first"),
        ("agent.commentary", "second"),
        ("runtime.notice", "busy"),
        ("agent.final_answer", "third"),
    ]
    assert draft.items[0].value["has_images"] is True
    assert draft.unknown_types == {"part/mystery": 1}
    assert len(draft.loops) == 1 and len(draft.loops[0].usage) == 2


def test_a_subagent_prompt_opens_its_turn_and_stays_a_record() -> None:
    rows = Rows(parent="ses_0")
    user = rows.message("user")
    rows.part(type="text", text="inspect the repo")
    rows.message("assistant", parentID=user, tokens=TOKENS, finish="stop")
    rows.part(type="text", text="done")
    draft = rows.feed()
    assert draft.session.delegated_from == ("ses_0", 0)
    assert draft.session.task == "inspect the repo"
    assert [loop.start for loop in draft.loops] == [1]
    assert [i.role for i in draft.items] == ["agent.final_answer"]


def test_only_opencode_session_rows_are_claimed_by_it() -> None:
    for locator in database_sessions(FIXTURE.parent):
        head = [v for _, values in decoded_records(locator)[:32] for v in values]
        claimed = [name for name in names() if adapter(name).claims(head)]
        assert claimed == ["opencode"], locator
        assert detect(head) is OpenCodeAdapter
    other = {"table": "session", "row": {"id": "s", "directory": "/w"}}
    assert not OpenCodeAdapter.claims([other])
    assert not OpenCodeAdapter.claims([{"type": "session", "id": "x"}])


def test_draining_hands_over_each_turn_once_it_is_over() -> None:
    values = decoded_records(Path(f"{FIXTURE}#{INTERRUPT}"))
    adapter_ = OpenCodeAdapter()
    drained_items = 0
    for position, objs in values:
        for obj in objs:
            adapter_.feed(position, obj)
        _, items = adapter_.drain()
        drained_items += len(items)
    draft = adapter_.finish()
    assert drained_items >= 10 and len(draft.loops) == 1  # only the last turn waits


# -- the committed fixture ----------------------------------------------------------------------


@pytest.mark.skipif(not WITH_CORPUS, reason="the shared corpus is not here")
def test_the_fixture_holds_the_corpus_rows_of_its_sessions() -> None:
    """The committed database is the corpus's with the other sessions' rows (and every
    ``event`` row, which traceidx does not read) deleted: the rows of its sessions are the
    same, so are their records, and its ground truth is the corpus's filtered to them."""
    assert_database_fixture_is_the_corpus_s(FIXTURE, "opencode", 10)
    assert os.path.getsize(FIXTURE) < 400_000


# -- inspect ------------------------------------------------------------------------------------


def test_inspect_reads_a_row_again_by_its_table_and_key(tmp_path: Path) -> None:
    home = tmp_path / "opencode"
    home.mkdir()
    shutil.copy2(FIXTURE, home / "opencode.db")
    dataset = tmp_path / "ds"
    assert traceidx_cli("build", "--dataset", str(dataset), str(home)).returncode == 0
    found = traceidx_cli(
        "sql",
        "--dataset",
        str(dataset),
        "--format",
        "json",
        "SELECT r.record_id, r.fingerprint FROM records r "
        "WHERE r.row.key = 'prt_24cfb08f7001qS8AxIKPEbXmlJ'",
    )
    [record] = json.loads(found.stdout)

    def inspect() -> tuple[int, dict[str, Any]]:
        done = traceidx_cli(
            "inspect", "--dataset", str(dataset), "--format", "json", str(record["record_id"])
        )
        return done.returncode, json.loads(done.stdout)

    code, info = inspect()
    assert code == 0 and info["verification"] == "verified"
    assert info["row"] == {"table": "part", "key": "prt_24cfb08f7001qS8AxIKPEbXmlJ"}
    assert info["source"] == f"{(home / 'opencode.db').resolve()}#{INTERRUPT}"
    content = json.loads(info["content"])  # the row's stored values, as framed
    assert content["table"] == "part" and content["row"]["session_id"] == INTERRUPT
    assert json.loads(content["row"]["data"])["text"].startswith("Summary:")
    with sqlite3.connect(home / "opencode.db") as writer:  # the runtime rewrites it
        writer.execute(
            "UPDATE part SET data = json_set(data, '$.text', 'other') "
            "WHERE id = 'prt_24cfb08f7001qS8AxIKPEbXmlJ'"
        )
    code, info = inspect()
    assert code == 1 and info["verification"] == "changed"
    with sqlite3.connect(home / "opencode.db") as writer:
        writer.execute("DELETE FROM part WHERE id = 'prt_24cfb08f7001qS8AxIKPEbXmlJ'")
    code, info = inspect()
    assert code == 1 and info["verification"].startswith("changed (no row")
    (home / "opencode.db").unlink()
    code, info = inspect()
    assert code == 0 and info["verification"].startswith("source missing")
