"""traceidx mcp, driven by a JavaScript client (the MCP Inspector's command line): a JavaScript
client holds a JSON number as a double, so the ids `search` and `sql` return must reach it as
strings, exact, and `inspect` must take them back (and recover an id a client rounded)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.files import fixture_path, traceidx_cli
from tests.support.inspector import call_tool, ensure_inspector
from traceidx.analysis.query import connect

pytest.importorskip("mcp")

#: the largest integer a double holds exactly
MAX_EXACT = 2**53 - 1


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = ensure_inspector()
    if not isinstance(found, Path):
        pytest.skip(found)
    where = tmp_path_factory.mktemp("inspector") / "dataset"
    done = traceidx_cli("build", "--dataset", str(where), str(fixture_path("generated", "pi")))
    assert done.returncode == 0, done.stderr
    return where


def _server(dataset: Path) -> list[str]:
    return [str(Path(sys.executable).parent / "traceidx"), "mcp", "--dataset", str(dataset)]


def _record_ids(dataset: Path) -> set[int]:
    """Every record id of the dataset, as the Python API holds them (integers)."""
    return {row[0] for row in connect(dataset).execute("SELECT record_id FROM records").fetchall()}


def _inspected(dataset: Path, arg: str) -> dict[str, object]:
    reply = call_tool(_server(dataset), "inspect", arg)
    assert not reply["isError"], reply
    evidence: dict[str, object] = reply["structuredContent"]
    assert evidence["verification"] == "verified" and evidence["content"]
    return evidence


def test_search_then_inspect_through_a_javascript_client(dataset: Path) -> None:
    ids = _record_ids(dataset)
    assert any(i > MAX_EXACT for i in ids)  # ids a double cannot hold: the case at stake
    reply = call_tool(_server(dataset), "search", "text=bash", "limit=3")
    assert not reply["isError"], reply
    found = reply["structuredContent"]
    column = found["columns"].index("record_id")
    record = found["rows"][0][column]
    assert isinstance(record, str) and int(record) in ids  # exact, as the dataset holds it
    for name in ("item_id", "loop_id", "session_id"):
        assert isinstance(found["rows"][0][found["columns"].index(name)], str)
    evidence = _inspected(dataset, f'record_id="{record}"')  # the id as a string
    assert evidence["record_id"] == record


def test_sql_then_inspect_through_a_javascript_client(dataset: Path) -> None:
    ids = _record_ids(dataset)
    query = (
        "query=SELECT record_id, record_id + 0 AS same, [record_id] AS record_ids, "
        "source_position FROM records ORDER BY record_id DESC LIMIT 2"
    )
    reply = call_tool(_server(dataset), "sql", query)
    assert not reply["isError"], reply
    rows = reply["structuredContent"]["rows"]
    assert [int(r[0]) for r in rows] == sorted(ids, reverse=True)[:2]
    for record, same, listed, position in rows:
        assert isinstance(record, str) and same == record and listed == [record]
        assert isinstance(position, int)  # a small number stays a number
    evidence = _inspected(dataset, f'record_id="{rows[0][0]}"')
    assert evidence["record_id"] == rows[0][0]
    # the id typed as a number (the Inspector reads it as JSON: a double, rounded on the way)
    # is recovered: one record's id rounds to it, and the reply says so
    evidence = _inspected(dataset, f"record_id={rows[1][0]}")
    assert evidence["record_id"] == rows[1][0] and "rounded" in str(evidence["note"])
