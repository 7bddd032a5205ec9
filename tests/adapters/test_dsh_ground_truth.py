"""The generated dsh corpus against its ground truth (``manifest.json``).

The corpus under ``generated/dsh`` was written by dsh 0.1.0-rc.8 itself (multi-frame zstd logs,
exactly as it stores them) against a scripted model; the manifest states per session and turn
what happened (``GENERATED.md``, "How to count"), and each instance's ``_gen/mock-responses.jsonl``
records every request the model served with its exact usage. Each test is parametrised over the
manifest's sessions and compares one family of facts with what traceidx publishes:

* sessions and delegation links; loops (one per turn, in order) and their opening items;
* outcomes (completed, interrupted, failed; "unknown" = no outcome);
* loop usage: the manifest's per-step usage plus, where dsh logged it, the usage of the
  compaction summariser calls the turn made (taken from the model's own record of them), under
  the contract's normalisation and the usage-gap rule; the model id;
* tool calls (name, arguments, shell command, exit code only when dsh wrote it, failure under
  the shared rule, outputs), delegations; final answers; the human prompts of each session.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.facts import dict_rows, text_of
from tests.support.files import generated
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build

GENERATED = generated("dsh")
MANIFEST = GENERATED / "manifest.json"

if not MANIFEST.is_file():
    pytest.skip(f"generated dsh corpus not available: {MANIFEST}", allow_module_level=True)

TRUTH: dict[str, Any] = json.loads(MANIFEST.read_text("utf-8"))
SESSIONS: list[dict[str, Any]] = TRUTH["sessions"]

DELEGATING_TOOLS = frozenset(
    {"subagent", "subagent_fork", "subagent_codex", "subagent_claude_code"}
)
USAGE_MEMBERS = ("input", "cached", "cache_write", "output", "reasoning")
OUTCOMES = {"completed": "completed", "interrupted": "interrupted", "failed": "failed"}


def _name(session: dict[str, Any]) -> str:
    return f"{session['instance']}-{session['role']}-{session['session_id'][-8:]}"


def session_params() -> list[Any]:
    return [pytest.param(session, id=_name(session)) for session in SESSIONS]


# --------------------------------------------------------------------------------------------
# Expected values from the ground truth


def _mock_requests(instance: str) -> list[dict[str, Any]]:
    path = GENERATED / instance / "_gen" / "mock-responses.jsonl"
    lines = path.read_text("utf-8").splitlines() if path.is_file() else []
    return sorted((json.loads(line) for line in lines if line.strip()), key=lambda r: r["seq"])


def _mock_usage(request: dict[str, Any]) -> dict[str, int | None]:
    """A served request's usage in the manifest's (dsh) units."""
    usage = request["usage"]
    cached = usage.get("prompt_tokens_details", {}).get("cached_tokens", 0)
    reasoning = usage.get("completion_tokens_details", {}).get("reasoning_tokens")
    return {
        "input": usage["prompt_tokens"] - cached,
        "cache_read": cached,
        "cache_write": None,
        "output": usage["completion_tokens"],
        "reasoning": reasoning,
    }


def compaction_calls(session: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
    """turn index -> the compaction summariser calls served during it, as request records.

    The model served the main session's steps in order (threads ``main`` and ``post-compact``,
    answered ``ok``), so the k-th such request is the manifest's k-th step of the session; a
    compaction call belongs to the turn of the step served before it. (Subagent children share
    the instance's record under their own thread and compact nothing here.)"""
    if session["role"] != "main":
        return {}
    steps = [t["index"] for t in session["turns"] for _ in t["requests"]]
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    served = 0
    for request in _mock_requests(session["instance"]):
        if request["result"] != "ok":
            continue
        if request["thread"] in ("main", "post-compact"):
            served += 1
        elif request["thread"] == "compact" and served:
            out[steps[served - 1]].append({"usage": _mock_usage(request)})
    assert served == len(steps), f"{_name(session)}: served steps and manifest steps differ"
    return out


def normalised_usage(requests: list[dict[str, Any]]) -> dict[str, int | None] | None:
    """Loop usage under the contract: input includes cache reads and writes; an optional member
    is present only when every request reported it; no requests -> no usage."""
    if not requests:
        return None

    def total(key: str) -> int | None:
        values = [r["usage"].get(key) for r in requests]
        return None if any(v is None for v in values) else sum(values)

    cache_read, cache_write = total("cache_read"), total("cache_write")
    return {
        "input": sum(
            r["usage"]["input"] + (r["usage"]["cache_read"] or 0) + (r["usage"]["cache_write"] or 0)
            for r in requests
        ),
        "cached": cache_read,
        "cache_write": cache_write,
        "output": total("output"),
        "reasoning": total("reasoning"),
    }


# --------------------------------------------------------------------------------------------
# The dataset, built once


@dataclass
class Published:
    sessions: dict[str, dict[str, Any]]
    loops: dict[int, list[dict[str, Any]]]
    items: dict[int, list[dict[str, Any]]]
    session_items: dict[int, list[dict[str, Any]]]
    tool_calls: dict[int, list[dict[str, Any]]]
    sources: list[dict[str, Any]]

    def session(self, truth: dict[str, Any]) -> dict[str, Any]:
        row = self.sessions.get(truth["session_id"])
        assert row is not None, f"{_name(truth)}: no session with this native id"
        return row

    def turn_loops(self, truth: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        loops = self.loops.get(self.session(truth)["session_id"], [])
        assert len(loops) == len(truth["turns"]), f"{_name(truth)}: {len(loops)} loops"
        return list(zip(truth["turns"], loops, strict=True))


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Published:
    dataset = tmp_path_factory.mktemp("dsh-ground-truth") / "dataset"
    report = build([GENERATED], dataset, jobs=1)
    assert report.exit_code == 0, (report.problems, [r.reason for r in report.results])
    con = connect(dataset)
    try:
        sessions = {
            row["native_id"]: row
            for row in dict_rows(
                con,
                "SELECT session_id, native_id, runtime, delegated_from, "
                "forked_from, working_directory FROM sessions",
            )
        }
        loops: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            'SELECT loop_id, session_id, native_id, "end", model, usage FROM loops '
            "ORDER BY session_id, session_position",
        ):
            loops[row["session_id"]].append(row)
        items: dict[int, list[dict[str, Any]]] = defaultdict(list)
        session_items: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            "SELECT i.item_id, i.session_id, i.loop_id, i.loop_position, i.semantic "
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
            "SELECT t.*, i.loop_position FROM tool_calls AS t JOIN items AS i USING (item_id) "
            "ORDER BY t.loop_id, i.loop_position",
        ):
            tool_calls[row["loop_id"]].append(row)
        sources = dict_rows(con, "SELECT locator, runtime, compression FROM sources")
    finally:
        con.close()
    return Published(sessions, loops, items, session_items, tool_calls, sources)


