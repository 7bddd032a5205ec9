"""Rules of the Qwen Code adapter, on the generated chat files and on small record sequences.

The generated set (the shared corpus's whole folder when present, else the committed copies)
is built and read back through the views: usage only from the ``assistant`` records (never the
``ui_telemetry`` repeats, never ``usage_record.jsonl``), exit codes from
``toolCallResult.resultDisplay.exitCode``, durations from the ``qwen-code.tool_call`` events,
interrupts from a cancelled call, failures from ``qwen-code.api_error`` events. Record sequences
fed straight to the adapter cover what the generated set does not show (retries that recover, a
run that goes on after an answer, Gemini-API usage, subagent files, compaction, titles).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.facts import dict_rows
from tests.support.files import fixture_path, generated
from traceidx.adapters import adapter, detect
from traceidx.adapters.qwen import QwenAdapter
from traceidx.analysis.query import connect
from traceidx.domain.drafts import Draft
from traceidx.pipeline.job import build
from traceidx.sources.discover import default_roots

FOLDER = generated("qwen")
MANIFEST = json.loads((FOLDER / "manifest.json").read_text("utf-8"))
#: a line of ``~/.qwen/usage_record.jsonl`` as Qwen Code 0.24.4 wrote it (the corpus's first)
USAGE_RECORD = (
    '{"version":1,"sessionId":"0046954d-0423-46c1-afef-1be0b6cc21bb","timestamp":1796587911120,'
    '"startTime":1796587908564,"project":"/home/dev/projects/plain_qa-s1","durationMs":2556,'
    '"totalLatencyMs":1000,"models":{"qwen3-coder-plus":{"requests":1,"inputTokens":4744,'
    '"outputTokens":416,"cachedTokens":0,"thoughtsTokens":0,"totalTokens":5160,'
    '"totalLatencyMs":1000}},"tools":{"totalCalls":0,"totalSuccess":0,"totalFail":0,"byName":{}},'
    '"files":{"linesAdded":0,"linesRemoved":0},"skills":{"totalCalls":0,"totalSuccess":0,'
    '"totalFail":0,"byName":{}}}'
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The generated folder built as a Qwen Code home, with a usage summary beside it."""
    home = tmp_path_factory.mktemp("qwen-home")
    shutil.copytree(FOLDER / "projects", home / "projects")
    usage = FOLDER / "usage_record.jsonl"
    if usage.is_file():
        shutil.copyfile(usage, home / "usage_record.jsonl")
    else:
        (home / "usage_record.jsonl").write_text(USAGE_RECORD + "\n", "utf-8")
    dataset = home.parent / f"{home.name}-ds"
    report = build([home], dataset, jobs=1)
    assert report.exit_code == 0
    con = connect(dataset)
    yield report, con
    con.close()


def _session(con: Any, scenario: str) -> dict[str, Any]:
    truth = next(s for s in MANIFEST["sessions"] if s["scenario"] == scenario)
    rows = dict_rows(con, f"SELECT * FROM sessions WHERE native_id = '{truth['session_id']}'")
    assert len(rows) == 1, scenario
    return {**rows[0], "truth": truth}


def _tools(con: Any, session_id: int) -> list[dict[str, Any]]:
    return dict_rows(
        con,
        "SELECT t.*, l.session_position FROM tool_calls t JOIN loops l USING (loop_id) "
        "JOIN items i USING (item_id) "
        f"WHERE t.session_id = {session_id} ORDER BY l.session_position, i.loop_position",
    )


def test_the_usage_summary_is_skipped_and_every_chat_is_a_qwen_session(built: Any) -> None:
    report, con = built
    skipped = {Path(r.locator).name: r.reason for r in report.results if r.state == "skipped"}
    assert list(skipped) == ["usage_record.jsonl"]
    assert skipped["usage_record.jsonl"].startswith("no adapter recognises its structure")
    sessions = dict_rows(con, "SELECT native_id, runtime FROM sessions")
    assert {s["native_id"] for s in sessions} == {s["session_id"] for s in MANIFEST["sessions"]}
    assert {s["runtime"] for s in sessions} == {"qwen"}


