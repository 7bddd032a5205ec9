"""OpenClaw: its transcripts told from Pi's, read from JSON lines (up to 2026.7) and from its
database (2026.8 on, large events zstd-compressed), and the facts where it differs from Pi
(exec exit codes, reasoning tokens, the mirror after an abort, no error flag on a non-zero exit).

The generated sessions against their ground truth are in ``tests/corpus/test_expect.py``;
database framing in general in ``tests/sources/test_rowsource.py``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import msgspec
import pytest
import zstandard

from tests.support.facts import (
    assert_database_fixture_is_the_corpus_s,
    database_sessions,
    decoded_records,
    dict_rows,
)
from tests.support.files import FIXTURES, WITH_CORPUS, fixture_path, traceidx_cli
from traceidx.adapters import adapter, detect
from traceidx.adapters.openclaw import OpenClawAdapter
from traceidx.adapters.pi import PiAdapter
from traceidx.adapters.pi.wire import is_header
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.runtimes import RUNTIMES, names
from traceidx.sources import rowsource
from traceidx.sources.discover import default_roots, discover

LINES = fixture_path("generated", "openclaw")
SESSIONS = LINES / "s1" / "agents" / "main" / "sessions"
DATABASE = fixture_path(
    "generated", "openclaw-sqlite", "s1", "agents", "main", "agent", "openclaw-agent.sqlite"
)
#: sessions of the JSON-lines fixture
INTERRUPT = "056b55ae-53d2-442a-842f-cac5f13259dd"
FAILING = "3fd5a91b-fd4e-44f4-a57e-ad277b6f7aec"
ANTHROPIC = "5b5fddb2-c7f3-4561-96a1-cd306dd80377"
LONG = "f681de2b-6c52-430f-b1bd-67ae85626aaa"
COMPACTION = "3bcf841e-6ab1-4676-bc08-95a279de7374"
#: sessions of the database fixture
DB_INTERRUPT = "ad24f5e9-a619-4dde-a47e-7f1b33d32554"
DB_FAILING = "a233150b-bde0-4d50-8bf9-32dc858382ac"
DB_LONG = "0e73f0c5-a4fa-43e9-a985-84e008ac6667"
DB_COMPACTION = "c4d8092d-9e56-43e6-9c6d-a79db180552a"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both committed OpenClaw fixtures built once."""
    out = tmp_path_factory.mktemp("openclaw") / "ds"
    report = build([LINES, DATABASE.parent], out, jobs=1)
    assert report.exit_code == 0, [(r.locator, r.reason) for r in report.results]
    return out


def _rows(dataset: Path, native: str, sql: str) -> list[dict[str, Any]]:
    con = connect(dataset)
    try:
        session = f"(SELECT session_id FROM sessions WHERE native_id = '{native}')"
        return dict_rows(con, sql.replace("{session}", session))
    finally:
        con.close()


def _claimants(path: Path) -> list[str]:
    head = [o for _, objs in decoded_records(path)[:32] for o in objs]
    return [name for name in names() if adapter(name).claims(head)]


# -- detection ------------------------------------------------------------------------------------


def test_openclaw_sessions_are_claimed_by_openclaw_and_pi_sessions_by_pi() -> None:
    """OpenClaw keeps Pi's header; the entries only it writes tell its files apart, and its
    database sessions open with their ``session_windows`` row."""
    ours = sorted(SESSIONS.glob("*.jsonl")) + database_sessions(DATABASE.parent)
    assert len(ours) == 15 + 8
    for path in ours:
        assert _claimants(path) == ["openclaw"], path.name
    pis = sorted((FIXTURES / "generated" / "pi").glob("*.jsonl"))
    assert pis
    for path in pis:
        assert _claimants(path) == ["pi"], path.name


