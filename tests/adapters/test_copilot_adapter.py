"""Rules of the Copilot CLI adapter, on the committed session logs (and the shared corpus's).

Each test reads real ``events.jsonl`` files written by Copilot CLI 1.0.102 and checks the draft
(or a build) against the raw lines that state the facts: inline subagents become Loops of their
own lanes, every ``session.usage_record`` counts once and no ``session.shutdown`` does, a
``/compact`` call is a model call of the session, bash exit codes come from
``shellExecution.exitCode`` while ``success`` stays true, an interrupt and a failed query end
their Loop, a cut stream's unknown input is not 0, and a Copilot home's derived files are
skipped, not read.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.support.facts import item_snapshot, loop_snapshot
from tests.support.files import FIXTURES, corpus_path
from traceidx.adapters import detect
from traceidx.adapters.copilot import CopilotAdapter
from traceidx.analysis.query import connect
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop
from traceidx.pipeline.job import build
from traceidx.projection.ingest import Settings
from traceidx.sources.discover import default_roots

HOME = FIXTURES / "generated" / "copilot" / "s1"
STATE = HOME / "session-state"
SUBAGENT = STATE / "4bdb7039-896c-4e1c-9abe-926ba5e02841" / "events.jsonl"
INTERRUPT = STATE / "9ee9dca1-62c3-4dd9-87c0-da7ec8e6a390" / "events.jsonl"
ERROR_STREAM = STATE / "41cd9db1-9db4-4c00-b526-caf7ee4ce8b5" / "events.jsonl"
COMPACTION = STATE / "d1edb74e-b7e2-440c-badd-4c21d3724618" / "events.jsonl"
FILE_TOOLS = STATE / "e5bc9f5b-ccb6-46ee-9100-6812e116c5c7" / "events.jsonl"
ALL = sorted(STATE.glob("*/events.jsonl"))
USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def draft_of(lines: list[dict[str, Any]]) -> Draft:
    adapter = CopilotAdapter()
    for position, obj in enumerate(lines):
        adapter.feed(position, obj)
    return adapter.finish()


def positions(lines: list[dict[str, Any]], kind: str, agent: str | None = "") -> list[int]:
    """The positions of records of a type (of one agent: "" the main one; None any)."""
    return [
        i
        for i, o in enumerate(lines)
        if o["type"] == kind and (agent is None or o.get("agentId", "") == agent)
    ]


def of_loop(draft: Draft, loop: DraftLoop, role: str | None = None) -> list[DraftItem]:
    return [i for i in draft.items if i.loop is loop and (role is None or i.role == role)]


def totals(samples: list[Any]) -> dict[str, int]:
    return {
        "inputTokens": sum(s.input for s in samples),
        "outputTokens": sum(s.output for s in samples),
        "cacheReadTokens": sum(s.cached or 0 for s in samples),
        "cacheWriteTokens": sum(s.cache_write or 0 for s in samples),
    }


def recorded(lines: list[dict[str, Any]], agent: str | None) -> dict[str, int]:
    """Field-wise sums of the usage_record lines (of one agent: "" main, None all)."""
    usages = [lines[i]["data"]["usage"] for i in positions(lines, "session.usage_record", agent)]
    return {key: sum(u.get(key) or 0 for u in usages) for key in USAGE_KEYS}


# -- detection ---------------------------------------------------------------------------------


def test_session_logs_are_claimed() -> None:
    for path in ALL:
        head = records(path)[:32]
        assert detect(head) is CopilotAdapter, path


def test_the_json_output_stream_is_not_claimed() -> None:
    # `copilot -p … --output-format json` prints the session's events (and the ephemeral ones)
    # on stdout: no session.start there, so such a stream saved to a file is not a session log
    stdout = corpus_path("generated", "copilot", "_aux", "s1", "subagent-s1__run1.stdout.txt")
    stream = corpus_path(
        "generated", "copilot", "_aux", "s1", "shell_multistep-s1__run1.stdout.txt"
    )
    for path in (stdout, stream):
        head = []
        for line in path.read_bytes().splitlines()[:64]:
            try:
                head.append(json.loads(line))
            except ValueError:
                continue
        assert not CopilotAdapter.claims(head), path


# -- inline subagents --------------------------------------------------------------------------


def test_inline_subagents_are_loops_of_their_own_lane() -> None:
    lines = records(SUBAGENT)
    draft = draft_of(lines)
    assert draft.session is not None
    assert draft.session.native_id == SUBAGENT.parent.name  # the folder is the session id
    assert draft.session.delegated_from is None
    started = positions(lines, "subagent.started", None)
    completed = positions(lines, "subagent.completed", None)
    agents = [lines[i]["agentId"] for i in started]
    assert len(agents) == 2 and [lines[i]["agentId"] for i in completed] == agents
    main, first, second = draft.loops
    # the main run: opened by the prompt, bounded by the process's shutdown (no outcome stated)
    assert main.start == positions(lines, "user.message")[0]
    assert (main.end, main.outcome) == (positions(lines, "session.shutdown")[-1], None)
    # each subagent run: from subagent.started to subagent.completed, completed
    for loop, agent, start, end in zip((first, second), agents, started, completed, strict=True):
        assert (loop.start, loop.end, loop.outcome) == (start, end, "completed")
        task = next(i for i in positions(lines, "user.message", agent))
        assert loop.native_id == lines[task]["data"]["interactionId"]
        assert totals(loop.usage) == recorded(lines, agent)
        assert {s.records[0] for s in loop.usage} == set(
            positions(lines, "session.usage_record", agent)
        )
        # the task it received stays a Record: the delegation is the parent's item
        assert not [i for i in draft.items if task in i.records]
    assert totals(main.usage) == recorded(lines, "")
    # the parent's task calls: a tool call and a delegation each, no Session to link to
    delegations = of_loop(draft, main, "agent.delegation")
    requests = [
        r
        for i in positions(lines, "assistant.message")
        for r in lines[i]["data"]["toolRequests"]
        if r["name"] == "task"
    ]
    assert [d.value["text"] for d in delegations] == [r["arguments"]["prompt"] for r in requests]
    assert [d.value["agent_type"] for d in delegations] == ["task", "general-purpose"]
    assert all(d.session_ref is None for d in draft.items)
    # the task's result is the subagent's final message: the report, beside a text-less output
    reports = of_loop(draft, main, "subagent.report")
    finals = [of_loop(draft, loop, "agent.final_answer")[-1] for loop in (first, second)]
    assert [r.value["text"] for r in reports] == [f.value["text"] for f in finals]
    outputs = of_loop(draft, main, "tool.output")
    assert [o.output_of for o in outputs] == [r["toolCallId"] for r in requests]
    assert all(o.value["text"] is None and o.value["failed"] is False for o in outputs)
    # no subagent tool call is the parent's
    assert {i.role for i in of_loop(draft, main)} >= {"human.request", "agent.final_answer"}
    assert not [i for i in of_loop(draft, main) if i.role == "agent.tool_call.shell"]
    assert not [i for i in of_loop(draft, main) if i.shell_command is not None]


# -- usage -------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=[p.parent.name[:8] for p in ALL])
def test_each_usage_record_counts_once_and_no_shutdown_does(path: Path) -> None:
    lines = records(path)
    draft = draft_of(lines)
    in_loops = [s for loop in draft.loops for s in loop.usage]
    usage_lines = positions(lines, "session.usage_record", None)
    compactions = positions(lines, "session.compaction_complete", None)
    assert sorted(s.records[0] for s in in_loops + draft.calls) == sorted(usage_lines + compactions)
    counted = [s for s in in_loops + draft.calls if s.records[0] in usage_lines]
    assert totals(counted) == recorded(lines, None)
    # several runs each append a shutdown with the session's running totals: the last one
    # equals the sum of the usage records (compaction excluded), and summing them would not
    shutdowns = positions(lines, "session.shutdown", None)
    last = lines[shutdowns[-1]]["data"]["modelMetrics"]
    stated = {key: sum(m["usage"].get(key) or 0 for m in last.values()) for key in USAGE_KEYS}
    assert stated == recorded(lines, None)
    if len(shutdowns) > 1:
        summed = sum(
            m["usage"]["inputTokens"]
            for i in shutdowns
            for m in lines[i]["data"]["modelMetrics"].values()
        )
        assert summed > stated["inputTokens"]


def test_a_compact_call_is_a_model_call_of_the_session() -> None:
    lines = records(COMPACTION)
    draft = draft_of(lines)
    (complete,) = positions(lines, "session.compaction_complete", None)
    used = lines[complete]["data"]["compactionTokensUsed"]
    # ``copilot -p /compact`` writes no user.message: no Loop, and the call is the session's
    assert len(draft.loops) == len(positions(lines, "user.message")) == 1
    (call,) = draft.calls
    assert call.records == (complete,)
    assert (call.input, call.output, call.cached, call.cache_write, call.reasoning) == (
        used["inputTokens"],
        used["outputTokens"],
        used["cacheReadTokens"],
        used["cacheWriteTokens"],
        None,  # not stated for a compaction call: unknown, not 0
    )
    # the non-schema model.model_call_success states the same call again: not counted twice
    (success,) = positions(lines, "model.model_call_success", None)
    wire = lines[success]["data"]["responseUsage"]
    assert (wire["prompt_tokens"], wire["completion_tokens"]) == (call.input, call.output)
    assert all(success not in s.records for loop in draft.loops for s in loop.usage)
    (summary,) = [i for i in draft.items if i.role == "runtime.compaction_summary"]
    assert summary.loop is None
    assert summary.value["summary"] == lines[complete]["data"]["summaryContent"]
    # the first run ended at its shutdown, before /compact ran
    assert draft.loops[0].end == positions(lines, "session.shutdown")[0]


@pytest.mark.parametrize("input_tokens", ["null", "left out"])
def test_a_cut_stream_s_unknown_input_is_not_zero(tmp_path: Path, input_tokens: str) -> None:
    """A stream cut before ``response.completed`` writes ``outputTokens: 0`` and an
    ``inputTokens`` that is ``null`` or left out: the call ran (a failed attempt, published as a
    model call), its usage is unknown (the contract needs both counts), not 0; the partial text
    still ends the run as its answer."""
    lines = records(COMPACTION)
    (usage,) = positions(lines, "session.usage_record")
    lines[usage]["data"]["usage"].update(inputTokens=None, outputTokens=0)
    if input_tokens == "left out":
        del lines[usage]["data"]["usage"]["inputTokens"]
    draft = draft_of(lines)
    loop = draft.loops[0]
    (call,) = loop.usage
    assert (call.outcome, call.records, call.model) == ("error", (usage,), "gpt-5")
    assert [i.role for i in of_loop(draft, loop)][-1] == "agent.final_answer"
    folder = tmp_path / "session-state" / COMPACTION.parent.name
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_bytes(b"".join(json.dumps(o).encode() + b"\n" for o in lines))
    assert build([tmp_path], tmp_path / "ds", jobs=1).exit_code == 0
    con = connect(tmp_path / "ds")
    try:
        calls = con.sql(
            "SELECT loop_id IS NULL, outcome, usage FROM model_calls ORDER BY loop_id NULLS LAST"
        ).fetchall()
        loops = con.sql("SELECT usage FROM loops").fetchall()
    finally:
        con.close()
    assert [(outside, outcome, used is None) for outside, outcome, used in calls] == [
        (False, "error", True),  # the cut stream: no usage, not zeros
        (True, "ok", False),  # the /compact call of the session
    ]
    assert loops == [(None,)]


def test_anthropic_input_includes_cache_reads_and_writes() -> None:
    path = corpus_path(
        "generated", "copilot", "s1", "session-state", "8ad70465-b11a-4097-8335-bd950b447e90",
        "events.jsonl",
    )  # fmt: skip
    lines = records(path)
    draft = draft_of(lines)
    samples = [s for loop in draft.loops for s in loop.usage]
    raw = [lines[i]["data"]["usage"] for i in positions(lines, "session.usage_record")]
    assert [(s.input, s.cached, s.cache_write, s.output) for s in samples] == [
        (u["inputTokens"], u["cacheReadTokens"], u["cacheWriteTokens"], u["outputTokens"])
        for u in raw
    ]
    assert all(u.get("reasoningTokens") is None for u in raw)
    assert all(s.reasoning is None and s.provider == "anthropic" for s in samples)
    assert all(s.cached + s.cache_write <= s.input for s in samples)  # type: ignore[operator]
    # thinking blocks are the full reasoning; without a phase the answer is found by position
    reasoning = [i for i in draft.items if i.role == "agent.reasoning"]
    assert reasoning and all(i.value["representation"] == "full" for i in reasoning)
    finals = [i for i in draft.items if i.role == "agent.final_answer"]
    assert len(finals) == 2 and all(i.strength == "heuristic" for i in finals)


# -- tools -------------------------------------------------------------------------------------


def _output(draft: Draft, call_id: str) -> DraftItem:
    (output,) = [i for i in draft.items if i.role == "tool.output" and i.output_of == call_id]
    return output


def test_exit_codes_come_from_shell_execution_and_success_stays_true() -> None:
    lines = records(SUBAGENT)
    draft = draft_of(lines)
    for i in positions(lines, "tool.execution_complete", None):
        data = lines[i]["data"]
        output = _output(draft, data["toolCallId"])
        if "shellExecution" not in data:
            assert "exit_code" not in output.value
            continue
        code = data["shellExecution"]["exitCode"]
        assert data["success"] is True  # even for a non-zero exit
        assert (output.value["exit_code"], output.value["failed"]) == (code, code != 0)
    assert any(
        lines[i]["data"].get("shellExecution", {}).get("exitCode") == 1 for i in range(len(lines))
    )


def test_a_failed_edit_has_no_exit_code() -> None:
    lines = records(FILE_TOOLS)
    draft = draft_of(lines)
    failed = [
        i for i in positions(lines, "tool.execution_complete") if not lines[i]["data"]["success"]
    ]
    (position,) = failed
    data = lines[position]["data"]
    output = _output(draft, data["toolCallId"])
    assert "result" not in data and data["error"]["message"] == "No match found"
    assert output.value == {"failed": True, "text": "No match found"}
    for i in positions(lines, "tool.execution_complete"):
        if lines[i]["data"].get("toolTelemetry", {}).get("properties", {}).get("command") == "view":
            value = _output(draft, lines[i]["data"]["toolCallId"]).value
            assert value["failed"] is False and "exit_code" not in value


# -- ends --------------------------------------------------------------------------------------


def test_an_interrupt_ends_the_run_and_its_command_has_no_result() -> None:
    lines = records(INTERRUPT)
    draft = draft_of(lines)
    (abort,) = positions(lines, "abort")
    assert lines[abort]["data"]["reason"] == "user_initiated"
    (loop,) = draft.loops
    assert (loop.end, loop.outcome) == (abort, "interrupted")
    (start,) = positions(lines, "tool.execution_start")
    call_id = lines[start]["data"]["toolCallId"]
    assert not positions(lines, "tool.execution_complete")
    (call,) = [i for i in draft.items if i.call_id == call_id]
    assert call.shell_command == "sleep 30 && echo tests-done"
    assert not [i for i in draft.items if i.role == "tool.output"]
    assert not [i for i in draft.items if i.role == "agent.final_answer"]


def test_a_query_that_fails_for_good_fails_its_run() -> None:
    lines = records(ERROR_STREAM)
    draft = draft_of(lines)
    (error,) = positions(lines, "session.error")
    first, second = draft.loops
    assert first.outcome is None and first.end == positions(lines, "session.shutdown")[0]
    assert (second.end, second.outcome) == (error, "failed")
    assert lines[error]["data"]["originatingMessageId"] == lines[second.start]["data"]["messageId"]
    (notice,) = of_loop(draft, second, "runtime.notice")
    assert notice.value["text"] == lines[error]["data"]["message"]
    # the calls that did answer before the failure count; failed attempts wrote nothing
    assert totals(second.usage) == {
        key: sum(
            lines[i]["data"]["usage"][key] for i in positions(lines, "session.usage_record")[2:]
        )
        for key in USAGE_KEYS
    }
    assert not of_loop(draft, second, "agent.final_answer")
    # the responses API labels its texts: the first run's answer is structural
    (final,) = of_loop(draft, first, "agent.final_answer")
    assert final.strength == "structural"
    reasoning = of_loop(draft, first, "agent.reasoning")
    assert reasoning and all(i.value["representation"] == "summary" for i in reasoning)


# -- a Copilot home ----------------------------------------------------------------------------


def _home(tmp_path: Path) -> Path:
    """A copy of the committed Copilot home, with the derived files a real one holds."""
    home = tmp_path / ".copilot"
    shutil.copytree(HOME, home)
    with sqlite3.connect(home / "session-store.db") as db:  # the CLI's index over sessions
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT)")
        db.execute("INSERT INTO sessions VALUES ('4bdb7039', '/home/dev/projects/subagent')")
    db.close()
    with sqlite3.connect(home / "session-state" / COMPACTION.parent.name / "session.db") as db:
        db.execute("CREATE TABLE todos (id TEXT)")
    db.close()
    return home


def test_the_home_s_session_logs_are_found_and_its_derived_files_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _home(tmp_path)
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_roots()["copilot"] == [home / "session-state"]
    monkeypatch.setenv("COPILOT_HOME", str(home))
    assert default_roots()["copilot"] == [home / "session-state"]
    only = Settings(runtimes=frozenset({"copilot"}))
    report = build(None, tmp_path / "ds", settings=only, jobs=1)
    assert report.exit_code == 0
    # many files of one name: each is its own source, its folder names its session
    logs = sorted(str(p) for p in (home / "session-state").glob("*/events.jsonl"))
    assert sorted(r.locator for r in report.results if r.state == "indexed") == logs
    # a file of the home that is not a log (a session's session.db, should a framing take it
    # up) is skipped with its reason, never failed
    others = [r for r in report.results if r.state != "indexed"]
    assert all(r.state == "skipped" and r.reason for r in others), others
    con = connect(tmp_path / "ds")
    try:
        sources = con.sql("SELECT source_id, locator FROM sources").fetchall()
        sessions = con.sql("SELECT native_id, source_ids[1] FROM sessions").fetchall()
    finally:
        con.close()
    assert len({s for s, _ in sources}) == len(sources) == len(logs) == 5
    folder = {s: Path(loc).parent.name for s, loc in sources}
    assert sorted((native, folder[s]) for native, s in sessions) == sorted(
        (Path(p).parent.name, Path(p).parent.name) for p in logs
    )
    # the whole home, and its derived files named one by one: skipped with a reason, never read
    named = [
        home / "session-store.db",
        home / "session-state" / COMPACTION.parent.name / "session.db",
        home / "session-state" / SUBAGENT.parent.name / "workspace.yaml",
    ]
    for paths, dataset in (([home], "whole"), (named, "named")):
        report = build(list(paths), tmp_path / dataset, jobs=1)
        assert report.exit_code == 0 and not report.problems
        others = [r for r in report.results if Path(r.locator).name != "events.jsonl"]
        assert all(r.state == "skipped" and r.reason for r in others), others
        assert "failed" not in {r.state for r in report.results}
    assert sorted(r.locator for r in others) == sorted(str(p) for p in named)


# -- inputs while a run goes on (shapes of the published schema; the corpus has none) ----------


def _interactive(delivery: str, at: int) -> tuple[list[dict[str, Any]], int]:
    """The error_stream session as one interactive process (no shutdown and resume between
    its runs), its second prompt delivered as `delivery` and moved to position `at` of the
    first run; the prompt's new position."""
    lines = records(ERROR_STREAM)
    second = positions(lines, "user.message")[1]
    prompt = lines[second]
    prompt["data"]["delivery"] = delivery
    rest = [
        o
        for i, o in enumerate(lines)
        if i != second and o["type"] not in ("session.shutdown", "session.resume")
    ]
    rest.insert(at, prompt)
    return rest, at


