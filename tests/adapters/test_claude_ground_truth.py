"""The generated Claude Code corpus against its ground truth (``manifest.json``).

The corpus under ``generated/claude`` was written by the real Claude Code CLI against a scripted
model; its manifest states, per session and turn, what happened (see ``GENERATED.md``, "How to
count"). Every test here is parametrised over the manifest's sessions and compares one family of
facts with what traceidx publishes through its views:

* sessions and delegation links, loops (one per turn, in order) and their opening items,
* outcomes where the rules state one (interrupted, failed), never a contradiction otherwise,
* loop usage under the contract's normalisation and the usage-gap rule, and the model id,
* tool calls (name, command, shell role, exit code only when explicit, failure, outputs),
* final answers, and the human prompts of the whole session.

The dataset is built once per module; all view rows are fetched once into plain Python.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.support.facts import dict_rows, text_of
from tests.support.files import generated
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build

GENERATED = generated("claude")
MANIFEST = GENERATED / "manifest.json"

if not MANIFEST.is_file():
    pytest.skip(f"generated Claude corpus not available: {MANIFEST}", allow_module_level=True)

TRUTH: dict[str, Any] = json.loads(MANIFEST.read_text("utf-8"))
SESSIONS: list[dict[str, Any]] = TRUTH["sessions"]
BY_NATIVE: dict[str, dict[str, Any]] = {s["session_id"]: s for s in SESSIONS}

#: tool names whose calls also delegate: an agent.delegation beside the call's tool_calls row
DELEGATING_TOOLS = frozenset({"Agent", "Task"})
USAGE_MEMBERS = ("input", "cached", "cache_write", "output", "reasoning")
FAILING_OUTCOMES = frozenset({"interrupted", "failed"})


def _session_id(session: dict[str, Any]) -> str:
    return f"{session['instance']}-{session['role']}-{session['session_id'][:8]}"


def session_params() -> list[Any]:
    """The manifest sessions as pytest params."""
    return [pytest.param(session, id=_session_id(session)) for session in SESSIONS]


# --------------------------------------------------------------------------------------------
# Expected values derived from the manifest


def normalised_usage(requests: list[dict[str, Any]]) -> dict[str, int | None] | None:
    """Loop usage under the contract: input includes cache reads and writes; an optional member
    is present only when every request reported it; no requests -> no usage at all."""
    if not requests:
        return None

    def total(key: str) -> int | None:
        values = [r["usage"].get(key) for r in requests]
        return None if any(v is None for v in values) else sum(values)

    parts = [total("input"), total("cache_read"), total("cache_write")]
    return {
        "input": None if any(p is None for p in parts) else sum(p for p in parts if p is not None),
        "cached": total("cache_read"),
        "cache_write": total("cache_write"),
        "output": total("output"),
        "reasoning": total("reasoning"),
    }


# --------------------------------------------------------------------------------------------
# The dataset, built once and fetched into Python


@dataclass
class Published:
    """What traceidx published, keyed for the comparisons below."""

    sessions: dict[str, dict[str, Any]]  # native_id -> session row
    loops: dict[int, list[dict[str, Any]]]  # session_id -> loops by session_position
    items: dict[int, list[dict[str, Any]]]  # loop_id -> items by loop_position
    session_items: dict[int, list[dict[str, Any]]]  # session_id -> items (loop order)
    tool_calls: dict[int, list[dict[str, Any]]]  # loop_id -> tool calls by loop_position
    usage_totals: dict[str, int | None] = field(default_factory=dict)

    def session(self, truth: dict[str, Any]) -> dict[str, Any]:
        row = self.sessions.get(truth["session_id"])
        assert row is not None, f"{_session_id(truth)}: no session with native_id"
        return row

    def turn_loops(self, truth: dict[str, Any]) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
        """(turn index, manifest turn, loop) pairs; fails unless there is one loop per turn."""
        loops = self.loops.get(self.session(truth)["session_id"], [])
        turns = truth["turns"]
        assert len(loops) == len(turns), (
            f"{_session_id(truth)}: {len(loops)} loops for {len(turns)} turns "
            f"(turn triggers {[t['trigger'] for t in turns]})"
        )
        return [(t["index"], t, loop) for t, loop in zip(turns, loops, strict=True)]


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Published:
    dataset = tmp_path_factory.mktemp("claude-ground-truth") / "dataset"
    report = build([GENERATED], dataset, jobs=1)
    assert report.exit_code == 0, (report.problems, [r.reason for r in report.results])
    con = connect(dataset)
    try:
        sessions = {
            row["native_id"]: row
            for row in dict_rows(
                con,
                "SELECT session_id, native_id, runtime, delegated_from FROM sessions",
            )
        }
        loops: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            'SELECT loop_id, session_id, session_position, "end", model, usage FROM loops '
            "ORDER BY session_id, session_position",
        ):
            loops[row["session_id"]].append(row)
        items: dict[int, list[dict[str, Any]]] = defaultdict(list)
        session_items: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            "SELECT i.item_id, i.session_id, i.loop_id, i.loop_position, i.record_ids, i.semantic "
            "FROM items AS i LEFT JOIN loops AS l USING (loop_id) "
            "ORDER BY i.session_id, l.session_position NULLS LAST, i.loop_position, i.item_id",
        ):
            row["role"] = row["semantic"]["role"]
            row["text"] = text_of(row["semantic"])
            session_items[row["session_id"]].append(row)
            if row["loop_id"] is not None:
                items[row["loop_id"]].append(row)
        tool_calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            "SELECT t.*, i.loop_position, i.record_ids "
            "FROM tool_calls AS t JOIN items AS i USING (item_id) "
            "ORDER BY t.loop_id, i.loop_position, t.item_id",
        ):
            tool_calls[row["loop_id"]].append(row)
        totals = dict_rows(
            con,
            "SELECT sum(usage.input) AS input, sum(usage.cached) AS cached, "
            "sum(usage.cache_write) AS cache_write, sum(usage.output) AS output, "
            "sum(usage.reasoning) AS reasoning FROM loops",
        )[0]
    finally:
        con.close()
    return Published(sessions, loops, items, session_items, tool_calls, totals)


# --------------------------------------------------------------------------------------------
# 1. sessions


@pytest.mark.parametrize("truth", session_params())
def test_session_exists_and_delegation_link(published: Published, truth: dict[str, Any]) -> None:
    row = published.session(truth)
    name = _session_id(truth)
    assert row["runtime"] == "claude_code", name
    parent = truth["parent_session_id"]
    if parent is None:
        assert row["delegated_from"] is None, f"{name}: main session is not delegated"
    else:
        parent_row = published.sessions.get(parent)
        assert parent_row is not None, f"{name}: parent session {parent} missing"
        assert row["delegated_from"] is not None, f"{name}: subagent without delegated_from"
        assert row["delegated_from"]["session_id"] == parent_row["session_id"], (
            f"{name}: delegated_from points elsewhere than the parent session"
        )


# --------------------------------------------------------------------------------------------
# 2. loops and their opening items


@pytest.mark.parametrize("truth", session_params())
def test_loops_match_turns(published: Published, truth: dict[str, Any]) -> None:
    name = _session_id(truth)
    for index, turn, loop in published.turn_loops(truth):
        where = f"{name} turn {index} ({turn['trigger']})"
        items = published.items.get(loop["loop_id"], [])
        assert items, f"{where}: loop has no items"
        assert [i["loop_position"] for i in items] == list(range(len(items))), where
        roles = [i["role"] for i in items]
        requests = [i for i in items if i["role"] == "human.request"]
        steering = [i["text"] for i in items if i["role"] == "human.steering"]
        if turn["trigger"] == "user":
            assert requests, f"{where}: no human.request item"
            assert items[0]["role"] == "human.request", f"{where}: loop opens with {roles[0]}"
            assert len(requests) == 1, f"{where}: {len(requests)} human.request items"
            assert requests[0]["text"] == turn["prompt"], f"{where}: prompt text differs"
        elif turn["trigger"] == "agent-task":
            # the task the parent gave opens the loop and stays a Record: the delegation is
            # the parent's item, not a second copy in the child
            delegated = [i for i in items if i["role"] == "agent.delegation"]
            assert all(i["text"] != turn["prompt"] for i in delegated), f"{where}: task copied"
            assert not requests, f"{where}: a subagent's task is not a human request"
        else:  # task-notification: started by the runtime, not by a human
            assert not requests, f"{where}: a notification is not a human request"
        assert steering == turn["steering"], f"{where}: steering texts differ"


@pytest.mark.parametrize("truth", session_params())
def test_human_prompts_of_session(published: Published, truth: dict[str, Any]) -> None:
    """Exactly the texts the human typed (prompts and steering), in order; nothing else."""
    row = published.session(truth)
    texts = [
        i["text"]
        for i in published.session_items.get(row["session_id"], [])
        if i["role"] in ("human.request", "human.steering")
    ]
    assert texts == truth["human_prompts"], _session_id(truth)


# --------------------------------------------------------------------------------------------
# 3. outcomes


@pytest.mark.parametrize("truth", session_params())
def test_outcomes(published: Published, truth: dict[str, Any]) -> None:
    name = _session_id(truth)
    for index, turn, loop in published.turn_loops(truth):
        outcome = (loop["end"] or {}).get("outcome")
        where = f"{name} turn {index}: manifest {turn['outcome']}, traceidx {outcome}"
        if turn["outcome"] in FAILING_OUTCOMES:
            assert outcome == turn["outcome"], where
        elif turn["outcome"] == "completed":
            assert outcome in (None, "completed"), where
        else:
            assert outcome not in FAILING_OUTCOMES | {"completed"}, where


# --------------------------------------------------------------------------------------------
# 4./5. usage and model


@pytest.mark.parametrize("truth", session_params())
def test_loop_usage(published: Published, truth: dict[str, Any]) -> None:
    name = _session_id(truth)
    for index, turn, loop in published.turn_loops(truth):
        expected = normalised_usage(turn["requests"])
        actual = loop["usage"]
        if actual is not None:
            actual = {k: actual.get(k) for k in USAGE_MEMBERS}
        assert actual == expected, f"{name} turn {index}: usage (expected {expected})"


@pytest.mark.parametrize("truth", session_params())
def test_loop_model(published: Published, truth: dict[str, Any]) -> None:
    name = _session_id(truth)
    for index, turn, loop in published.turn_loops(truth):
        model = (loop["model"] or {}).get("id")
        assert model != "<synthetic>", f"{name} turn {index}: synthetic model reported"
        if turn["requests"]:
            assert model == turn["model"], f"{name} turn {index}: model {model}"


def test_usage_is_counted_once_over_the_dataset(published: Published) -> None:
    """All loops together carry exactly the manifest's usage: nothing double counted."""
    expected: dict[str, int] = dict.fromkeys(USAGE_MEMBERS, 0)
    for session in SESSIONS:
        usage = session["usage"]
        expected["input"] += usage["input"] + usage["cache_read"] + usage["cache_write"]
        expected["cached"] += usage["cache_read"]
        expected["cache_write"] += usage["cache_write"]
        expected["output"] += usage["output"]
        # reasoning: a loop whose requests did not all report it has no reasoning member
        for turn in session["turns"]:
            loop_usage = normalised_usage(turn["requests"])
            expected["reasoning"] += (loop_usage or {}).get("reasoning") or 0
    actual = {k: published.usage_totals[k] or 0 for k in USAGE_MEMBERS}
    assert actual == expected
    # the manifest's own sums agree with its requests (guards the expectation above)
    for session in SESSIONS:
        for key in ("input", "cache_read", "cache_write", "output"):
            per_request = sum(r["usage"][key] for t in session["turns"] for r in t["requests"])
            assert session["usage"][key] == per_request, (_session_id(session), key)