def test_a_pi_format_head_is_openclaws_only_with_an_entry_only_openclaw_writes() -> None:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-12-07T14:35:27Z"}
    user = {"type": "message", "id": "a", "message": {"role": "user", "content": "hi"}}
    snapshot = {"type": "custom", "customType": "model-snapshot", "data": {}, "id": "b"}
    error = {"type": "custom", "customType": "openclaw:prompt-error", "data": {}, "id": "c"}
    marked = {**user, "message": {**user["message"], "__openclaw": {"senderIsOwner": True}}}
    other = {"type": "custom", "customType": "my-extension", "data": {}, "id": "d"}
    assert detect([header, user]) is adapter("pi")
    assert detect([header, other, user]) is adapter("pi")
    for mark in (snapshot, error, marked):
        assert detect([header, mark, user]) is OpenClawAdapter
        assert not adapter("pi").claims([header, mark, user])
    assert not OpenClawAdapter.claims([snapshot, header])  # no header first: neither
    assert detect([snapshot, header]) is None


# -- where the sessions are -----------------------------------------------------------------------


def test_the_state_folder_variables_name_the_trace_homes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("OPENCLAW_STATE_DIR", raising=False)
    monkeypatch.delenv("OPENCLAW_HOME", raising=False)
    assert set(default_roots()["openclaw"]) == {tmp_path / ".openclaw" / "agents"}
    monkeypatch.setenv("OPENCLAW_STATE_DIR", "/state")
    monkeypatch.setenv("OPENCLAW_HOME", "/people/me")
    assert default_roots()["openclaw"] == [
        Path("/state/agents"),
        Path("/people/me/.openclaw/agents"),
    ]


def test_a_build_without_arguments_reads_both_stores_under_the_state_folder(
    tmp_path: Path,
) -> None:
    """`traceidx build` with no path finds the transcripts and the database of every agent
    under ``$OPENCLAW_STATE_DIR/agents``; a run trajectory beside a transcript is skipped and
    said why."""
    state = tmp_path / "state"
    sessions = state / "agents" / "main" / "sessions"
    shutil.copytree(SESSIONS, sessions)
    (sessions / f"{FAILING}.trajectory.jsonl").write_text(
        '{"type":"session.started","ts":"2026-12-07T14:35:27.000Z","runId":"r1","data":{}}\n',
        encoding="utf-8",
    )
    (state / "agents" / "work" / "agent").mkdir(parents=True)
    shutil.copy2(DATABASE, state / "agents" / "work" / "agent" / "openclaw-agent.sqlite")
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"HOME": str(empty), "OPENCLAW_STATE_DIR": str(state), "XDG_DATA_HOME": str(empty)}
    for variable in (
        "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "DSH_HOME", "GEMINI_CLI_HOME",
        "PI_CODING_AGENT_DIR", "QWEN_RUNTIME_DIR", "QWEN_HOME", "OPENCODE_DB", "OPENCLAW_HOME",
    ):  # fmt: skip
        env[variable] = str(empty / variable.lower())
    dataset = tmp_path / "ds"
    done = traceidx_cli("build", "--dataset", str(dataset), env=env)
    assert done.returncode == 0, done.stderr
    con = connect(dataset)
    try:
        found = dict_rows(con, "SELECT runtime, count(*) AS n FROM sessions GROUP BY 1")
    finally:
        con.close()
    assert found == [{"runtime": "openclaw", "n": 15 + 8}]
    listed = discover([state])
    [skipped] = listed.superseded
    assert skipped.locator.endswith(f"{FAILING}.trajectory.jsonl")
    assert skipped.by.endswith(f"{FAILING}.jsonl") and "trajectory" in skipped.why
    assert "trajectory" in done.stdout + done.stderr


