"""Rules of the Pi adapter that the corpus files do not exercise one at a time.

Small entry sequences are fed straight to the adapter (as ingest does: one decoded value per
record position) and the draft is checked: the tree rule, retries, steering, user commands,
detection and the parent link. The joined-records quirk is checked on the two real files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.expect import build_folder, manifest, query
from tests.support.facts import text_of
from tests.support.files import corpus_path, fixture_path, generated
from tests.support.pi import HEADER, Chain
from traceidx.adapters import detect
from traceidx.adapters.pi import PiAdapter
from traceidx.adapters.pi.wire import parent_native_id
from traceidx.analysis.query import connect
from traceidx.domain.drafts import Draft, DraftItem
from traceidx.pipeline.job import build
from traceidx.projection.ingest import Settings, ingest


def roles(draft: Draft, loop_index: int | None) -> list[str]:
    loop = None if loop_index is None else draft.loops[loop_index]
    return [i.role for i in draft.items if i.loop is loop]


def test_a_branch_into_a_running_loop_opens_a_new_loop() -> None:
    """The user message is written right after a tool result of a still running Loop, so a
    linear reading would call it steering; its parent is elsewhere in the tree (Pi moved its
    leaf, which it does only between runs), so it opens a new Loop instead."""
    chain = Chain()
    first = chain.user("Build the project.")
    chain.assistant("toolUse", calls=("c1",))
    chain.result("c1")  # the process died here: no further response
    chain.user("Start over: only run the tests.", parent=first)
    chain.assistant("stop", "Tests pass.")
    draft = chain.draft()
    assert [loop.start for loop in draft.loops] == [1, 4]
    assert draft.loops[0].end == 4 and draft.loops[0].outcome is None
    assert roles(draft, 0) == ["human.request", "agent.tool_call", "tool.output"]
    assert roles(draft, 1) == ["human.request", "agent.final_answer"]

    linear = Chain()  # the same entries on one chain: the message is steering
    linear.user("Build the project.")
    linear.assistant("toolUse", calls=("c1",))
    linear.result("c1")
    linear.user("Start over: only run the tests.")
    assert roles(linear.draft(), 0)[-1] == "human.steering"


def test_an_abandoned_branch_keeps_its_items_and_the_next_loop_bounds_it() -> None:
    chain = Chain()
    chain.user("Delete b.txt.")
    fork = chain.assistant("toolUse", calls=("c1",))
    chain.result("c1")
    chain.assistant("stop", "Deleted.")
    chain.add("branch_summary", parent=fork, fromId=fork, summary="b.txt was deleted.")
    chain.user("Rename it instead.")
    draft = chain.draft()
    assert [loop.start for loop in draft.loops] == [1, 6]
    assert draft.loops[0].end == 6
    assert roles(draft, 0) == [
        "human.request",
        "agent.tool_call",
        "tool.output",
        "agent.final_answer",
    ]
    assert roles(draft, None) == ["runtime.compaction_summary"]


def test_a_retry_continues_the_failed_loop() -> None:
    chain = Chain()
    chain.user("Say hello.")
    chain.assistant("error", input=0, output=0)
    chain.add("compaction", summary="Earlier context.", firstKeptEntryId="e0000001")
    chain.assistant("stop", "Hello!", input=30, output=4)
    draft = chain.draft()
    (loop,) = draft.loops
    assert loop.end is None and loop.outcome is None
    assert [s.input for s in loop.usage] == [0, 30]
    assert roles(draft, 0) == ["human.request", "runtime.compaction_summary", "agent.final_answer"]


def test_an_error_without_retry_fails_the_loop_and_a_branch_cuts_the_retry() -> None:
    chain = Chain()
    start = chain.user("Explain the app.")
    chain.assistant("error")
    chain.add("compaction", parent=start, summary="x", firstKeptEntryId=start)
    chain.assistant("stop", "It adds numbers.")
    draft = chain.draft()
    assert len(draft.loops) == 2
    assert (draft.loops[0].end, draft.loops[0].outcome) == (2, "failed")
    assert roles(draft, None) == ["runtime.compaction_summary"]
    assert draft.loops[1].start == 4 and roles(draft, 1) == ["agent.final_answer"]


def test_abort_interrupts_and_unanswered_calls_do_not_take_steering() -> None:
    chain = Chain()
    chain.user("Run the slow job.")
    chain.assistant("toolUse", calls=("c1",))
    chain.result("c1", error=True)
    chain.assistant("aborted")
    chain.user("What happened?")
    chain.assistant("toolUse", calls=("c2",))  # killed before the result was written
    chain.user("Try again.")
    draft = chain.draft()
    assert [(loop.start, loop.end, loop.outcome) for loop in draft.loops] == [
        (1, 4, "interrupted"),
        (5, 7, None),
        (7, None, None),
    ]
    assert all(i.role != "human.steering" for i in draft.items)


def test_steering_after_tool_results_and_continuation_after_a_stop() -> None:
    chain = Chain()
    chain.user("Fix the typo.")
    chain.assistant("toolUse", "Looking.", calls=("c1",))
    chain.result("c1")
    chain.user("Also update the changelog.")
    chain.assistant("stop", "Done with the typo.")
    chain.assistant("stop", "And the changelog.")  # the run went on without a new prompt
    draft = chain.draft()
    assert len(draft.loops) == 1
    assert roles(draft, 0) == [
        "human.request",
        "agent.commentary",
        "agent.tool_call",
        "tool.output",
        "human.steering",
        "agent.commentary",
        "agent.final_answer",
    ]


def test_user_commands_open_no_loop() -> None:
    chain = Chain()
    bash = {"role": "bashExecution", "command": "make lint", "output": "E1 bad\n"}
    bash.update(exitCode=2, cancelled=False, truncated=False)
    chain.add("message", message=bash)
    chain.user("Why did lint fail?")
    draft = chain.draft()
    assert [loop.start for loop in draft.loops] == [2]
    session: list[DraftItem] = [i for i in draft.items if i.loop is None]
    assert [(i.role, i.records) for i in session] == [
        ("runtime.context", [1]),
        ("tool.output", [1]),
    ]
    assert session[1].value == {
        "text": "E1 bad\n",
        "exit_code": 2,
        "failed": True,
        "runtime_truncated": False,
    }


def test_an_extension_message_opens_the_turn_it_triggers() -> None:
    chain = Chain()
    chain.user("Hi.")
    chain.assistant("stop", "Hello.")
    chain.add("custom_message", customType="reminder", content="Run the tests.", display=True)
    chain.assistant("stop", "No tests here.")
    draft = chain.draft()
    assert [(loop.start, loop.end) for loop in draft.loops] == [(1, 3), (3, None)]
    assert roles(draft, 1) == ["runtime.context", "agent.final_answer"]


@pytest.mark.parametrize(
    ("header", "claimed"),
    [
        (HEADER, True),
        ({k: v for k, v in HEADER.items() if k not in ("type", "version")}, True),
        ({"type": "session", "id": "s", "cwd": "/tmp"}, True),
        ({"id": "s", "cwd": "/tmp"}, False),
        ({"type": "session", "version": 4, "id": "s", "createdAt": 1, "cwd": "/"}, False),
        ({**HEADER, "createdAt": 1785097410282}, False),
        ({"type": "message", "id": "a", "message": {"role": "user"}}, False),
    ],
)
def test_detection(header: dict[str, Any], claimed: bool) -> None:
    assert PiAdapter.claims([header]) is claimed
    if claimed:
        assert detect([header]) is PiAdapter


def test_parent_session_path_to_native_id() -> None:
    path = "/home/u/.pi/agent/sessions/--x--/2025-12-09T00-52-54-397Z_d97339c6-6c10.jsonl"
    assert parent_native_id(path) == "d97339c6-6c10"
    assert parent_native_id("C:\\s\\2025-01-01T00-00-00-000Z_abc.jsonl") == "abc"
    assert parent_native_id("/tmp/my-session.jsonl") is None
    assert parent_native_id(None) is None
    chain = Chain()
    chain.entries[0] = {**HEADER, "parentSession": path}
    session = chain.draft().session
    assert session is not None and session.forked_from == ("d97339c6-6c10", 0)


@pytest.mark.parametrize(
    ("name", "line", "expected"),
    [
        # assistant answer and the next prompt on one line: the answer closes its loop's
        # generation, the prompt opens the next loop at the same line
        (
            "badlogic__pi-mono__session.jsonl",
            439,
            ["agent.reasoning", "agent.final_answer", "human.request"],
        ),
        # the last answer and a compaction entry on one line
        (
            "badlogic__pi-mono__compact.jsonl",
            1012,
            ["agent.final_answer", "runtime.compaction_summary"],
        ),
    ],
)
def test_joined_records_project_both_values(name: str, line: int, expected: list[str]) -> None:
    result = ingest(str(corpus_path("public", "pi", name)), Settings())
    assert result.state == "indexed" and result.joined == 1
    (record,) = [r for r in result.records.objects() if r.parse_status == "joined"]
    assert record.source_position == line
    assert record.native_type == "message/assistant+" + (
        "message/user" if "session" in name else "compaction"
    )
    assert result.projection is not None
    items = [i for i in result.projection.items if record.record_id in i.record_ids]
    assert [i.semantic.__struct_config__.tag for i in items] == expected
    # a loop may start on the joined line, but never two
    starts = [loop.start_record_id for loop in result.projection.loops]
    assert starts.count(record.record_id) <= 1


def test_a_failed_attempt_is_a_call_of_its_outcome_and_bills_nothing(tmp_path: Path) -> None:
    """Pi writes an assistant message with zero usage for each HTTP 500: a model_calls row
    with outcome error and no usage; the failed loop has no usage (absent, not zero)."""
    trace = next(fixture_path("generated", "pi").glob("error_http500-*.jsonl"))
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / trace.name).write_bytes(trace.read_bytes())
    assert build([folder], tmp_path / "ds", jobs=1).exit_code == 0
    con = connect(tmp_path / "ds")
    try:
        calls = con.sql(
            "SELECT c.outcome, c.usage.input + c.usage.output AS tokens, "
            "l.usage IS NULL AS unbilled "
            "FROM model_calls c JOIN loops l USING (loop_id) ORDER BY c.outcome"
        ).fetchall()
    finally:
        con.close()
    failed = [c for c in calls if c[0] == "error"]
    assert failed and all(tokens is None and unbilled for _, tokens, unbilled in failed)
    assert [c[0] for c in calls if c[0] != "error"] == ["ok"] * (len(calls) - len(failed))
    assert all(tokens > 0 for outcome, tokens, _ in calls if outcome == "ok")


# --------------------------------------------------------------------------------------------
# The generated set against what only Pi's ground truth states (the rest: tests/corpus/
# test_expect.py, the same for every runtime)


def _pi_manifest() -> list[dict[str, Any]]:
    found = manifest("pi")
    assert found is not None, "the generated Pi folder has no manifest.json"
    return list(found["sessions"])


def test_every_generated_file_is_a_session() -> None:
    """Every Pi file of the generated set is one manifest session (that the dataset holds
    exactly those sessions: tests/corpus/test_expect.py)."""
    files = sorted(p.name for p in generated("pi").glob("*.jsonl"))
    assert files == sorted(Path(s["file"]).name for s in _pi_manifest())


def test_generated_user_commands_are_session_items(tmp_path: Path) -> None:
    """A user's own ``!cmd`` (RPC ``bash``, a ``user_bash`` turn): its command and structured
    exit code, as Session items outside any Loop."""
    dataset = tmp_path / "ds"
    build_folder("pi", dataset)
    items: dict[str, list[dict[str, Any]]] = {}
    for row in query(
        dataset,
        "SELECT s.native_id AS session, i.semantic FROM items i JOIN sessions s USING "
        "(session_id) WHERE i.loop_id IS NULL ORDER BY s.native_id, i.item_id",
    ):
        items.setdefault(row["session"], []).append(row["semantic"])
    expected_any = False
    for session in _pi_manifest():
        found = items.get(session["session_id"], [])
        commands = [text_of(i, ("context",)) for i in found if i["role"] == "runtime.context"]
        outputs = [i["tool_output"] for i in found if i["role"] == "tool.output"]
        expected = [
            c for t in session["turns"] if t["kind"] == "user_bash" for c in t["tool_calls"]
        ]
        expected_any = expected_any or bool(expected)
        assert commands == [c["command"] for c in expected], session["key"]
        assert [(o["exit_code"], o["failed"]) for o in outputs] == [
            (c["exit_code"], c["failed"]) for c in expected
        ], session["key"]
        for output, want in zip(outputs, expected, strict=True):
            assert want["expect_in_output"] in output["text"]["value"], session["key"]
    assert expected_any  # the set has user commands
