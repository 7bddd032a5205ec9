"""The generated Pi corpus against its ground truth (``generated/pi/manifest.json``).

pi 0.73.1 wrote these files (format v3) while a scripted model answered through three provider
APIs, so the manifest states exactly what happened (``GENERATED-codex-pi.md``). Each test is
parametrised over the manifest's sessions and compares one family of facts with what traceidx
publishes through its views:

* the session (native id, working directory, created from the header),
* loops: one per ``prompt`` turn in order, opened by the human prompt; a user's own ``!cmd``
  (``user_bash`` turn) opens none and is published as Session-level items,
* outcomes: ``interrupted``/``failed`` exactly; never one for ``completed`` or ``unknown`` turns,
* loop usage (contract normalisation of the recorded per-message usage) and model,
* tool calls (tool, command, shell role, arguments, failure, outputs, and the exit codes Pi
  states: its fixed last line on a non-zero exit, or a structured ``exitCode``) and final
  answers.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.facts import dict_rows, text_of
from tests.support.files import generated
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build

GENERATED = generated("pi")
MANIFEST = GENERATED / "manifest.json"

if not MANIFEST.is_file():
    pytest.skip(f"generated Pi corpus not available: {MANIFEST}", allow_module_level=True)

SESSIONS: list[dict[str, Any]] = json.loads(MANIFEST.read_text("utf-8"))["sessions"]
FAILING = frozenset({"interrupted", "failed"})


def params() -> list[Any]:
    return [pytest.param(s, id=s["key"].removeprefix("pi/")) for s in SESSIONS]


def prompt_turns(truth: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in truth["turns"] if t["kind"] == "prompt"]


def expected_usage(turn: dict[str, Any]) -> dict[str, int | None] | None:
    """The contract's usage of a turn: Pi's input excludes cache reads and writes."""
    recorded = turn["usage_recorded_sum"]
    if not turn["requests"] or not any(recorded.values()):
        return None  # failed attempts stating only zeros billed nothing: usage is absent
    return {
        "input": recorded["input"] + recorded["cacheRead"] + recorded["cacheWrite"],
        "cached": recorded["cacheRead"],
        "cache_write": recorded["cacheWrite"],
        "output": recorded["output"],
        "reasoning": None,  # Pi folds reasoning tokens into output
    }


PI_TEXT_SHAPES = ("text", "tool_output", "context")


@dataclass
class Published:
    sessions: dict[str, dict[str, Any]]
    loops: dict[int, list[dict[str, Any]]]  # session_id -> loops by position
    items: dict[int, list[dict[str, Any]]]  # loop_id -> items by position
    session_items: dict[int, list[dict[str, Any]]]  # session_id -> items without a loop
    tool_calls: dict[int, list[dict[str, Any]]]  # loop_id -> calls by position

    def session(self, truth: dict[str, Any]) -> dict[str, Any]:
        row = self.sessions.get(truth["session_id"])
        assert row is not None, f"{truth['key']}: no session"
        return row

    def turn_loops(self, truth: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        loops = self.loops.get(self.session(truth)["session_id"], [])
        turns = prompt_turns(truth)
        assert len(loops) == len(turns), f"{truth['key']}: {len(loops)} loops, {len(turns)} turns"
        return list(zip(turns, loops, strict=True))


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Published:
    dataset = tmp_path_factory.mktemp("pi-ground-truth") / "dataset"
    report = build([GENERATED], dataset, jobs=1)
    assert report.exit_code == 0, [r.reason for r in report.results]
    con = connect(dataset)
    try:
        sessions = {
            r["native_id"]: r
            for r in dict_rows(
                con,
                "SELECT session_id, native_id, runtime, working_directory, created_at, "
                "forked_from FROM sessions",
            )
        }
        loops: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for r in dict_rows(
            con,
            'SELECT loop_id, session_id, "end", model, usage FROM loops '
            "ORDER BY session_id, session_position",
        ):
            loops[r["session_id"]].append(r)
        items: dict[int, list[dict[str, Any]]] = defaultdict(list)
        session_items: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for r in dict_rows(
            con,
            "SELECT session_id, loop_id, loop_position, semantic FROM items "
            "ORDER BY session_id, loop_id, loop_position, item_id",
        ):
            r["role"] = r["semantic"]["role"]
            r["text"] = text_of(r["semantic"], PI_TEXT_SHAPES)
            if r["loop_id"] is None:
                session_items[r["session_id"]].append(r)
            else:
                items[r["loop_id"]].append(r)
        calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for r in dict_rows(
            con,
            "SELECT t.*, i.loop_position FROM tool_calls t JOIN items i USING (item_id) "
            "ORDER BY t.loop_id, i.loop_position",
        ):
            calls[r["loop_id"]].append(r)
    finally:
        con.close()
    return Published(sessions, loops, items, session_items, calls)


@pytest.mark.parametrize("truth", params())
def test_session(published: Published, truth: dict[str, Any]) -> None:
    row = published.session(truth)
    assert row["runtime"] == "pi"
    assert row["working_directory"] == truth["cwd"]
    assert row["created_at"] is not None
    assert row["forked_from"] is None


@pytest.mark.parametrize("truth", params())
def test_loops_open_with_the_prompt(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        where = f"{truth['key']} turn {turn['index']}"
        items = published.items[loop["loop_id"]]
        assert [i["loop_position"] for i in items] == list(range(len(items))), where
        assert items[0]["role"] == "human.request", where
        assert items[0]["text"] == turn["prompt"], where
        assert [i for i in items if i["role"] == "human.request"] == [items[0]], where
        assert not [i for i in items if i["role"] == "human.steering"], where
    humans = [
        i["text"]
        for loop in published.loops[published.session(truth)["session_id"]]
        for i in published.items[loop["loop_id"]]
        if i["role"].startswith("human.")
    ]
    assert humans == truth["human_prompts"]


@pytest.mark.parametrize("truth", params())
def test_outcomes(published: Published, truth: dict[str, Any]) -> None:
    pairs = published.turn_loops(truth)
    for n, (turn, loop) in enumerate(pairs):
        where = f"{truth['key']} turn {turn['index']} ({turn['outcome']})"
        end = loop["end"]
        if turn["outcome"] in FAILING:
            assert end is not None and end["outcome"] == turn["outcome"], where
        else:
            assert end is None or end["outcome"] is None, where
        if n + 1 < len(pairs):  # every loop but the last is ended, at the latest by the next
            assert end is not None, where


@pytest.mark.parametrize("truth", params())
def test_usage_and_model(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        where = f"{truth['key']} turn {turn['index']}"
        assert loop["usage"] == expected_usage(turn), where
        assert (loop["model"] or {}).get("id") == turn["model"], where


@pytest.mark.parametrize("truth", params())
def test_tool_calls(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        where = f"{truth['key']} turn {turn['index']}"
        expected = turn["tool_calls"]
        actual = published.tool_calls.get(loop["loop_id"], [])
        assert [c["tool_name"] for c in actual] == [c["tool"] for c in expected], where
        for want, got in zip(expected, actual, strict=True):
            call = f"{where} {want['tool']} {want['command']!r}"
            if want["tool"] == "bash":
                assert got["role"] == "agent.tool_call.shell", call
                assert got["command"] == want["command"], call
            else:
                assert got["role"] == "agent.tool_call" and got["command"] is None, call
            assert json.loads(got["arguments"]) == want["arguments"], call
            assert got["output_count"] == int(want["has_output"]), call
            assert got["failed"] is want["failed"], call
            # the exit code Pi states (its fixed last line on a non-zero exit), or none
            assert got["exit_code"] == want["exit_code"], call


@pytest.mark.parametrize("truth", params())
def test_user_commands_are_session_items(published: Published, truth: dict[str, Any]) -> None:
    """A user's own ``!cmd`` (RPC ``bash``): its command and structured exit code, no loop."""
    items = published.session_items.get(published.session(truth)["session_id"], [])
    commands = [i["text"] for i in items if i["role"] == "runtime.context"]
    outputs = [i["semantic"]["tool_output"] for i in items if i["role"] == "tool.output"]
    expected = [c for t in truth["turns"] if t["kind"] == "user_bash" for c in t["tool_calls"]]
    assert commands == [c["command"] for c in expected]
    assert [(o["exit_code"], o["failed"]) for o in outputs] == [
        (c["exit_code"], c["failed"]) for c in expected
    ]
    for output, want in zip(outputs, expected, strict=True):
        assert want["expect_in_output"] in output["text"]["value"]


@pytest.mark.parametrize("truth", params())
def test_final_answers(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        where = f"{truth['key']} turn {turn['index']} ({turn['outcome']})"
        finals = [
            i["text"] for i in published.items[loop["loop_id"]] if i["role"] == "agent.final_answer"
        ]
        expected = [turn["final_answer"]] if turn["final_answer"] is not None else []
        assert finals == expected, where


def test_every_file_is_a_session(published: Published) -> None:
    files = sorted(p.name for p in Path(GENERATED).glob("*.jsonl"))
    assert len(files) == len(SESSIONS) == len(published.sessions)
