"""Tests for the Claude Code demo corpus generator (traceidx.demo.claude)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import corpus_path
from traceidx.demo.claude import encode_cwd
from traceidx.demo.claude import generate as generate_claude_corpus
from traceidx.ingest import Settings, ingest

Line = dict[str, Any]


def _lines(path: Path) -> list[Line]:
    return [json.loads(raw) for raw in path.read_bytes().splitlines()]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("demo")
    return root, generate_claude_corpus(root)


def _main_files(paths: list[Path]) -> list[Path]:
    return [p for p in paths if p.parent.name != "subagents"]


def test_deterministic_and_seeded(tmp_path: Path) -> None:
    a = generate_claude_corpus(tmp_path / "a", sessions=5, seed=3)
    b = generate_claude_corpus(tmp_path / "b", sessions=5, seed=3)
    generate_claude_corpus(tmp_path / "c", sessions=5, seed=4)
    assert [p.relative_to(tmp_path / "a") for p in a] == [p.relative_to(tmp_path / "b") for p in b]
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _tree(tmp_path / "a") != _tree(tmp_path / "c")


def test_returns_sorted_jsonl_paths(corpus: tuple[Path, list[Path]]) -> None:
    root, paths = corpus
    assert paths == sorted(paths)
    assert all(p.suffix == ".jsonl" and p.is_file() for p in paths)
    assert set(paths) == set(root.rglob("*.jsonl"))


def test_every_line_is_json_with_a_type(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    for path in paths:
        raw = path.read_bytes()
        assert raw.endswith(b"\n")
        for line in _lines(path):
            assert isinstance(line.get("type"), str), (path, line)


@pytest.mark.parametrize("sessions", [1, 3, 9])
def test_session_count_scales(tmp_path: Path, sessions: int) -> None:
    paths = generate_claude_corpus(tmp_path, sessions=sessions, seed=1)
    assert len(_main_files(paths)) == sessions


def test_layout(corpus: tuple[Path, list[Path]]) -> None:
    root, paths = corpus
    for path in _main_files(paths):
        lines = [x for x in _lines(path) if "cwd" in x]
        assert path.parent.parent == root / "projects"
        assert path.parent.name == encode_cwd(lines[0]["cwd"])
        assert {x["sessionId"] for x in lines} == {path.stem}
        assert not any(x["isSidechain"] for x in lines)
    subs = [p for p in paths if p.parent.name == "subagents"]
    assert subs
    for path in subs:
        session_dir = path.parent.parent
        parent = session_dir.with_suffix(".jsonl")
        assert parent.is_file()
        agent_id = path.stem.removeprefix("agent-")
        meta = json.loads(path.with_name(f"agent-{agent_id}.meta.json").read_text())
        agent_uses = {
            block["id"]
            for line in _lines(parent)
            if line["type"] == "assistant"
            for block in line["message"]["content"]
            if block["type"] == "tool_use" and block["name"] == "Agent"
        }
        assert meta["toolUseId"] in agent_uses and meta["agentType"]
        lines = [x for x in _lines(path) if "uuid" in x]
        assert lines[0]["type"] == "user" and lines[0]["parentUuid"] is None
        assert all(x["isSidechain"] and x["agentId"] == agent_id for x in lines)
        assert {x["sessionId"] for x in lines} == {session_dir.name}


def test_usage_repeated_per_message(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    seen = 0
    for path in paths:
        groups: dict[str, list[Line]] = defaultdict(list)
        for line in _lines(path):
            if line["type"] == "assistant":
                groups[line["message"]["id"]].append(line)
        for group in groups.values():
            first = group[0]
            for line in group:
                assert line["requestId"] == first["requestId"]
                assert line["message"]["usage"] == first["message"]["usage"]
                assert line["message"]["stop_reason"] == first["message"]["stop_reason"]
            seen += len(group) > 1
    assert seen > 10


def test_tool_results_follow_their_tool_use(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    for path in paths:
        tool_uses: dict[str, str] = {}  # tool_use id -> uuid of its assistant line
        for line in _lines(path):
            content = line.get("message", {}).get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_use":
                    tool_uses[block["id"]] = line["uuid"]
                elif block.get("type") == "tool_result":
                    assert block["tool_use_id"] in tool_uses, (path, block)
                    assert line["sourceToolAssistantUUID"] == tool_uses[block["tool_use_id"]]


def test_parent_chain_points_backwards(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    for path in paths:
        seen: set[str] = set()
        for line in _lines(path):
            if "uuid" in line:
                assert line["parentUuid"] is None or line["parentUuid"] in seen
                seen.add(line["uuid"])


def test_bash_result_shapes(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    codes: set[int] = set()
    for path in _main_files(paths):
        for line in _lines(path):
            result = line.get("toolUseResult")
            block = line.get("message", {}).get("content", [{}])[0]
            if isinstance(result, dict) and "stdout" in result:
                assert block["is_error"] is False
                assert set(result) >= {"stdout", "stderr", "interrupted", "isImage"}
            elif isinstance(result, str) and result.startswith("Error: Exit code "):
                assert block["is_error"] is True
                assert block["content"] == result.removeprefix("Error: ")
                codes.add(int(result.split("\n")[0].rsplit(" ", 1)[1]))
    assert {1, 2} <= codes


def test_scenarios_present(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    lines = [line for path in paths for line in _lines(path)]
    texts = [
        block["text"]
        for x in lines
        if x["type"] == "user" and isinstance(x["message"]["content"], list)
        for block in x["message"]["content"]
        if block.get("type") == "text"
    ]
    prompts = [x["message"]["content"] for x in lines if x.get("promptSource") == "typed"]
    assert "[Request interrupted by user for tool use]" in texts
    assert "[Request interrupted by user]" in texts
    assert any(x.get("isApiErrorMessage") and x["message"]["model"] == "<synthetic>" for x in lines)
    assert any(x.get("attachment", {}).get("type") == "queued_command" for x in lines)
    assert any(x.get("subtype") == "compact_boundary" for x in lines)
    assert any(x.get("isCompactSummary") for x in lines)
    assert any(x.get("subtype") == "turn_duration" for x in lines)
    assert any(not p.isascii() for p in prompts) and any(p.isascii() for p in prompts)
    assert any(len(json.dumps(x.get("toolUseResult"))) > 70 * 1024 for x in lines)
    models = {x["message"]["model"] for x in lines if x["type"] == "assistant"}
    assert len(models - {"<synthetic>"}) >= 3
    months = {x["timestamp"][:7] for x in lines if "timestamp" in x}
    assert len(months) >= 2


def test_line_sizes_calibrated_to_real_transcripts(tmp_path: Path) -> None:
    # Real public Claude Code transcripts average about 2,000 bytes per line (tool results with
    # whole files, long command output, thinking); the generator must stay within about ±25%.
    paths = generate_claude_corpus(tmp_path, sessions=40, seed=0)
    sizes = [len(raw) for path in paths for raw in path.read_bytes().splitlines()]
    mean = sum(sizes) / len(sizes)
    assert 1500 <= mean <= 2500, mean


def _items_per_mb(paths: list[Path], every: bool = False) -> float:
    """Items per MB of the transcripts among `paths` (`every` one of them, when asked), as
    traceidx projects them."""
    items = size = 0
    for path in paths:
        result = ingest(str(path), Settings())
        assert not every or (result.state == "indexed" and not result.unknown_types), path
        if result.state == "indexed":
            items, size = items + result.item_count, size + result.size
    return items / (size / 1e6)


def test_items_per_megabyte_calibrated_to_real_transcripts(tmp_path: Path) -> None:
    # A build's work grows with Items, the raw decode's with bytes, so a corpus that packs more
    # Items into a megabyte than real transcripts do misstates what building them costs. Real
    # transcripts hold many lines that make no Item (the public 2.0/2.1 ones `progress` lines,
    # 2.1.332 its request bookkeeping): 190 Items per MB in the public ones, 109 in those the
    # real 2.1.332 wrote for the shared corpus. Without its request bookkeeping the generator
    # made about 310 per MB (1.6x the public transcripts); it must stay within 1.5x of them, and
    # above the sparsest real ones.
    real = _items_per_mb(sorted(corpus_path("public", "claude").glob("*.jsonl")))
    sparsest = _items_per_mb(
        sorted(
            p for p in corpus_path("generated", "claude").rglob("*.jsonl") if "_gen" not in p.parts
        )
    )
    made = _items_per_mb(generate_claude_corpus(tmp_path, sessions=40, seed=0), every=True)
    assert sparsest <= made <= 1.5 * real, (made, real, sparsest)


def test_request_bookkeeping(corpus: tuple[Path, list[Path]]) -> None:
    # Every response is preceded by its api-request line; each transcript's first requests
    # write the shape, a blob of the prompt and the prompt snapshots (the second with tools).
    _, paths = corpus
    for path in paths:
        lines = _lines(path)
        requests = [x for x in lines if x["type"] == "api-request"]
        responses = {x["message"]["id"] for x in lines if x["type"] == "assistant"}
        synthetic = {
            x["message"]["id"]
            for x in lines
            if x["type"] == "assistant" and x.get("isApiErrorMessage")
        }
        assert len(requests) == len(responses - synthetic), path
        assert [x.get("base") for x in requests[1:]] == [x["id"] for x in requests[:-1]]
        assert {x["shapeHash"] for x in requests} == {
            x["shapeHash"] for x in lines if x["type"] == "api-request-shape"
        }
        snapshots = [
            x["attachment"]
            for x in lines
            if x["type"] == "attachment" and x["attachment"]["type"] == "prompt_snapshot"
        ]
        assert ["tools" in s for s in snapshots] == [False, True][: len(requests)], path
        assert any(x["type"] == "api-request-blob" for x in lines), path
