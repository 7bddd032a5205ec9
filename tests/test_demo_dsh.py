"""Tests for the dsh demo corpus generator (traceidx.demo.dsh)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
import zstandard

from traceidx.build import build
from traceidx.demo.dsh import generate
from traceidx.query import connect
from traceidx.sourceio import ZSTD_MAGIC

Line = dict[str, Any]


def _frames(path: Path) -> list[bytes]:
    """The decoded content of each zstd frame of a file, in order."""
    data, out = path.read_bytes(), []
    while data:
        obj = zstandard.ZstdDecompressor().decompressobj()
        out.append(obj.decompress(data))
        assert obj.eof
        data = obj.unused_data
    return out


def _lines(path: Path) -> list[Line]:
    reader = zstandard.ZstdDecompressor().stream_reader(
        io.BytesIO(path.read_bytes()), read_across_frames=True
    )
    return [json.loads(raw) for raw in reader.read().splitlines()]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("demo")
    return root, generate(root, sessions=30, seed=2)


@pytest.fixture(scope="module")
def con(
    corpus: tuple[Path, list[Path]], tmp_path_factory: pytest.TempPathFactory
) -> duckdb.DuckDBPyConnection:
    root, _ = corpus
    dataset = tmp_path_factory.mktemp("demo-ds") / "ds"
    report = build([root], dataset, jobs=1)
    assert report.exit_code == 0 and report.count("indexed") == len(report.results)
    assert {r.runtime for r in report.results} == {"dsh"}
    return connect(dataset)


def test_deterministic_and_seeded(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", sessions=6, seed=3)
    generate(tmp_path / "b", sessions=6, seed=3)
    generate(tmp_path / "c", sessions=6, seed=4)
    assert a == sorted(a)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _tree(tmp_path / "a") != _tree(tmp_path / "c")


@pytest.mark.parametrize("sessions", [1, 4, 11])
def test_session_count_scales(tmp_path: Path, sessions: int) -> None:
    paths = generate(tmp_path, sessions=sessions, seed=1)
    top = [p for p in paths if p.parent.name.startswith("session-")]
    assert len(top) == sessions


def test_layout_and_multiframe_zstd(corpus: tuple[Path, list[Path]]) -> None:
    root, paths = corpus
    assert set(paths) == set(root.rglob("*.jsonl.zstd"))
    for path in paths:
        assert path.read_bytes().startswith(ZSTD_MAGIC)
        frames = _frames(path)
        header = json.loads(frames[0])
        assert frames[0].count(b"\n") == 1 and header["type"] == "session"
        assert len(frames) >= 3 and all(f.endswith(b"\n") for f in frames)
        assert path.parent.name == header["id"]
        assert path.parent.parent.name == "--" + header["cwd"].replace("/", "-").strip("-") + "--"
        assert path.parent.parent.parent == root / "sessions"


def test_events_are_contiguous_and_timed(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    for path in paths:
        header, *events = _lines(path)
        expected, last = 0, header["createdAt"]
        for event in events:
            seq = event.get("seq", event.get("seq0"))
            assert seq == expected, (path, event["type"])
            width = len(event["data"].get("texts", event["data"].get("args", [0])))
            expected += width if "seq0" in event else 1
            time = event.get("time", event.get("time0"))
            assert time >= last
            last = time


def test_step_usage_is_on_chunk_and_message(corpus: tuple[Path, list[Path]]) -> None:
    _, paths = corpus
    seen = 0
    for path in paths:
        chunks: dict[int, Any] = {}
        for event in _lines(path)[1:]:
            data = event.get("data", {})
            if event["type"] == "assistant/chunk" and data["chunk"]["type"] == "usage":
                chunks[event["seq"]] = data["chunk"]["usage"]
            elif event["type"] == "assistant/message":
                own = [chunks[s] for s in event["sourceEventSeqs"] if s in chunks]
                assert own == [data["usage"]]
                seen += 1
    assert seen > 50


def test_scenarios_are_present(con: duckdb.DuckDBPyConnection) -> None:
    outcomes = dict(con.sql('SELECT "end".outcome, count(*) FROM loops GROUP BY 1').fetchall())
    assert outcomes["completed"] > 20 and outcomes["interrupted"] and outcomes["failed"]
    assert con.sql('SELECT count(*) FROM loops WHERE "end" IS NULL').fetchall()[0][0] >= 1
    roles = dict(con.sql("SELECT semantic.role, count(*) FROM items GROUP BY 1").fetchall())
    for role in (
        "human.request",
        "human.steering",
        "agent.final_answer",
        "agent.reasoning",
        "agent.tool_call.shell",
        "agent.delegation",
        "subagent.report",
        "runtime.compaction_summary",
        "runtime.notice",
        "tool.output",
    ):
        assert roles.get(role), role
    codes = {c for (c,) in con.sql("SELECT DISTINCT exit_code FROM tool_calls").fetchall()}
    assert {1, 2, 127} <= codes
    failed_edits = con.sql(
        "SELECT count(*) FROM tool_calls WHERE tool_name = 'edit' AND failed"
    ).fetchall()[0][0]
    assert failed_edits >= 1
    assert con.sql("SELECT count(*) FROM sessions WHERE delegated_from IS NOT NULL").fetchall()[0][
        0
    ]
    big = con.sql(
        "SELECT max(semantic.tool_output.text.full_bytes) FROM items "
        "WHERE semantic.role = 'tool.output'"
    ).fetchall()[0][0]
    assert big > 70 * 1024
    texts = [t for (t,) in con.sql("SELECT semantic.text.text.value FROM items").fetchall() if t]
    assert any(not t.isascii() for t in texts)
    months = con.sql("SELECT count(DISTINCT strftime(created_at, '%Y-%m')) FROM sessions")
    assert months.fetchall()[0][0] >= 2


def test_usage_counts_each_call_once(
    corpus: tuple[Path, list[Path]], con: duckdb.DuckDBPyConnection
) -> None:
    """Loop usage over the dataset equals the messages' usage plus the summariser calls."""
    _, paths = corpus
    expected = 0
    for path in paths:
        for event in _lines(path)[1:]:
            usage = event.get("data", {}).get("usage")
            if event["type"] in ("assistant/message", "compaction/summary") and usage:
                expected += usage["outputTokens"]
    assert con.sql("SELECT sum(usage.output) FROM loops").fetchall()[0][0] == expected
