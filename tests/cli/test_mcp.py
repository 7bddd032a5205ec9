"""traceidx mcp, driven by the official SDK's stdio client: it lists its tools, answers a
query, a report, a search and an inspection, and refuses every way out of read-only access with
a tool error while it keeps answering."""

from __future__ import annotations

import asyncio
import json
import sys
import time
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


async def _calls(
    dataset: Path,
    calls: list[tuple[str, dict[str, Any]]],
    *options: str,
    env: dict[str, str] | None = None,
) -> tuple[dict[str, str], list[tuple[bool, Any, float]]]:
    """The tools' descriptions, and each call's (error, reply, seconds) in order, of one server
    started with `options` and `env`."""
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "traceidx.cli.main", "mcp", "--dataset", str(dataset), *options],
        cwd=str(ROOT),
        env=env,
    )
    answers = []
    async with stdio_client(params) as streams, mcp.ClientSession(streams[0], streams[1]) as s:
        await s.initialize()
        tools = {t.name: t.description or "" for t in (await s.list_tools()).tools}
        for tool, arguments in calls:
            started = time.monotonic()
            error, reply = _result(await s.call_tool(tool, arguments))
            answers.append((error, reply, time.monotonic() - started))
    return tools, answers


#: a query that runs for minutes
SLOW = "SELECT sum(a % 7) AS s FROM range(1000000000000) t(a)"
#: a query that needs some hundreds of megabytes
LARGE = "SELECT length(string_agg(repeat('x', 100) || a::VARCHAR, ',')) FROM range(5000000) t(a)"


def test_a_runaway_query_is_stopped_and_the_next_call_answers(dataset: Path) -> None:
    _, answers = asyncio.run(
        _calls(
            dataset,
            [
                ("sql", {"query": SLOW}),
                ("sql", {"query": "SELECT count(*) AS n FROM records"}),
                ("sql", {"query": LARGE}),
                ("search", {"text": "bash", "limit": 1}),
            ],
            "--memory-limit",
            "64MB",
            env={"TRACEIDX_MCP_TIMEOUT": "1.5"},
        )
    )
    (slow_error, slow, took), (error, count, _), (big_error, big, _), (error2, found, _) = answers
    assert slow_error and "stopped after 1.5 s" in slow and "--timeout" in slow, slow
    assert took < 30  # stopped by the server, not by the end of the query
    assert not error and count["rows"][0][0] > 0  # the next call answers
    assert big_error and "memory" in big and "64MB" in big, big
    assert not error2 and found["rows"]


def test_the_limits_default_to_30_seconds_and_1gb(dataset: Path) -> None:
    memory = "SELECT current_setting('memory_limit') AS m, current_setting('temp_directory') AS t"
    _, answers = asyncio.run(_calls(dataset, [("sql", {"query": memory})]))
    error, reply, _ = answers[0]
    assert not error and reply["rows"] == [["953.6 MiB", ""]]  # 1GB, and no spilling to disk
    from traceidx.cli.mcpserver import TIMEOUT_S, limits

    assert TIMEOUT_S == 30 and limits().timeout == 30


@pytest.mark.parametrize(
    ("options", "env", "says"),
    [
        (("--timeout", "0"), {}, "--timeout"),
        ((), {"TRACEIDX_MCP_TIMEOUT": "soon"}, "TRACEIDX_MCP_TIMEOUT"),
        (("--memory-limit", "lots"), {}, "--memory-limit"),
    ],
)
def test_a_bad_limit_is_refused_in_one_line(
    dataset: Path, options: tuple[str, ...], env: dict[str, str], says: str
) -> None:
    done = traceidx_cli("mcp", "--dataset", str(dataset), *options, env=env)
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1 or done.stderr.startswith("usage:")


#: a zone where the fixtures' day differs from UTC's
ZONE = {"TZ": "Pacific/Honolulu"}


@pytest.fixture(scope="module")
def untruths(dataset: Path) -> tuple[dict[str, str], list[tuple[bool, Any, float]]]:
    return asyncio.run(
        _calls(
            dataset,
            [
                ("sql", {"query": "SELECT 1 AS one", "limit": -5}),
                ("search", {"text": "bash", "limit": 0}),
                ("report", {"name": "usage", "limit": -5}),
                ("report", {"name": "usage"}),
            ],
            env=ZONE,
        )
    )


def test_a_limit_below_1_is_refused_not_taken_as_1(
    untruths: tuple[dict[str, str], list[tuple[bool, Any, float]]],
) -> None:
    for error, reply, _ in untruths[1][:3]:
        assert error and "limit must be a whole number of at least 1 (it was " in reply, reply


def test_tool_descriptions_are_one_clean_line(
    untruths: tuple[dict[str, str], list[tuple[bool, Any, float]]],
) -> None:
    tools = untruths[0]
    assert sorted(tools) == ["inspect", "report", "schema", "search", "sql"]
    for name, description in tools.items():
        assert description and "  " not in description and "\n" not in description, name


def test_a_report_is_in_the_machines_zone_as_on_the_command_line(
    dataset: Path, untruths: tuple[dict[str, str], list[tuple[bool, Any, float]]]
) -> None:
    error, report, _ = untruths[1][3]
    assert not error and report["timezone"] == "Pacific/Honolulu"
    cli = traceidx_cli("report", "usage", "--dataset", str(dataset), "--format", "json", env=ZONE)
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    assert expected and "2026-11-29" in {r["period"] for r in expected}, expected
    assert [dict(zip(report["columns"], row, strict=True)) for row in report["rows"]] == expected
