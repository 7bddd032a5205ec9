"""Rules of the Gemini CLI adapter that the generated files do not exercise one at a time.

Small chat files are written line by line (the shapes Gemini CLI 0.61 writes) and fed to the
adapter as ingest does: the upsert of a message by id (the last write wins, usage counted
once), re-syncs that are not applied, rollbacks and rewinds, the shell result's trailer, the
UI's notes, detection. The committed generated files check what the real CLI wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.facts import decoded_records
from tests.support.files import fixture_path
from traceidx.adapters import adapter, detect
from traceidx.adapters.gemini import GeminiAdapter
from traceidx.adapters.gemini.tools import shell_exit_code
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop
from traceidx.projection.ingest import Settings, ingest
from traceidx.runtimes import RUNTIMES, names

SESSION = "3c1d9a7e-5b2f-4e8a-9c6d-1f0e2d3c4b5a"
METADATA = {
    "sessionId": SESSION,
    "projectHash": "ab" * 32,
    "startTime": "2026-12-06T08:00:00.000Z",
    "lastUpdated": "2026-12-06T08:00:00.000Z",
    "kind": "main",
}
CONTEXT = {
    "id": "d04923d38bb0f6017037e74183378ef4",
    "timestamp": "2026-12-06T08:00:00.001Z",
    "type": "user",
    "content": [
        {
            "text": "<session_context>\nThis is the Gemini CLI.\n"
            "- **Workspace Directories:**\n  - /home/dev/projects/unit\n"
            "- **Directory Structure:**\n\n</session_context>"
        }
    ],
}
TOKENS = {"input": 100, "output": 10, "cached": 40, "thoughts": 5, "tool": 7, "total": 122}


class Chat:
    """Writes the lines of one chat file."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = [METADATA, {"$set": {"messages": [CONTEXT]}}]
        self.count = 0

    def add(self, line: dict[str, Any]) -> dict[str, Any]:
        self.lines.append(line)
        return line

    def message(self, kind: str, content: Any, **fields: Any) -> dict[str, Any]:
        self.count += 1
        second = self.count % 60
        line = {"id": f"m{self.count:04d}", "timestamp": f"2026-12-06T08:01:{second:02d}.000Z"}
        return self.add({**line, "type": kind, "content": content, **fields})

    def prompt(self, text: str) -> dict[str, Any]:
        return self.message("user", [{"text": text}])

    def reply(self, text: str = "", tokens: dict[str, Any] | None = None) -> dict[str, Any]:
        extra = {"thoughts": [], "tokens": TOKENS if tokens is None else tokens}
        return self.message("gemini", text, **extra, model="gemini-2.5-pro")

    def calls(self, reply: dict[str, Any], *calls: dict[str, Any]) -> None:
        """The reply written again once its calls completed, then their results."""
        self.add({**reply, "toolCalls": list(calls)})
        parts = [part for call in calls for part in call["result"]]
        self.message("user", parts)

    def draft(self) -> Draft:
        gemini = GeminiAdapter()
        for position, line in enumerate(self.lines):
            gemini.feed(position, line)
        return gemini.finish()


def shell(call_id: str, command: str, output: str, status: str = "success") -> dict[str, Any]:
    response = {"id": call_id, "name": "run_shell_command", "response": {"output": output}}
    return {
        "id": call_id,
        "name": "run_shell_command",
        "args": {"command": command},
        "result": [{"functionResponse": response}],
        "status": status,
        "timestamp": "2026-12-06T08:02:00.000Z",
    }


def wrapped(body: str, trailer: str = "") -> str:
    """A shell result as the CLI writes it (`trailer`: the lines before the PGID)."""
    text = f"Output: {body}\n{trailer}Process Group PGID: 42"
    return f"<untrusted_context>\n{text}\n</untrusted_context>"


def of(draft: Draft, loop: DraftLoop | None) -> list[DraftItem]:
    return [item for item in draft.items if item.loop is loop]