def test_a_queued_prompt_opens_its_loop_when_its_run_starts() -> None:
    for at in (6, 12):  # written while the first run goes on, or right after its answer
        lines, queued = _interactive("queued", at)
        draft = draft_of(lines)
        first, second = draft.loops
        run = lines[queued]["data"]["interactionId"]
        begins = next(
            i
            for i in positions(lines, "assistant.turn_start")
            if lines[i]["data"]["interactionId"] == run
        )
        assert (second.start, second.native_id) == (queued, run)
        assert (first.end, first.outcome) == (begins, None)
        (request,) = of_loop(draft, second, "human.request")
        assert (
            request.records == [queued]
            and request.value["text"] == lines[queued]["data"]["content"]
        )
        # the first run keeps all of its own work and its answer
        assert [i.role for i in of_loop(draft, first)][-1] == "agent.final_answer"
        assert len(first.usage) == 2 and second.outcome == "failed"


def test_a_steering_prompt_joins_the_running_loop() -> None:
    lines, steered = _interactive("steering", 6)
    draft = draft_of(lines)
    (loop,) = [x for x in draft.loops if x.start < steered]
    (steering,) = [i for i in draft.items if i.role == "human.steering"]
    assert steering.loop is loop and steering.records == [steered]
    # the runtime's turns of the steered interaction stay in that Loop
    assert len(draft.loops) == 1 and loop.outcome == "failed"


