"""Tests for the Pi demo corpus generator (traceidx.demo.pi)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from traceidx.demo.pi import encode_cwd
from traceidx.demo.pi import generate as generate_pi_corpus
from traceidx.ingest import Settings, ingest

Line = dict[str, Any]


def _lines(path: Path) -> list[Line]:
    return [json.loads(raw) for raw in path.read_bytes().splitlines()]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("demo-pi")
    return root, generate_pi_corpus(root, sessions=24, seed=2)


def test_deterministic_and_seeded(tmp_path: Path) -> None:
    a = generate_pi_corpus(tmp_path / "a", sessions=5, seed=3)
    b = generate_pi_corpus(tmp_path / "b", sessions=5, seed=3)
    generate_pi_corpus(tmp_path / "c", sessions=5, seed=4)
    assert [p.relative_to(tmp_path / "a") for p in a] == [p.relative_to(tmp_path / "b") for p in b]
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _tree(tmp_path / "a") != _tree(tmp_path / "c")


@pytest.mark.parametrize("sessions", [1, 4])
def test_session_count_scales(tmp_path: Path, sessions: int) -> None:
    assert len(generate_pi_corpus(tmp_path, sessions=sessions, seed=1)) == sessions


def test_layout_and_header(corpus: tuple[Path, list[Path]]) -> None:
    root, paths = corpus
    assert paths == sorted(paths) and set(paths) == set(root.rglob("*.jsonl"))
    for path in paths:
        header, *entries = _lines(path)
        assert header["type"] == "session" and header["version"] == 3
        assert path.parent.parent == root / "sessions"
        assert path.parent.name == encode_cwd(header["cwd"])
        stamp = header["timestamp"].replace(":", "-").replace(".", "-")
        assert path.name == f"{stamp}_{header['id']}.jsonl"
        seen: set[str | None] = {None}
        for entry in entries:  # a tree: every parent was written before its child
            assert entry["parentId"] in seen and entry["id"] not in seen
            seen.add(entry["id"])


def test_tool_results_pair_with_calls(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    for path in paths:
        calls: set[str] = set()
        for entry in _lines(path)[1:]:
            message = entry.get("message", {})
            for block in message.get("content", []) if message.get("role") == "assistant" else []:
                if block["type"] == "toolCall":
                    calls.add(block["id"])
            if message.get("role") == "toolResult":
                assert message["toolCallId"] in calls


def test_scenarios_present(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    entries = [e for p in paths for e in _lines(p)[1:]]
    kinds = Counter(e["type"] for e in entries)
    assert {"compaction", "branch_summary", "custom_message", "session_info"} <= set(kinds)
    messages = [e["message"] for e in entries if e["type"] == "message"]
    stops = Counter(m.get("stopReason") for m in messages if m["role"] == "assistant")
    assert {"stop", "toolUse", "error", "aborted"} <= set(stops)
    assert any(m["role"] == "bashExecution" for m in messages)
    assert len({m["api"] for m in messages if m["role"] == "assistant"}) == 3
    results = [m for m in messages if m["role"] == "toolResult"]
    assert any(
        m["isError"] and "Command exited with code" in m["content"][0]["text"] for m in results
    )
    assert any(len(json.dumps(m)) > 70 * 1024 for m in results)
    prompts = [m["content"][0]["text"] for m in messages if m["role"] == "user"]
    assert any(not p.isascii() for p in prompts)
    months = {e["timestamp"][:7] for e in entries}
    assert len(months) >= 2


def test_the_adapter_reads_every_file(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    outcomes: Counter[str | None] = Counter()
    roles: Counter[str] = Counter()
    for path in paths:
        result = ingest(str(path), Settings())
        assert result.state == "indexed" and result.runtime == "pi", result.reason
        assert result.unknown_types == {}
        assert result.projection is not None and result.projection.loops
        outcomes.update(loop.end.outcome if loop.end else None for loop in result.projection.loops)
        roles.update(i.semantic.__struct_config__.tag for i in result.projection.items)
    assert outcomes["interrupted"] and outcomes["failed"]
    for role in ("human.request", "human.steering", "agent.final_answer", "agent.tool_call.shell"):
        assert roles[role], role
    assert roles["runtime.compaction_summary"] and roles["runtime.context"]


def test_line_sizes_are_calibrated(tmp_path: Path) -> None:
    """Mean bytes per line near the public Pi corpus (1,685; band ±25%), some long sessions."""
    paths = generate_pi_corpus(tmp_path, sessions=36, seed=9)
    files = [p.read_bytes().splitlines() for p in paths]
    raw = [line for lines in files for line in lines]
    assert 1260 <= sum(len(x) + 1 for x in raw) / len(raw) <= 2110
    results = [len(x) for x in raw if b'"role":"toolResult"' in x]
    assert 1800 <= sum(results) / len(results) <= 3000  # real: 2,410
    assert max(len(lines) for lines in files) >= 100