# --------------------------------------------------------------------------------------------
# Sources and sessions


def test_every_session_file_is_a_zstd_source(published: Published) -> None:
    files = {str((GENERATED / s["file"]).resolve()) for s in SESSIONS}
    by_locator = {s["locator"]: s for s in published.sources}
    assert files <= set(by_locator)
    assert {by_locator[f]["compression"] for f in files} == {"zstd"}
    assert {by_locator[f]["runtime"] for f in files} == {"dsh"}


@pytest.mark.parametrize("truth", session_params())
def test_session_and_links(published: Published, truth: dict[str, Any]) -> None:
    row = published.session(truth)
    assert row["runtime"] == "dsh" and row["working_directory"] == truth["cwd"]
    assert row["forked_from"] is None
    parent = truth["parent_session_id"]
    if parent is None:
        assert row["delegated_from"] is None
    else:
        assert row["delegated_from"]["session_id"] == published.sessions[parent]["session_id"]


# --------------------------------------------------------------------------------------------
# Loops, their opening items, outcomes


@pytest.mark.parametrize("truth", session_params())
def test_loops_match_turns(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        where = f"{_name(truth)} turn {turn['index']} ({turn['trigger']})"
        assert loop["native_id"] == str(turn["index"]), where
        items = published.items.get(loop["loop_id"], [])
        assert items, f"{where}: loop has no items"
        requests = [i for i in items if i["role"] == "human.request"]
        steering = [i["text"] for i in items if i["role"] == "human.steering"]
        if turn["trigger"] == "user":
            assert items[0]["role"] == "human.request", where
            assert [r["text"] for r in requests] == [turn["prompt"]], where
        elif turn["trigger"] == "agent-task":  # the parent's task: a Record opens the Loop
            assert "agent.delegation" not in [i["role"] for i in items], where
            assert not requests, where
        else:  # opened by the runtime (a subagent settlement)
            assert not requests, where
            assert items[0]["role"] == "subagent.report", where
        assert steering == turn["steering"], where


@pytest.mark.parametrize("truth", session_params())
def test_human_prompts_of_session(published: Published, truth: dict[str, Any]) -> None:
    row = published.session(truth)
    texts = [
        i["text"]
        for i in published.session_items.get(row["session_id"], [])
        if i["role"] in ("human.request", "human.steering")
    ]
    assert texts == truth["human_prompts"], _name(truth)


@pytest.mark.parametrize("truth", session_params())
def test_outcomes(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        outcome = (loop["end"] or {}).get("outcome")
        assert outcome == OUTCOMES.get(turn["outcome"]), f"{_name(truth)} turn {turn['index']}"
        if turn["outcome"] == "unknown":  # the log stops inside the turn
            assert loop["end"] is None, f"{_name(truth)} turn {turn['index']}"


# --------------------------------------------------------------------------------------------
# Usage and model


@pytest.mark.parametrize("truth", session_params())
def test_loop_usage(published: Published, truth: dict[str, Any]) -> None:
    compactions = compaction_calls(truth)
    for turn, loop in published.turn_loops(truth):
        expected = normalised_usage(turn["requests"] + compactions.get(turn["index"], []))
        actual = loop["usage"]
        if actual is not None:
            actual = {k: actual.get(k) for k in USAGE_MEMBERS}
        assert actual == expected, f"{_name(truth)} turn {turn['index']}: usage"


def test_compaction_calls_are_counted() -> None:
    """The expectation above is not vacuous: the corpus has summariser calls inside a turn."""
    assert sum(len(v) for s in SESSIONS for v in compaction_calls(s).values()) >= 2


@pytest.mark.parametrize("truth", session_params())
def test_loop_model(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        model = (loop["model"] or {}).get("id")
        if turn["requests"]:
            assert model == turn["model"], f"{_name(truth)} turn {turn['index']}"


# --------------------------------------------------------------------------------------------
# Tool calls, delegations, final answers


@pytest.mark.parametrize("truth", session_params())
def test_tool_calls(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        where = f"{_name(truth)} turn {turn['index']}"
        expected = turn["tool_calls"]  # delegating calls are tool calls too
        actual = published.tool_calls.get(loop["loop_id"], [])
        assert [c["tool_name"] for c in actual] == [c["name"] for c in expected], where
        for n, (want, got) in enumerate(zip(expected, actual, strict=True), 1):
            call = f"{where} call {n} ({want['name']} {want['command']!r})"
            if want["name"] == "bash":
                assert got["role"] == "agent.tool_call.shell", call
                assert got["command"] == want["command"], call
            else:
                assert got["role"] == "agent.tool_call" and got["command"] is None, call
            assert json.loads(got["arguments"]) == want["input"], call
            assert got["output_count"] == (1 if want["has_output"] else 0), call
            explicit = want["exit_code"] if want["exit_code_explicit"] else None
            assert got["exit_code"] == explicit, f"{call}: exit code"
            if want["has_output"]:
                failed = bool(want["is_error"]) or bool(explicit)
                assert got["failed"] is failed, f"{call}: failed"
                assert failed is want["failed"], f"{call}: the shared rule and the manifest"


@pytest.mark.parametrize("truth", session_params())
def test_delegations(published: Published, truth: dict[str, Any]) -> None:
    """subagent calls are agent.delegation items; the child's result comes back as a report or,
    for a call that started the child in the background, as activity."""
    for turn, loop in published.turn_loops(truth):
        where = f"{_name(truth)} turn {turn['index']}"
        expected = [c for c in turn["tool_calls"] if c["name"] in DELEGATING_TOOLS]
        items = published.items.get(loop["loop_id"], [])
        delegations = [i for i in items if i["role"] == "agent.delegation"]
        assert [d["text"] for d in delegations] == [c["input"]["prompt"] for c in expected], where
        results = [i for i in items if i["role"] in ("subagent.report", "subagent.activity")]
        assert len(results) >= sum(1 for c in expected if c["has_output"]), where


@pytest.mark.parametrize("truth", session_params())
def test_final_answers(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        finals = [
            i["text"]
            for i in published.items.get(loop["loop_id"], [])
            if i["role"] == "agent.final_answer"
        ]
        where = f"{_name(truth)} turn {turn['index']} ({turn['outcome']})"
        if turn["outcome"] == "completed" and turn["final_text"] is not None:
            assert finals == [turn["final_text"]], where
        else:
            assert finals == [], where
    row = published.session(truth)
    answers = [
        i["text"]
        for i in published.session_items.get(row["session_id"], [])
        if i["role"] == "agent.final_answer"
    ]
    assert (answers[-1] if answers else None) == truth["final_answer"], _name(truth)