def test_usage_counts_each_assistant_record_once(built: Any) -> None:
    """A call per ``assistant`` record with ``usageMetadata``; the ``api_response`` telemetry
    beside it and the usage summary are the same counts again and add nothing."""
    _, con = built
    for truth in MANIFEST["sessions"]:
        path = FOLDER / truth["file"]
        records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        metas = [r["usageMetadata"] for r in records if r["type"] == "assistant"]
        calls = dict_rows(
            con,
            "SELECT c.model, c.provider, c.usage FROM model_calls c JOIN sessions s "
            f"USING (session_id) WHERE s.native_id = '{truth['session_id']}'",
        )
        assert len(calls) == len(metas), truth["key"]
        assert {c["model"] for c in calls} <= {"qwen3-coder-plus", "qwen3-coder-flash"}
        assert {c["provider"] for c in calls} <= {None}  # the trace names no provider
        recorded = truth["usage_recorded_total"]
        prompt, out = recorded["promptTokenCount"], recorded["candidatesTokenCount"]
        thoughts, cached = recorded["thoughtsTokenCount"], recorded["cachedContentTokenCount"]
        total = recorded["totalTokenCount"]
        assert sum(c["usage"]["input"] for c in calls) == prompt, truth["key"]
        assert sum(c["usage"]["output"] for c in calls) == out, truth["key"]
        assert sum(c["usage"]["reasoning"] for c in calls) == thoughts, truth["key"]
        assert sum(c["usage"]["cached"] for c in calls) == cached, truth["key"]
        assert prompt + out == total
        assert all(c["usage"]["cache_write"] is None for c in calls)  # not reported: absent


def test_exit_codes_come_from_the_shell_result_and_a_nonzero_one_fails(built: Any) -> None:
    """``grep -q`` exiting 1 is status ``success`` for Qwen Code, but its structured exit code
    is 1: failed, by the shared rule (a non-zero exit code the runtime reported)."""
    _, con = built
    session = _session(con, "failing_commands")
    calls = _tools(con, session["session_id"])
    assert [(c["command"], c["exit_code"], c["failed"]) for c in calls] == [
        ('grep -q "def subtract" src/app.py', 1, True),
        ("diff README.md notes.md > /dev/null", 1, True),
        ("cat missing.txt", 1, True),
    ]
    assert all(c["role"] == "agent.tool_call.shell" for c in calls)
    assert all(isinstance(c["duration_ms"], int) and c["duration_ms"] >= 0 for c in calls)


def test_file_tools_have_no_exit_code(built: Any) -> None:
    _, con = built
    session = _session(con, "file_tools")
    calls = _tools(con, session["session_id"])
    names = [c["tool_name"] for c in calls]
    assert names == ["read_file", "edit", "write_file", "read_file", "run_shell_command"]
    assert [c["exit_code"] for c in calls] == [None, None, None, None, 0]
    assert [c["failed"] for c in calls] == [False] * 5
    assert all(c["output_count"] == 1 for c in calls)


def test_a_cancelled_call_interrupts_its_loop(built: Any) -> None:
    _, con = built
    session = _session(con, "interrupt_tool")
    loops = dict_rows(
        con,
        'SELECT "end".outcome AS outcome FROM loops '
        f"WHERE session_id = {session['session_id']} ORDER BY session_position",
    )
    assert [loop["outcome"] for loop in loops] == [None, "interrupted"]
    last = _tools(con, session["session_id"])[-1]
    assert last["command"] == "for i in 1 2 3 4 5 6; do sleep 5; done; echo finished"
    assert (last["exit_code"], last["failed"], last["output_count"]) == (None, True, 1)
    finals = dict_rows(
        con,
        "SELECT l.session_position FROM items i JOIN loops l USING (loop_id) "
        f"WHERE i.session_id = {session['session_id']} AND i.semantic.role = 'agent.final_answer'",
    )
    assert [f["session_position"] for f in finals] == [0]


@pytest.mark.parametrize("scenario", ["error_http", "error_midturn"])
def test_failed_requests_fail_the_loop_and_bill_nothing(built: Any, scenario: str) -> None:
    """Failed attempts leave only ``qwen-code.api_error`` telemetry: runtime notices in the
    Loop, no model call, and the Loop failed at the last of them."""
    _, con = built
    session = _session(con, scenario)
    last = dict_rows(
        con,
        'SELECT loop_id, "end".outcome AS outcome FROM loops '
        f"WHERE session_id = {session['session_id']} ORDER BY session_position DESC LIMIT 1",
    )[0]
    assert last["outcome"] == "failed"
    notices = dict_rows(
        con,
        "SELECT semantic.text.text.value AS text FROM items "
        f"WHERE loop_id = {last['loop_id']} AND semantic.role = 'runtime.notice'",
    )
    path = FOLDER / session["truth"]["file"]
    errors = [
        json.loads(line)["systemPayload"]["uiEvent"]["error_message"]
        for line in path.read_text("utf-8").splitlines()
        if '"qwen-code.api_error"' in line
    ]
    assert errors and [n["text"] for n in notices] == errors
    calls = dict_rows(
        con, f"SELECT count(*) AS n FROM model_calls WHERE loop_id = {last['loop_id']}"
    )
    completed = [r for r in session["truth"]["turns"][-1]["requests"] if r["completed"]]
    assert calls[0]["n"] == len(completed)  # the responses that arrived; no failed attempt