# --------------------------------------------------------------------------------------------
# 6. tool calls


@pytest.mark.parametrize("truth", session_params())
def test_tool_calls(published: Published, truth: dict[str, Any]) -> None:
    name = _session_id(truth)
    for index, turn, loop in published.turn_loops(truth):
        where = f"{name} turn {index}"
        expected = turn["tool_calls"]  # delegation calls included
        actual = published.tool_calls.get(loop["loop_id"], [])
        assert [c["tool_name"] for c in actual] == [c["name"] for c in expected], where
        for n, (want, got) in enumerate(zip(expected, actual, strict=True), 1):
            call = f"{where} call {n} ({want['name']} {want['command']!r})"
            if want["name"] == "Bash":
                assert got["role"] == "agent.tool_call.shell", call
                assert got["command"] == want["command"], call
            else:
                assert got["role"] == "agent.tool_call", call
                assert got["command"] is None, call
            arguments = json.loads(got["arguments"]) if got["arguments"] else None
            assert arguments == want["input"], f"{call}: arguments"
            if want["exit_code_explicit"]:
                assert got["exit_code"] == want["exit_code"], f"{call}: exit code"
            else:
                assert got["exit_code"] is None, f"{call}: exit code {got['exit_code']} implied"
            expected_outputs = 1 if want["has_output"] else 0
            assert got["output_count"] == expected_outputs, f"{call}: output count"