def roles(draft: Draft, loop: DraftLoop | None) -> list[str]:
    return [item.role for item in of(draft, loop)]


def test_a_message_written_again_counts_once_and_its_items_cite_the_last_write() -> None:
    chat = Chat()
    chat.prompt("list the files")
    reply = chat.reply("Listing.")
    chat.add({"$set": {"lastUpdated": "2026-12-06T08:01:02.500Z"}})
    chat.calls(reply, shell("c1", "ls", wrapped("a.txt")))
    chat.reply("Done.")
    draft = chat.draft()
    (loop,) = draft.loops
    assert [s.records for s in loop.usage] == [(5,), (7,)]  # once per id, at its last write
    assert roles(draft, loop) == [
        "human.request",
        "agent.reasoning",
        "agent.commentary",
        "agent.tool_call",
        "tool.output",
        "agent.reasoning",
        "agent.final_answer",
    ]
    call, output = of(draft, loop)[3:5]
    assert call.records == [5] and call.shell_command == "ls" and call.call_id == "c1"
    assert output.records == [5, 6] and output.output_of == "c1"  # the record and the result
    assert output.value == {"text": wrapped("a.txt"), "failed": False}


def test_usage_is_in_the_contract_units() -> None:
    chat = Chat()
    chat.prompt("hi")
    chat.reply("Hello.")
    chat.reply("Again.", tokens={"input": 50, "output": 4, "cached": 0})  # no thoughts, tool
    sample, bare = chat.draft().loops[0].usage
    assert (sample.input, sample.cached, sample.cache_write) == (107, 40, None)
    assert (sample.output, sample.reasoning, sample.model) == (15, 5, "gemini-2.5-pro")
    assert (bare.input, bare.output, bare.cached, bare.reasoning) == (50, 4, 0, None)


def test_a_resync_of_the_history_is_not_applied() -> None:
    """On --resume the CLI re-syncs its API history into ``$set.messages``: no tokens, no
    toolCalls, content as parts, function results under the id of the call's message."""
    chat = Chat()
    chat.prompt("list")
    reply = chat.reply("")
    chat.calls(reply, shell("c1", "ls", wrapped("a.txt")))
    chat.reply("Done.")
    before = chat.draft()
    lossy = [
        CONTEXT,
        {"id": "m0001", "type": "user", "content": [{"text": "list"}]},
        {"id": "m0002", "type": "gemini", "content": [{"functionCall": {"name": "x"}}]},
        {"id": "m0002", "type": "user", "content": [{"functionResponse": {"id": "c1"}}]},
        {"id": "m0004", "type": "gemini", "content": [{"text": "Done."}]},
    ]
    chat.add(dict(METADATA, startTime="2026-12-06T09:00:00.000Z"))
    chat.add({"$set": {"messages": [CONTEXT]}})
    chat.add({"$set": {"sessionId": SESSION}})
    chat.add({"$set": {"messages": lossy}})
    after = chat.draft()
    assert [i.role for i in after.items] == [i.role for i in before.items]
    assert after.loops[0].usage == before.loops[0].usage
    assert after.loops[0].end == 7  # the resumed process bounds the Loop (no outcome)
    assert after.loops[0].outcome is None and after.unknown_types == {}


def test_a_prompt_rolled_back_by_a_resync_ends_its_loop() -> None:
    """A request that fails (or is cancelled) before any response rolls the CLI's history
    back to before its prompt, and the CLI re-syncs that shorter history."""
    path = fixture_path("generated", "gemini", "tmp", "error-http-s1", "chats")
    draft = feed(next(path.glob("*.jsonl")))
    (loop,) = draft.loops
    assert (loop.start, loop.end, loop.outcome, loop.usage) == (2, 4, None, [])
    assert roles(draft, loop) == ["human.request"]


