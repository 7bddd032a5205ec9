"""The generated Codex corpus against its ground truth (``generated/codex/manifest.json``).

The rollouts under ``generated/codex`` were written by the real codex-cli 0.171.0 driven by a
scripted model; the manifest states per session and turn what happened (see
``GENERATED-codex-pi.md``). Every test is parametrised over the manifest's sessions and
compares one family of facts with what traceidx publishes through its views:

* one loop per turn, in order, with the turn's outcome (completed / interrupted / failed),
* the model id and the usage the CLI recorded (input incl. cached, cached, output, reasoning),
  counted once per model call although 0.171 writes each call twice (``token_usage_record``
  and ``token_count``),
* the ordered tool calls with their names, shell commands and the exit codes the file states,
* the human prompts (and nothing injected), and the final answers of completed turns.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.facts import dict_rows
from tests.support.files import generated
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build

GENERATED = generated("codex")
MANIFEST = GENERATED / "manifest.json"

if not MANIFEST.is_file():
    pytest.skip(f"generated Codex corpus not available: {MANIFEST}", allow_module_level=True)

TRUTH: dict[str, Any] = json.loads(MANIFEST.read_text("utf-8"))
SESSIONS: list[dict[str, Any]] = TRUTH["sessions"]
#: manifest usage keys (Codex's own) -> contract usage members
USAGE_KEYS = {
    "input_tokens": "input",
    "cached_input_tokens": "cached",
    "output_tokens": "output",
    "reasoning_output_tokens": "reasoning",
}
SHELL_TOOLS = frozenset({"exec_command"})


def session_params() -> list[Any]:
    return [pytest.param(s, id=s["key"].split("/", 1)[1]) for s in SESSIONS]


def expected_usage(turn: dict[str, Any]) -> dict[str, int] | None:
    """The turn's recorded usage in contract members; None when no request recorded any
    (absent usage is unknown, not zero)."""
    recorded = [r["usage_recorded"] for r in turn["requests"] if r["usage_recorded"]]
    if not recorded:
        return None
    return {member: sum(r[key] for r in recorded) for key, member in USAGE_KEYS.items()}


@dataclass
class Published:
    sessions: dict[str, dict[str, Any]]
    loops: dict[int, list[dict[str, Any]]]
    items: dict[int, list[dict[str, Any]]]
    tool_calls: dict[int, list[dict[str, Any]]]

    def turn_loops(self, truth: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        session = self.sessions.get(truth["session_id"])
        assert session is not None, f"{truth['key']}: no session"
        loops = self.loops.get(session["session_id"], [])
        turns = truth["turns"]
        assert len(loops) == len(turns), f"{truth['key']}: {len(loops)} loops, {len(turns)} turns"
        return list(zip(turns, loops, strict=True))


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Published:
    dataset = tmp_path_factory.mktemp("codex-ground-truth") / "dataset"
    report = build([GENERATED], dataset, jobs=1)
    assert report.exit_code == 0, [r.reason for r in report.results if r.state == "failed"]
    skipped = {Path(r.locator).name for r in report.results if r.state == "skipped"}
    assert skipped == {"manifest.json"} or not skipped, skipped
    con = connect(dataset)
    try:
        sessions = {
            r["native_id"]: r
            for r in dict_rows(
                con, "SELECT session_id, native_id, runtime, working_directory FROM sessions"
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
        for row in dict_rows(
            con,
            "SELECT loop_id, session_id, semantic.role AS role, "
            "coalesce(semantic.text.text.value, semantic.delegation.text.value) AS text "
            "FROM items WHERE loop_id IS NOT NULL ORDER BY loop_id, loop_position",
        ):
            items[row["loop_id"]].append(row)
        calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dict_rows(
            con,
            "SELECT t.*, i.loop_position FROM tool_calls t JOIN items i USING (item_id) "
            "ORDER BY t.loop_id, i.loop_position",
        ):
            calls[row["loop_id"]].append(row)
    finally:
        con.close()
    return Published(sessions, loops, items, calls)


@pytest.mark.parametrize("truth", session_params())
def test_session(published: Published, truth: dict[str, Any]) -> None:
    row = published.sessions[truth["session_id"]]
    assert row["runtime"] == "codex"
    assert row["working_directory"] == truth["cwd"]


@pytest.mark.parametrize("truth", session_params())
def test_loops_outcomes_and_models(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        where = f"{truth['key']} turn {turn['index']}"
        assert loop["native_id"], where
        assert loop["end"] is not None, where
        assert loop["end"]["outcome"] == turn["outcome"], where
        assert (loop["model"] or {}).get("id") == turn["model"], where


@pytest.mark.parametrize("truth", session_params())
def test_loop_usage(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        usage = loop["usage"]
        actual = {m: usage[m] for m in USAGE_KEYS.values()} if usage else None
        assert actual == expected_usage(turn), f"{truth['key']} turn {turn['index']}"


def test_usage_is_counted_once_over_the_corpus(published: Published) -> None:
    """All loops together carry exactly the recorded usage: nothing is counted twice."""
    expected = {m: 0 for m in USAGE_KEYS.values()}
    for session in SESSIONS:
        for key, member in USAGE_KEYS.items():
            expected[member] += session["usage_recorded_total"][key]
    actual = {m: 0 for m in USAGE_KEYS.values()}
    for loops in published.loops.values():
        for loop in loops:
            for member in actual:
                actual[member] += (loop["usage"] or {}).get(member) or 0
    assert actual == expected


@pytest.mark.parametrize("truth", session_params())
def test_tool_calls(published: Published, truth: dict[str, Any]) -> None:
    for turn, loop in published.turn_loops(truth):
        where = f"{truth['key']} turn {turn['index']}"
        expected = turn["tool_calls"]
        actual = published.tool_calls.get(loop["loop_id"], [])
        assert [c["tool_name"] for c in actual] == [c["tool"] for c in expected], where
        for n, (want, got) in enumerate(zip(expected, actual, strict=True), 1):
            call = f"{where} call {n} ({want['tool']} {want['command']!r})"
            if want["tool"] in SHELL_TOOLS:
                assert got["role"] == "agent.tool_call.shell", call
                assert got["command"] == want["command"], call
            else:
                assert got["role"] == "agent.tool_call", call
            assert json.loads(got["arguments"]) == want["arguments"], call
            assert got["exit_code"] == want["exit_code"], call
            assert got["output_count"] == (1 if want["has_output"] else 0), call
            if want["has_output"]:
                assert got["failed"] is want["failed"], call


@pytest.mark.parametrize("truth", session_params())
def test_human_prompts_and_final_answers(published: Published, truth: dict[str, Any]) -> None:
    prompts: list[str] = []
    for turn, loop in published.turn_loops(truth):
        items = published.items[loop["loop_id"]]
        where = f"{truth['key']} turn {turn['index']}"
        humans = [i for i in items if i["role"].startswith("human.")]
        assert humans and humans[0]["role"] == "human.request", where
        prompts += [i["text"] for i in humans]
        finals = [i["text"] for i in items if i["role"] == "agent.final_answer"]
        if turn["final_answer"] is not None:
            assert finals[-1:] == [turn["final_answer"]], where
        else:
            assert not finals, where
    assert prompts == truth["human_prompts"], truth["key"]