@pytest.mark.parametrize("truth", session_params())
def test_tool_call_failures(published: Published, truth: dict[str, Any]) -> None:
    """`failed` is the runtime's is_error for every call that has a result."""
    name = _session_id(truth)
    for index, turn, loop in published.turn_loops(truth):
        expected = turn["tool_calls"]
        actual = published.tool_calls.get(loop["loop_id"], [])
        assert len(actual) == len(expected), f"{name} turn {index}: tool calls"
        wrong = [
            f"call {n} {want['name']} {want['command'] or want['input']}: "
            f"is_error {want['is_error']}, failed {got['failed']}"
            for n, (want, got) in enumerate(zip(expected, actual, strict=True), 1)
            if want["has_output"] and got["failed"] is not want["is_error"]
        ]
        assert not wrong, f"{name} turn {index}: " + "; ".join(wrong)


@pytest.mark.parametrize("truth", session_params())
def test_delegations(published: Published, truth: dict[str, Any]) -> None:
    """Agent/Task calls are also agent.delegation items (from the call's record), linked to the
    child session when present; a subagent's own loops hold no copy of its task."""
    name = _session_id(truth)
    for index, turn, loop in published.turn_loops(truth):
        where = f"{name} turn {index}"
        expected = [c for c in turn["tool_calls"] if c["name"] in DELEGATING_TOOLS]
        items = published.items.get(loop["loop_id"], [])
        delegations = [i for i in items if i["role"] == "agent.delegation"]
        assert len(delegations) == len(expected), f"{where}: delegation items"
        calls = {c["item_id"]: c for c in published.tool_calls.get(loop["loop_id"], [])}
        for want, got in zip(expected, delegations, strict=True):
            assert got["text"] == want["input"].get("prompt"), f"{where}: delegation prompt"
            call = [c for c in calls.values() if c["record_ids"] == got["record_ids"]]
            assert [c["tool_name"] for c in call] == [want["name"]], f"{where}: its call"
            child = published.sessions.get(want.get("agent_id") or "")
            if child is not None:
                child_id = got["semantic"]["delegation"]["child_session_id"]
                assert child_id == child["session_id"], f"{where}: delegation child session"