def test_a_rewind_ends_the_loop_and_a_rewritten_id_is_a_new_message() -> None:
    chat = Chat()
    first = chat.prompt("first")
    chat.reply("One.")
    chat.add({"$rewindTo": first["id"]})
    chat.add(dict(first, content=[{"text": "first, again"}]))  # the id comes back: new
    chat.reply("Two.")
    draft = chat.draft()
    assert [(loop.start, loop.end) for loop in draft.loops] == [(2, 4), (5, None)]
    assert roles(draft, draft.loops[0]) == [
        "human.request",
        "agent.reasoning",
        "agent.final_answer",
    ]
    state = [i for i in draft.items if i.role == "runtime.state"]
    assert [i.value["text"] for i in state] == ["rewound to message m0001"] and state[
        0
    ].loop is None
    assert of(draft, draft.loops[1])[0].value["text"] == "first, again"


def test_the_shell_exit_code_comes_from_the_trailer_only() -> None:
    assert shell_exit_code(wrapped("x")) is None  # exit 0 is never stated
    assert shell_exit_code(wrapped("boom", "Exit Code: 2\n")) == 2
    assert shell_exit_code(wrapped("(empty)", "Exit Code: 130\nSignal: 2\n")) == 130
    printed = wrapped("Exit Code: 9\nmore")  # the command's own output says so: not read
    assert shell_exit_code(printed) is None
    assert shell_exit_code("Command was cancelled by user before it could complete.") is None
    # releases of 2025 wrote every trailer line, exit 0 included, and no wrapper
    older = "Command: ls\nDirectory: (root)\nOutput: a\nError: (none)\nExit Code: {}\n"
    older += "Signal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 77"
    assert shell_exit_code(older.format(0)) == 0
    assert shell_exit_code(older.format("(none)")) is None


def test_tool_status_and_exit_code_make_failed() -> None:
    chat = Chat()
    chat.prompt("go")
    reply = chat.reply("")
    failing = wrapped("(empty)", "Exit Code: 1\n")
    chat.calls(
        reply,
        shell("c1", "false", failing),
        shell("c2", "sleep 9", "Command was cancelled by user.", status="cancelled"),
        {
            "id": "c3",
            "name": "read_file",
            "args": {"file_path": "/x"},
            "result": [{"functionResponse": {"id": "c3", "response": {"error": "not found"}}}],
            "status": "error",
        },
    )
    outputs = [i.value for i in chat.draft().items if i.role == "tool.output"]
    assert outputs == [
        {"text": failing, "failed": True, "exit_code": 1},
        {"text": "Command was cancelled by user.", "failed": True},
        {"text": "not found", "failed": True},
    ]


def test_a_cancellation_note_interrupts_and_leaves_no_final_answer() -> None:
    chat = Chat()
    chat.prompt("run the slow tests")
    chat.reply("Starting.")
    chat.message("info", "Request cancelled.")
    chat.prompt("never mind")
    draft = chat.draft()
    first = draft.loops[0]
    assert (first.end, first.outcome) == (4, "interrupted")
    assert roles(draft, first) == [
        "human.request",
        "agent.reasoning",
        "agent.commentary",
        "runtime.notice",
    ]
    assert draft.loops[1].end is None


def test_text_sent_with_tool_results_is_steering() -> None:
    chat = Chat()
    chat.prompt("check")
    reply = chat.reply("")
    call = shell("c1", "ls", wrapped("a"))
    chat.add({**reply, "toolCalls": [call]})
    hint = "User steering update:\n<user_input>\nalso the docs\n</user_input>\nAdjust."
    chat.message("user", [{"text": hint}, *call["result"]])
    draft = chat.draft()
    steering = [i for i in draft.items if i.role == "human.steering"]
    assert [i.value["text"] for i in steering] == [hint] and steering[0].loop is draft.loops[0]