def test_a_background_subagent_s_start_is_activity_not_its_report() -> None:
    lines = records(SUBAGENT)
    for i in positions(lines, "subagent.started", None)[:1]:
        lines[i]["data"]["executionMode"] = "background"
    draft = draft_of(lines)
    roles = [i.role for i in draft.items if i.role.startswith("subagent.")]
    assert roles == ["subagent.activity", "subagent.report"]


def _variants() -> list[list[dict[str, Any]]]:
    background = records(SUBAGENT)
    background[positions(background, "subagent.started", None)[0]]["data"]["executionMode"] = (
        "background"
    )
    return [
        _interactive("queued", 6)[0],
        _interactive("queued", 12)[0],
        _interactive("steering", 6)[0],
        background,
    ]


@pytest.mark.parametrize("lines", _variants(), ids=["queued-mid", "queued-after", "steer", "bg"])
def test_draining_the_variants_changes_nothing(lines: list[dict[str, Any]]) -> None:
    kept = draft_of(lines)
    adapter = CopilotAdapter()
    loops: list[Any] = []
    items: list[Any] = []
    for position, obj in enumerate(lines):
        adapter.feed(position, obj)
        got_loops, got_items = adapter.drain()
        loops += [loop_snapshot(x) for x in got_loops]
        items += [item_snapshot(x) for x in got_items]
    rest = adapter.finish()
    loops += [loop_snapshot(x) for x in rest.loops]
    items += [item_snapshot(x) for x in rest.items]
    assert loops == [loop_snapshot(x) for x in kept.loops]
    assert items == [item_snapshot(x) for x in kept.items]


def test_the_committed_copies_are_the_corpus_s() -> None:
    """The committed logs are byte-identical copies, and their expect.json is the corpus's
    filtered to their sessions."""
    corpus = corpus_path("generated", "copilot")
    for path in ALL:
        assert path.read_bytes() == (corpus / path.relative_to(HOME.parent)).read_bytes()
    truth = json.loads((corpus / "expect.json").read_text("utf-8"))
    ours = json.loads((HOME.parent / "expect.json").read_text("utf-8"))
    names = {p.parent.name for p in ALL}
    assert {k: v for k, v in ours.items() if k != "sessions"} == {
        k: v for k, v in truth.items() if k != "sessions"
    }
    assert ours["sessions"] == [s for s in truth["sessions"] if s["native_session_id"] in names]
    assert sorted(s["file"] for s in ours["sessions"]) == sorted(
        str(p.relative_to(HOME.parent)) for p in ALL
    )