def test_the_qwen_homes_follow_the_runtime_dir_then_the_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Qwen Code writes its chats under ``QWEN_RUNTIME_DIR``, else ``QWEN_HOME``, else
    ``~/.qwen``: both variables are trace homes."""
    monkeypatch.delenv("QWEN_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("QWEN_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert set(default_roots()["qwen"]) == {tmp_path / ".qwen" / "projects"}
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "home"))
    assert tmp_path / "home" / "projects" in default_roots()["qwen"]
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(tmp_path / "runtime"))
    assert tmp_path / "runtime" / "projects" in default_roots()["qwen"]


def test_claude_code_does_not_claim_a_qwen_chat_and_qwen_not_a_claude_transcript() -> None:
    path = next(fixture_path("generated", "qwen").rglob("*.jsonl"))
    head = [json.loads(line) for line in path.read_text("utf-8").splitlines()[:32]]
    assert not adapter("claude_code").claims(head)
    assert detect(head) is QwenAdapter
    claude = next(
        p for p in fixture_path("generated", "claude").rglob("*.jsonl") if "_gen" not in p.parts
    )
    head = [json.loads(line) for line in claude.read_text("utf-8").splitlines()[:32]]
    assert not QwenAdapter.claims(head)
    assert not QwenAdapter.claims([json.loads(USAGE_RECORD)])


# -- record sequences ---------------------------------------------------------------------------


class Chat:
    """Writes chat records of one session, each the child of the previous one."""

    def __init__(self, **common: Any) -> None:
        self.records: list[dict[str, Any]] = []
        self.common = {"sessionId": "5f0c9d1e-3a4b-4c5d-8e6f-7a8b9c0d1e2f", "cwd": "/w"} | common

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        n = len(self.records)
        record = {
            "uuid": f"u{n}",
            "parentUuid": f"u{n - 1}" if n else None,
            **self.common,
            "timestamp": f"2026-12-01T09:00:{n:02d}.000Z",
            "type": kind,
            "version": "0.24.4",
        }
        record.update(fields)
        self.records.append(record)
        return record

    def user(self, text: str) -> None:
        message = {"role": "user", "parts": [{"text": text}]}
        self.add("user", provenance="real_user", message=message)

    def model(self, text: str | None = None, calls: tuple[str, ...] = (), **usage: int) -> None:
        parts: list[dict[str, Any]] = [{"text": text}] if text is not None else []
        for call in calls:
            args = {"command": "ls", "is_background": False}
            parts.append({"functionCall": {"id": call, "name": "run_shell_command", "args": args}})
        meta = {
            "promptTokenCount": 100,
            "candidatesTokenCount": 10,
            "thoughtsTokenCount": 0,
            "totalTokenCount": 110,
            "cachedContentTokenCount": 40,
        } | usage
        message = {"role": "model", "parts": parts}
        self.add("assistant", model="qwen3-coder-plus", message=message, usageMetadata=meta)

    def result(self, call: str, status: str = "success", code: int | None = 0) -> None:
        response = {"id": call, "name": "run_shell_command", "response": {"output": "out"}}
        display = {"type": "shell_result", "exitCode": code, "truncated": False}
        result = {"callId": call, "status": status, "resultDisplay": display}
        message = {"role": "user", "parts": [{"functionResponse": response}]}
        self.add("tool_result", message=message, toolCallResult=result)

    def system(self, subtype: str, **payload: Any) -> None:
        self.add("system", subtype=subtype, systemPayload=payload)

    def api_error(self, message: str = "500 Internal Server Error") -> None:
        event = {"event.name": "qwen-code.api_error", "error_message": message}
        self.system("ui_telemetry", uiEvent=event)

    def draft(self) -> Draft:
        adapter = QwenAdapter()
        for position, record in enumerate(self.records):
            adapter.feed(position, record)
        return adapter.finish()


def roles(draft: Draft, loop_index: int | None) -> list[str]:
    loop = None if loop_index is None else draft.loops[loop_index]
    return [i.role for i in draft.items if i.loop is loop]


def test_a_response_after_a_failed_attempt_withdraws_the_failure() -> None:
    chat = Chat()
    chat.user("Say hello.")
    chat.api_error()
    chat.model("Hello!")
    draft = chat.draft()
    (loop,) = draft.loops
    assert loop.end is None and loop.outcome is None
    assert roles(draft, 0) == ["human.request", "runtime.notice", "agent.final_answer"]


def test_a_failed_attempt_after_the_answer_is_not_the_loops_failure() -> None:
    """Generation had ended (a response without function calls): a later failed request (e.g.
    a background call) is a Session-level notice and fails nothing."""
    chat = Chat()
    chat.user("Say hello.")
    chat.model("Hello!")
    chat.api_error("title generation failed")
    draft = chat.draft()
    assert draft.loops[0].outcome is None
    assert roles(draft, 0) == ["human.request", "agent.final_answer"]
    assert roles(draft, None) == ["runtime.notice"]


def test_a_run_that_goes_on_after_an_answer_demotes_it() -> None:
    chat = Chat()
    chat.user("Check the repo.")
    chat.model("Looks fine.")
    chat.model("Also, the tests pass.")
    draft = chat.draft()
    assert roles(draft, 0) == ["human.request", "agent.commentary", "agent.final_answer"]
    assert [len(loop.usage) for loop in draft.loops] == [2]


def test_tool_results_resume_the_run_and_a_prompt_bounds_the_loop() -> None:
    chat = Chat()
    chat.user("List files.")
    chat.model("Listing.", calls=("c1", "c2"))
    chat.result("c1")
    chat.result("c2", status="error", code=2)
    chat.api_error()
    chat.user("Try again.")
    chat.model("Done.")
    draft = chat.draft()
    first, second = draft.loops
    assert (first.end, first.outcome) == (4, "failed")  # the last failed attempt
    assert (second.start, second.end, second.outcome) == (5, None, None)
    outputs = [i.value for i in draft.items if i.role == "tool.output"]
    assert [(o.get("exit_code"), o.get("failed")) for o in outputs] == [(0, False), (2, True)]


def test_usage_in_the_gemini_api_convention_adds_the_thoughts_to_the_output() -> None:
    """With the Gemini API the total is prompt + candidates + thoughts: the candidates exclude
    the reasoning tokens, which the contract counts in the output."""
    chat = Chat()
    chat.user("Think.")
    chat.model("Thought.", thoughtsTokenCount=30, totalTokenCount=140)  # 100 + 10 + 30
    chat.user("Again.")
    chat.model("Again.", thoughtsTokenCount=3, candidatesTokenCount=10, totalTokenCount=110)
    first, second = (loop.usage[0] for loop in chat.draft().loops)
    assert (first.input, first.cached, first.output, first.reasoning) == (100, 40, 40, 30)
    assert (second.input, second.cached, second.output, second.reasoning) == (100, 40, 10, 3)


def test_a_subagent_file_is_its_own_session_delegated_from_the_parent() -> None:
    chat = Chat(isSidechain=True, agentId="explore-7f3c")
    chat.user("Find the config loader.")
    chat.model("It is in src/config.py.")
    draft = chat.draft()
    assert draft.session is not None
    assert draft.session.native_id == "explore-7f3c"
    assert draft.session.delegated_from == ("5f0c9d1e-3a4b-4c5d-8e6f-7a8b9c0d1e2f", 0)


def test_a_delegating_call_is_a_tool_call_and_a_delegation() -> None:
    chat = Chat()
    chat.user("Explore.")
    args = {"description": "find it", "prompt": "Find the loader.", "subagent_type": "Explore"}
    message = {
        "role": "model",
        "parts": [{"functionCall": {"id": "a1", "name": "agent", "args": args}}],
    }
    chat.add("assistant", model="qwen3-coder-plus", message=message)
    draft = chat.draft()
    assert roles(draft, 0) == ["human.request", "agent.tool_call", "agent.delegation"]
    delegation = draft.items[-1].value
    assert delegation == {"text": "Find the loader.", "has_images": False, "agent_type": "Explore"}


def test_compaction_title_commands_and_unknown_records() -> None:
    chat = Chat()
    chat.system("custom_title", customTitle="Config work")
    chat.system("slash_command", phase="invocation", rawCommand="/compress")
    history = [{"role": "user", "parts": [{"text": "<state_snapshot>done</state_snapshot>"}]}]
    chat.system("chat_compression", info={}, compressedHistory=history)
    chat.system("slash_command", phase="result", rawCommand="/compress")
    chat.system("goal_state", goal={})
    chat.system("ui_telemetry", uiEvent={"event.name": "qwen-code.something_new"})
    draft = chat.draft()
    assert draft.session is not None and draft.session.name == "Config work"
    assert roles(draft, None) == ["runtime.context", "runtime.compaction_summary"]
    assert draft.items[1].value == {"summary": "<state_snapshot>done</state_snapshot>"}
    assert draft.unknown_types == {
        "system/goal_state": 1,
        "system/ui_telemetry/qwen-code.something_new": 1,
    }