@pytest.mark.parametrize("truth", session_params())
def test_subagent_reports(published: Published, truth: dict[str, Any]) -> None:
    """Each subagent that ran (its transcript is a session) reports back to the parent session:
    a subagent.report item naming the child session (the Agent result when it ran in the
    foreground, the task notification when it ran in the background)."""
    name = _session_id(truth)
    children = [
        (call["agent_id"], published.sessions[call["agent_id"]]["session_id"])
        for turn in truth["turns"]
        for call in turn["tool_calls"]
        if call["name"] in DELEGATING_TOOLS and call.get("agent_id") in published.sessions
    ]
    parent = published.session(truth)["session_id"]
    reported = [
        i["semantic"]["subagent_report"]["source_session_id"]
        for i in published.session_items.get(parent, [])
        if i["role"] == "subagent.report"
    ]
    for agent_id, child in children:
        assert child in reported, f"{name}: no subagent.report from child session {agent_id}"


# --------------------------------------------------------------------------------------------
# 7. final answers


@pytest.mark.parametrize("truth", session_params())
def test_final_answers(published: Published, truth: dict[str, Any]) -> None:
    name = _session_id(truth)
    for index, turn, loop in published.turn_loops(truth):
        where = f"{name} turn {index} ({turn['outcome']})"
        finals = [
            i["text"]
            for i in published.items.get(loop["loop_id"], [])
            if i["role"] == "agent.final_answer"
        ]
        if turn["outcome"] in FAILING_OUTCOMES:
            assert finals == [], f"{where}: final answer in a turn that did not complete"
        elif turn["outcome"] == "completed" and turn["final_text"] is not None:
            assert finals == [turn["final_text"]], where