def test_transcripts_an_earlier_build_read_as_pis_become_openclaws(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before this adapter Pi's claimed OpenClaw's transcripts; Pi's new adapter version makes
    the next build read its sources again, and they are OpenClaw's."""
    dataset = tmp_path / "ds"
    with monkeypatch.context() as before:
        before.setattr(OpenClawAdapter, "claims", classmethod(lambda cls, head: False))
        before.setattr(PiAdapter, "claims", classmethod(lambda cls, head: is_header(head[0])))
        before.setitem(RUNTIMES, "pi", dataclasses.replace(RUNTIMES["pi"], version=2))
        assert build([SESSIONS], dataset, jobs=1).exit_code == 0
        con = connect(dataset)
        try:
            assert dict_rows(con, "SELECT DISTINCT runtime FROM sessions") == [{"runtime": "pi"}]
        finally:
            con.close()
    report = build([SESSIONS], dataset, jobs=1)
    assert report.exit_code == 0
    assert {r.state for r in report.results} == {"indexed"} and len(report.results) == 15
    con = connect(dataset)
    try:
        found = dict_rows(con, "SELECT runtime, count(*) AS n FROM sessions GROUP BY 1")
    finally:
        con.close()
    assert found == [{"runtime": "openclaw", "n": 15}]


# -- the database ----------------------------------------------------------------------------


def test_an_event_stored_compressed_is_read_as_the_entry_it_holds() -> None:
    """OpenClaw stores an event of 1 KiB or more as zstd with ``event_json`` NULL; the framed
    row holds the entry in ``event_json`` (and not the compressed bytes)."""
    with sqlite3.connect(f"file:{DATABASE}?mode=ro&immutable=1", uri=True) as con:
        packed = con.execute(
            "SELECT seq, event_zstd, event_utf8_bytes FROM transcript_events "
            "WHERE session_id = ? AND event_json IS NULL ORDER BY seq",
            (DB_LONG,),
        ).fetchall()
    assert [seq for seq, _, _ in packed] == [9, 10]
    lines = [json.loads(line) for line in rowsource.lines(f"{DATABASE}#{DB_LONG}")]
    events = {int(o["row"]["seq"]): o["row"] for o in lines if o["table"] == "transcript_events"}
    for seq, blob, size in packed:
        row = events[seq]
        assert "event_zstd" not in row
        text = zstandard.ZstdDecompressor().stream_reader(blob).read()
        assert row["event_json"] == text.decode("utf-8") and len(text) == size
    entry = json.loads(events[9]["event_json"])
    assert entry["message"]["role"] == "toolResult"
    assert entry["message"]["details"]["exitCode"] == 0


def test_the_long_output_in_a_compressed_row_is_a_truncated_tool_output(dataset: Path) -> None:
    outputs = _rows(
        dataset,
        DB_LONG,
        "SELECT semantic.tool_output AS o FROM items WHERE session_id = {session} "
        "AND semantic.role = 'tool.output' ORDER BY loop_position",
    )
    assert [o["o"]["exit_code"] for o in outputs] == [0, 0]
    long = outputs[1]["o"]
    assert long["runtime_truncated"] is True and long["failed"] is False
    assert long["text"]["value"].startswith("1\n2\n3\n")
    assert outputs[0]["o"]["runtime_truncated"] is None  # not stated: not cut


def _database(path: Path, events: list[tuple[int, str | None, bytes | None]]) -> None:
    """An ``openclaw-agent.sqlite`` of one session with the given (seq, json, zstd) events."""
    with sqlite3.connect(path) as con:
        con.executescript(
            "CREATE TABLE session_windows (session_id TEXT PRIMARY KEY, session_key TEXT, "
            "created_at INTEGER, updated_at INTEGER);"
            "CREATE TABLE transcript_events (session_id TEXT, seq INTEGER, event_json TEXT, "
            "created_at INTEGER, event_zstd BLOB, PRIMARY KEY (session_id, seq));"
        )
        con.execute("INSERT INTO session_windows VALUES ('s1', 'agent:main:x', 1, 2)")
        for seq, text, blob in events:
            con.execute(
                "INSERT INTO transcript_events VALUES ('s1', ?, ?, ?, ?)", (seq, text, seq, blob)
            )


def test_a_compressed_event_that_does_not_decode_stays_as_stored(tmp_path: Path) -> None:
    header = '{"type":"session","version":4,"id":"s1","timestamp":"2026-12-07T15:39:26.285Z"}'
    user = {"type": "message", "id": "u", "timestamp": "2026-12-07T15:39:27.000Z"}
    user["message"] = {"role": "user", "content": "hello " * 300}
    packed = zstandard.ZstdCompressor().compress(msgspec.json.encode(user))
    path = tmp_path / "openclaw-agent.sqlite"
    _database(path, [(0, header, None), (1, None, packed), (2, None, b"not zstd")])
    lines = [json.loads(line) for line in rowsource.lines(f"{path}#s1")]
    assert [o["table"] for o in lines] == ["session_windows", *["transcript_events"] * 3]
    assert json.loads(lines[2]["row"]["event_json"]) == user
    damaged = lines[3]["row"]
    assert damaged["event_json"] is None and damaged["event_zstd"] == "bm90IHpzdGQ="
    report = build([path], tmp_path / "ds", jobs=1)
    [result] = report.results
    assert result.state == "indexed", result.reason
    con = connect(tmp_path / "ds")
    try:
        [item] = dict_rows(con, "SELECT semantic.role AS role FROM items")
        types = dict_rows(con, "SELECT native_type FROM records ORDER BY source_position")
    finally:
        con.close()
    assert item["role"] == "human.request"
    assert [t["native_type"] for t in types] == [
        "session_windows", "session", "message/user", "transcript_events",
    ]  # fmt: skip


def test_a_packed_value_decodes_only_to_bounded_utf8_text(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "naïve café — 日本語 ✅ " * 40
    frame = zstandard.ZstdCompressor().compress(text.encode("utf-8"))
    assert rowsource.unpack("zstd", frame) == text
    assert rowsource.unpack("gzip", frame) is None  # a codec the framing does not know
    assert rowsource.unpack("zstd", frame[: len(frame) // 2]) is None  # a cut frame
    assert rowsource.unpack("zstd", zstandard.ZstdCompressor().compress(b"\xff\xfe")) is None
    unsized = zstandard.ZstdCompressor(write_content_size=False).compress(text.encode("utf-8"))
    assert rowsource.unpack("zstd", unsized) == text
    monkeypatch.setattr(rowsource, "MAX_UNPACKED", len(text.encode("utf-8")) - 1)
    assert rowsource.unpack("zstd", frame) is None  # more than it may decode to
    assert rowsource.unpack("zstd", unsized) is None  # found while decoding


def test_inspect_reads_an_event_again_among_its_own_sessions_rows(tmp_path: Path) -> None:
    """Every session numbers its events from 0: a record is found again by its session and
    its ``seq``, not by the first session holding that number."""
    home = tmp_path / "agent"
    home.mkdir()
    shutil.copy2(DATABASE, home / "openclaw-agent.sqlite")
    dataset = tmp_path / "ds"
    assert traceidx_cli("build", "--dataset", str(dataset), str(home)).returncode == 0
    found = traceidx_cli(
        "sql",
        "--dataset",
        str(dataset),
        "--format",
        "json",
        "SELECT r.record_id FROM records r JOIN sessions s ON r.source_id = s.source_ids[1] "
        f"WHERE s.native_id = '{DB_FAILING}' AND r.row.key = '0'",
    )
    [record] = json.loads(found.stdout)
    done = traceidx_cli(
        "inspect", "--dataset", str(dataset), "--format", "json", str(record["record_id"])
    )
    info = json.loads(done.stdout)
    assert done.returncode == 0 and info["verification"] == "verified"
    assert info["row"] == {"table": "transcript_events", "key": "0"}
    assert json.loads(json.loads(info["content"])["row"]["event_json"])["id"] == DB_FAILING


def _octet_length(value: object) -> int | None:
    """SQL ``octet_length`` (OpenClaw's checks use it; SQLite has it from 3.43)."""
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return len(value) if isinstance(value, bytes) else None


def test_search_finds_a_phrase_in_a_compressed_event(tmp_path: Path) -> None:
    home = tmp_path / "agent"
    home.mkdir()
    database = home / "openclaw-agent.sqlite"
    shutil.copy2(DATABASE, database)
    phrase = "quokka marmalade packed zeppelin"
    with sqlite3.connect(database) as con:
        con.create_function("octet_length", 1, _octet_length, deterministic=True)
        [blob] = con.execute(
            "SELECT event_zstd FROM transcript_events WHERE session_id = ? AND seq = 9",
            (DB_LONG,),
        ).fetchone()
        text = zstandard.ZstdDecompressor().stream_reader(blob).read().decode("utf-8")
        planted = text.replace("\\n2\\n", f"\\n{phrase}\\n", 1).encode("utf-8")
        assert len(planted) > len(text)
        con.execute(
            "UPDATE transcript_events SET event_zstd = ?, event_utf8_bytes = ? "
            "WHERE session_id = ? AND seq = 9",
            (zstandard.ZstdCompressor().compress(planted), len(planted), DB_LONG),
        )
    dataset = tmp_path / "ds"
    assert traceidx_cli("build", "--dataset", str(dataset), str(home)).returncode == 0
    done = traceidx_cli("search", "--dataset", str(dataset), "--format", "json", *phrase.split())
    rows = json.loads(done.stdout)
    assert done.returncode == 0 and rows
    assert {(r["runtime"], r["session"]) for r in rows} == {("openclaw", DB_LONG)}
    inspected = traceidx_cli("inspect", "--dataset", str(dataset), str(rows[0]["record_id"]))
    assert inspected.returncode == 0, inspected.stderr


# -- facts where OpenClaw differs from Pi -------------------------------------------------------


@pytest.mark.parametrize("native", [FAILING, DB_FAILING])
def test_exec_states_every_exit_code_and_a_non_zero_one_fails(dataset: Path, native: str) -> None:
    """2026.7 flags a non-zero exit ``isError``, 2026.9 does not: ``details.exitCode`` says it
    in both (and 0 for a command that succeeded)."""
    calls = _rows(
        dataset,
        native,
        "SELECT tool_name, kind, exit_code, failed, duration_ms FROM tool_calls "
        "WHERE session_id = {session} ORDER BY item_id",
    )
    assert sorted((c["exit_code"], c["failed"]) for c in calls) == [
        (1, True), (2, True), (127, True),
    ]  # fmt: skip
    assert {c["tool_name"] for c in calls} == {"exec"} and {c["kind"] for c in calls} == {"shell"}
    assert all(isinstance(c["duration_ms"], int) for c in calls)
    succeeded = _rows(
        dataset,
        INTERRUPT,
        "SELECT exit_code, failed FROM tool_calls WHERE session_id = {session} "
        "AND exit_code IS NOT NULL",
    )
    assert succeeded == [{"exit_code": 0, "failed": False}] * 4


def test_the_mirror_after_an_abort_is_no_call_and_no_answer(dataset: Path) -> None:
    """After SIGINT 2026.7 may append an assistant message with ``api: "cli"`` repeating the
    run's text and its usage summed over the run's calls: it is neither a call nor an answer."""
    mirror = next(
        json.loads(line)
        for line in (SESSIONS / f"{INTERRUPT}.jsonl").read_text("utf-8").splitlines()
        if '"api":"cli"' in line
    )
    loops = _rows(
        dataset,
        INTERRUPT,
        'SELECT loop_id, "end".outcome AS outcome, usage FROM loops '
        "WHERE session_id = {session} ORDER BY session_position",
    )
    assert [loop["outcome"] for loop in loops] == ["completed", "interrupted"]
    calls = _rows(
        dataset,
        INTERRUPT,
        f"SELECT usage, outcome FROM model_calls WHERE loop_id = {loops[1]['loop_id']} "
        "AND usage IS NOT NULL",
    )
    summed = {m: sum(c["usage"][m] for c in calls) for m in ("output",)}
    assert len(calls) == 2 and summed["output"] == mirror["message"]["usage"]["output"]
    assert loops[1]["usage"]["output"] == mirror["message"]["usage"]["output"]  # counted once
    answers = _rows(
        dataset,
        INTERRUPT,
        f"SELECT count(*) AS n FROM items WHERE loop_id = {loops[1]['loop_id']} "
        "AND semantic.role = 'agent.final_answer'",
    )
    assert answers == [{"n": 0}]
    killed = _rows(
        dataset,
        INTERRUPT,
        "SELECT t.exit_code, t.failed FROM tool_calls t JOIN items i USING (item_id) "
        f"WHERE t.loop_id = {loops[1]['loop_id']} ORDER BY i.loop_position",
    )
    assert killed[-1] == {"exit_code": None, "failed": True}  # signalled: no code


def test_an_interrupt_in_the_database_era_leaves_the_call_open(dataset: Path) -> None:
    loops = _rows(
        dataset,
        DB_INTERRUPT,
        'SELECT loop_id, "end" AS e FROM loops WHERE session_id = {session} '
        "ORDER BY session_position",
    )
    assert loops[0]["e"]["outcome"] == "completed" and loops[1]["e"] is None
    killed = _rows(
        dataset,
        DB_INTERRUPT,
        "SELECT t.output_count, t.exit_code FROM tool_calls t JOIN items i USING (item_id) "
        f"WHERE t.loop_id = {loops[1]['loop_id']} ORDER BY i.loop_position",
    )
    assert killed[-1] == {"output_count": 0, "exit_code": None}


def test_reasoning_tokens_are_stated_on_chat_completions_only(dataset: Path) -> None:
    chat = _rows(
        dataset,
        FAILING,
        "SELECT usage.reasoning AS r FROM model_calls WHERE session_id = {session}",
    )
    assert chat and all(isinstance(c["r"], int) for c in chat)
    stated = [
        json.loads(line)["message"]["usage"]["reasoningTokens"]
        for line in (SESSIONS / f"{FAILING}.jsonl").read_text("utf-8").splitlines()
        if '"reasoningTokens"' in line
    ]
    assert sorted(c["r"] for c in chat) == sorted(stated)
    anthropic = _rows(
        dataset,
        ANTHROPIC,
        "SELECT usage.reasoning AS r, usage.cache_write AS w FROM model_calls "
        "WHERE session_id = {session}",
    )
    assert anthropic and all(c["r"] is None and c["w"] > 0 for c in anthropic)


@pytest.mark.parametrize(
    ("native", "outcomes"),
    [
        (COMPACTION, ["completed", "completed", "completed", "completed"]),
        (DB_COMPACTION, ["completed", "completed", "failed", "completed"]),
    ],
)
def test_a_context_overflow_compacts_in_its_turn_or_ends_it(
    dataset: Path, native: str, outcomes: list[str]
) -> None:
    """2026.7 compacts the session and retries the turn; 2026.9 ends the turn failed."""
    loops = _rows(
        dataset,
        native,
        'SELECT loop_id, "end".outcome AS outcome FROM loops WHERE session_id = {session} '
        "ORDER BY session_position",
    )
    assert [loop["outcome"] for loop in loops] == outcomes
    roles = _rows(
        dataset,
        native,
        f"SELECT semantic.role AS role FROM items WHERE loop_id = {loops[2]['loop_id']} "
        "ORDER BY loop_position",
    )
    compacted = [r["role"] for r in roles].count("runtime.compaction_summary")
    notices = [r["role"] for r in roles].count("runtime.notice")
    assert (compacted, notices) == ((1, 1) if native == COMPACTION else (0, 1))


# -- the committed fixture ----------------------------------------------------------------------


@pytest.mark.skipif(not WITH_CORPUS, reason="the shared corpus is not here")
def test_the_database_fixture_holds_the_corpus_rows_of_its_sessions() -> None:
    """The committed database is the corpus's with the other sessions' rows and the full-text
    and memory indexes' rows deleted, then vacuumed: its sessions frame to the same lines."""
    assert_database_fixture_is_the_corpus_s(DATABASE, "openclaw-sqlite", 8)
