"""Tests for the Codex demo corpus generator (traceidx.demo.codex) and its projection."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from traceidx.build import build
from traceidx.demo.codex import generate
from traceidx.query import connect

Line = dict[str, Any]
NAME = re.compile(
    r"rollout-(\d{4})-(\d{2})-(\d{2})T\d{2}-\d{2}-\d{2}-"
    r"([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\.jsonl"
)


def _lines(path: Path) -> list[Line]:
    return [json.loads(raw) for raw in path.read_bytes().splitlines()]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("codex-demo")
    return root, generate(root, sessions=16, seed=5)


def test_deterministic_and_seeded(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", sessions=6, seed=2)
    generate(tmp_path / "b", sessions=6, seed=2)
    generate(tmp_path / "c", sessions=6, seed=3)
    assert a == sorted(a)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _tree(tmp_path / "a") != _tree(tmp_path / "c")


def test_layout_and_envelope(corpus: tuple[Path, list[Path]]) -> None:
    root, paths = corpus
    assert set(paths) == set(root.rglob("*.jsonl"))
    for path in paths:
        match = NAME.fullmatch(path.name)
        assert match, path.name
        assert path.parent.relative_to(root).parts == ("sessions", *match.groups()[:3])
        lines = _lines(path)
        assert lines[0]["type"] == "session_meta" and lines[0]["payload"]["id"] == match[4]
        assert [x["ordinal"] for x in lines] == list(range(len(lines)))
        assert all(set(x) == {"timestamp", "ordinal", "type", "payload"} for x in lines)


def test_scenarios_present(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    lines = [x for p in paths for x in _lines(p)]
    events = [x["payload"] for x in lines if x["type"] == "event_msg"]
    kinds = {e["type"] for e in events}
    assert {"task_started", "task_complete", "turn_aborted", "token_count", "item_completed"} <= (
        kinds | {"context_compacted"}
    )
    assert "context_compacted" in kinds and any(x["type"] == "compacted" for x in lines)
    assert any(e["type"] == "task_complete" and e.get("error") for e in events)
    codes = {
        e["item"]["exit_code"]
        for e in events
        if e["type"] == "item_completed" and e["item"]["type"] == "CommandExecution"
    }
    assert {0, 1, 2, 127, -1} <= codes
    names = {x["payload"].get("name") for x in lines if x["type"] == "response_item"}
    assert {"exec_command", "write_stdin", "spawn_agent", "apply_patch"} <= names
    prompts = [
        e["item"]["content"][0]["text"]
        for e in events
        if e["type"] == "item_completed" and e["item"]["type"] == "UserMessage"
    ]
    assert any(not p.isascii() for p in prompts)
    assert any(x["type"] == "token_usage_record" for x in lines)


def test_subagent_children_replay_their_parent(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    by_id = {_lines(p)[0]["payload"]["id"]: p for p in paths}
    children = [p for p in paths if _lines(p)[0]["payload"].get("thread_source") == "subagent"]
    assert children
    for path in children:
        lines = _lines(path)
        meta = lines[0]["payload"]
        parent = _lines(by_id[meta["parent_thread_id"]])
        start = meta["subagent_history_start_ordinal"]
        copied = [{k: v for k, v in x.items() if k != "ordinal"} for x in lines[1:start]]
        original = [{k: v for k, v in x.items() if k != "ordinal"} for x in parent[: start - 1]]
        assert copied == original


def test_demo_projects_cleanly(corpus: tuple[Path, list[Path]], tmp_path: Path) -> None:
    root, paths = corpus
    report = build([root], tmp_path / "ds", jobs=1)
    assert report.exit_code == 0 and report.count("indexed") == len(paths)
    con = connect(tmp_path / "ds")
    outcomes = dict(con.sql('SELECT "end".outcome, count(*) FROM loops GROUP BY 1').fetchall())
    assert outcomes.get("interrupted") and outcomes.get("failed") and outcomes.get("completed")
    children = [
        _lines(p)[0]["payload"]["id"]
        for p in paths
        if "parent_thread_id" in _lines(p)[0]["payload"]
    ]
    linked = con.sql(
        "SELECT native_id FROM sessions WHERE delegated_from IS NOT NULL ORDER BY 1"
    ).fetchall()
    assert children and [n for (n,) in linked] == sorted(children)
    # every model call counted once: loop usage sums equal each file's last cumulative counter
    # minus what a child inherited from its parent
    for path in paths:
        lines = _lines(path)
        meta = lines[0]["payload"]
        start = meta.get("subagent_history_start_ordinal", 1)
        counts = [
            x["payload"]["info"]["total_token_usage"]["input_tokens"]
            for x in lines
            if x["type"] == "event_msg" and x["payload"]["type"] == "token_count"
        ]
        inherited = [
            x["payload"]["info"]["total_token_usage"]["input_tokens"]
            for x in lines[1:start]
            if x["type"] == "event_msg" and x["payload"]["type"] == "token_count"
        ]
        (total,) = con.execute(
            "SELECT sum(l.usage.input) FROM loops l JOIN sessions s USING (session_id) "
            f"WHERE s.native_id = '{meta['id']}'"
        ).fetchone()
        assert total == counts[-1] - (inherited[-1] if inherited else 0), path.name


def test_line_sizes_are_calibrated(tmp_path: Path) -> None:
    """Mean bytes per line near the public Codex corpus (757; band ±25%), outputs realistic."""
    paths = generate(tmp_path, sessions=40, seed=11)
    raw = [line for p in paths for line in p.read_bytes().splitlines()]
    assert 570 <= sum(len(x) + 1 for x in raw) / len(raw) <= 950
    outputs = [
        len(x)
        for x in raw
        if b'"type":"response_item"' in x and b'"type":"function_call_output"' in x
    ]
    assert 880 <= sum(outputs) / len(outputs) <= 1460  # real: 1,169