def test_session_facts() -> None:
    chat = Chat()
    chat.add({"$set": {"summary": "Unit session"}})
    draft = chat.draft()
    session = draft.session
    assert session is not None
    assert (session.native_id, session.identity_record, session.created_at) == (
        SESSION,
        0,
        1796544000000,
    )
    assert (session.name, session.working_directory) == ("Unit session", "/home/dev/projects/unit")
    assert [(i.role, i.value["category"], i.loop) for i in draft.items] == [
        ("runtime.context", "environment", None)
    ]


def test_unknown_lines_are_counted() -> None:
    chat = Chat()
    chat.message("tool_group", [])
    chat.add({"something": "else"})
    chat.add(dict(METADATA, sessionId="another"))
    assert chat.draft().unknown_types == {
        "message/tool_group": 1,
        "<no message id, $set, $rewindTo or session id>": 1,
        "metadata (another session id)": 1,
    }


def test_a_subagent_file_and_its_delegation() -> None:
    folder = fixture_path("handwritten", "gemini", "tmp", "subagent-demo", "chats")
    parent = feed(next(folder.glob("session-*.jsonl")))
    (child_file,) = folder.glob("*/*.jsonl")
    child = feed(child_file)
    assert child.session is not None and parent.session is not None
    delegation = next(i for i in parent.items if i.role == "agent.delegation")
    assert delegation.session_ref == child.session.native_id == child_file.stem
    assert delegation.value["agent_type"] == "codebase_investigator"
    assert child.session.task == delegation.value["text"]
    # the child's file does not name its parent (only its folder does): no delegated_from
    assert child.session.delegated_from is None
    (loop,) = child.loops
    assert loop.start == 1 and child.items[0].role == "agent.tool_call"
    report = next(i for i in parent.items if i.role == "subagent.report")
    assert report.session_ref == child.session.native_id


def test_gemini_files_are_claimed_by_gemini_only() -> None:
    files = [
        *sorted(fixture_path("generated", "gemini").rglob("*.jsonl")),
        *sorted(fixture_path("handwritten", "gemini").rglob("*.jsonl")),
    ]
    assert len(files) == 12
    for path in files:
        head = [o for _, objs in decoded_records(path)[:32] for o in objs]
        assert [n for n in names() if adapter(n).claims(head)] == ["gemini"], path
    others = [f for n in names() if n != "gemini" for f in RUNTIMES[n].fixtures]
    for runtime in others:
        for path in sorted(fixture_path("generated", runtime).rglob("*.jsonl"))[:5]:
            head = [o for _, objs in decoded_records(path)[:32] for o in objs]
            assert not GeminiAdapter.claims(head), path


def test_an_interrupted_turn_reads_as_an_answered_one() -> None:
    """SIGINT while a command runs: the call is never written, and the message that made it
    ends the file like a final answer (the ground truth says interrupted; the file cannot)."""
    folder = fixture_path("generated", "gemini", "tmp", "interrupt-tool-s1", "chats")
    draft = feed(next(folder.glob("*.jsonl")))
    last = draft.loops[-1]
    assert (last.end, last.outcome) == (None, None)
    assert [(i.role, i.value.get("text")) for i in of(draft, last)][-1] == (
        "agent.final_answer",
        "Starting the long run now.",
    )


def test_ingest_reads_the_generated_files(tmp_path: Path) -> None:
    expect = json.loads(fixture_path("generated", "gemini", "expect.json").read_text("utf-8"))
    for session in expect["sessions"]:
        path = fixture_path("generated", "gemini", *session["file"].split("/"))
        result = ingest(str(path), Settings())
        assert (result.state, result.runtime, result.unknown_types) == ("indexed", "gemini", {})
        assert result.projection is not None
        assert result.projection.session.native_id == session["native_session_id"]
        assert result.loop_count == len(session["loops"])


def feed(path: Path) -> Draft:
    values = decoded_records(path)
    cls = detect([v for _, vs in values[:32] for v in vs])
    assert cls is GeminiAdapter
    gemini = cls()
    for position, objs in values:
        for obj in objs:
            gemini.feed(position, obj)
    return gemini.finish()
