"""traceidx mcp, driven by the official SDK's stdio client: it lists its tools, answers a
query, a report, a search and an inspection, and refuses every way out of read-only access with
a tool error while it keeps answering."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.files import ROOT, fixture_path, traceidx_cli

mcp = pytest.importorskip("mcp")
from mcp.client.stdio import stdio_client  # noqa: E402

ROOT = ROOT


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("mcp") / "dataset"
    done = traceidx_cli("build", "--dataset", str(where), str(fixture_path("generated", "pi")))
    assert done.returncode == 0, done.stderr
    return where


def _result(result: Any) -> tuple[bool, Any]:
    text = result.content[0].text if result.content else ""
    structured = getattr(result, "structured_content", None)
    return bool(result.is_error), structured if structured is not None else text


async def _session(dataset: Path, tmp_path: Path) -> dict[str, Any]:
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "traceidx.cli.main", "mcp", "--dataset", str(dataset)],
        cwd=str(ROOT),
    )
    outside = tmp_path / "outside.csv"
    outside.write_text("a,b\n1,2\n", "utf-8")
    seen: dict[str, Any] = {}
    async with stdio_client(params) as streams, mcp.ClientSession(streams[0], streams[1]) as s:
        await s.initialize()
        seen["tools"] = sorted(t.name for t in (await s.list_tools()).tools)
        calls = {
            "query": ("sql", {"query": "SELECT runtime, count(*) AS n FROM sessions GROUP BY 1"}),
            "report": ("report", {"name": "usage", "group_by": ["runtime"]}),
            "search": ("search", {"text": "bash", "limit": 3}),
            "schema": ("schema", {}),
            "copy": ("sql", {"query": f"COPY (SELECT 1) TO '{tmp_path / 'x.csv'}'"}),
            "attach": ("sql", {"query": f"ATTACH '{tmp_path / 'y.db'}' AS y"}),
            "install": ("sql", {"query": "INSTALL httpfs"}),
            "passwd": ("sql", {"query": "SELECT * FROM read_text('/etc/passwd')"}),
            "csv": ("sql", {"query": f"SELECT * FROM read_csv('{outside}')"}),
            "million": ("sql", {"query": "SELECT * FROM range(1000000)", "limit": 100000}),
            "set": ("sql", {"query": "SET enable_external_access = true"}),
            "again": ("sql", {"query": "SELECT count(*) AS n FROM records"}),
            "no report": ("report", {"name": "nope"}),
        }
        for name, (tool, arguments) in calls.items():
            seen[name] = _result(await s.call_tool(tool, arguments))
        record = seen["search"][1]["rows"][0][6]
        seen["inspect"] = _result(await s.call_tool("inspect", {"record_id": record}))
    return seen


def test_the_sdk_client_gets_answers_and_clear_refusals(dataset: Path, tmp_path: Path) -> None:
    seen = asyncio.run(_session(dataset, tmp_path))
    assert seen["tools"] == ["inspect", "report", "schema", "search", "sql"]
    error, query = seen["query"]
    assert not error and query["columns"] == ["runtime", "n"] and query["rows"][0][0] == "pi"
    error, report = seen["report"]
    assert not error and report["report"] == "usage" and "runtime" in report["columns"]
    error, found = seen["search"]
    assert not error and found["rows"] and found["rows"][0][1] == "pi"
    error, schema = seen["schema"]
    assert not error and "model_calls" in schema and schema["model_calls"]["columns"]
    error, evidence = seen["inspect"]
    assert not error and evidence["verification"] == "verified" and evidence["content"]
    for refused, says in [
        ("copy", "only SELECT"),
        ("attach", "only SELECT"),
        ("install", "only SELECT"),
        ("set", "only SELECT"),
        ("passwd", "Permission Error"),
        ("csv", "Permission Error"),
        ("no report", "no report named"),
    ]:
        error, text = seen[refused]
        assert error and says in text, (refused, text)
    error, million = seen["million"]
    assert not error and million["capped"] and len(million["rows"]) == 500
    assert "first 500 rows" in million["note"]
    error, again = seen["again"]
    assert not error and again["rows"][0][0] > 0  # the server still answers
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "y.db").exists()
    assert json.dumps(seen["query"][1])  # plain JSON values
