"""The CLI as a user runs it: a subprocess on real files, checking stdout, stderr and exit code."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.files import fixture_path, traceidx_cli

SESSION = "e0852cb2-1931-41ee-b192-5123a4ca7168"


def _transcripts() -> int:
    """The Claude Code transcripts (one session each) of the committed generated fixtures."""
    traces = fixture_path("generated", "claude")
    return sum(1 for p in traces.rglob("*.jsonl") if "_gen" not in p.parts)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dataset = tmp_path_factory.mktemp("cli") / "ds"
    traces = fixture_path("generated", "claude")
    done = traceidx_cli("build", "--dataset", str(dataset), str(traces))
    assert done.returncode == 0, done.stderr
    assert f"{_transcripts()} indexed" in done.stdout and "skipped" in done.stdout
    assert "no adapter recognises" in done.stdout  # the generator's own files are skipped
    assert "syncing sources" in done.stderr  # progress goes to stderr
    return dataset


def test_sql_json_is_one_array_of_objects(built: Path) -> None:
    done = traceidx_cli(
        "sql",
        "--dataset",
        str(built),
        "--format",
        "json",
        f"SELECT s.native_id, l.started_at, l.loop_id, l.total FROM loop_usage l "
        f"JOIN sessions s USING (session_id) WHERE s.native_id = '{SESSION}' "
        "ORDER BY l.started_at",
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert len(data) == 4 and all(r["loop_id"].isdigit() for r in data)  # ids as strings
    assert data[0]["started_at"].endswith("Z") and "T" in data[0]["started_at"]


def test_sql_csv_and_table(built: Path) -> None:
    done = traceidx_cli(
        "sql", "--dataset", str(built), "--format", "csv", "SELECT 1 AS a, 'x' AS b"
    )
    assert done.stdout.splitlines() == ["a,b", "1,x"]
    table = traceidx_cli("sql", "--dataset", str(built), "SELECT count(*) AS n FROM sessions")
    assert str(_transcripts()) in table.stdout.split() and "(1 row)" in table.stdout


def test_a_bad_query_says_what_and_next_step(built: Path) -> None:
    done = traceidx_cli("sql", "--dataset", str(built), "SELECT nope FROM loops")
    assert done.returncode == 1 and done.stdout == ""
    assert "query failed" in done.stderr and "traceidx schema" in done.stderr


def test_status_counts_sources_by_state(built: Path) -> None:
    done = traceidx_cli("status", "--dataset", str(built), "--format", "json")
    states = {(r["runtime"], r["state"]): r["sources"] for r in json.loads(done.stdout)}
    assert states[("claude_code", "indexed")] == _transcripts() and states[("-", "skipped")] > 0


def test_inspect_verifies_the_raw_bytes(built: Path, tmp_path: Path) -> None:
    rid = traceidx_cli(
        "sql",
        "--dataset",
        str(built),
        "--format",
        "json",
        "SELECT record_id FROM records ORDER BY record_id LIMIT 1",
    )
    record_id = json.loads(rid.stdout)[0]["record_id"]
    done = traceidx_cli("inspect", "--dataset", str(built), "--format", "json", str(record_id))
    info = json.loads(done.stdout)
    assert done.returncode == 0 and info["verification"] == "verified"
    assert json.loads(info["content"])  # the exact line, valid JSON
    missing = traceidx_cli("inspect", "--dataset", str(built), "12345")
    assert missing.returncode == 1 and "not in" in missing.stderr


def _one_record(tmp_path: Path) -> tuple[Path, Path, int]:
    """A one-line Claude Code trace built into a dataset: the trace, the dataset, the record id."""
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"type":"user","sessionId":"s1","message":{"content":"hi"}}\n')
    dataset = tmp_path / "ds"
    assert traceidx_cli("build", "--dataset", str(dataset), str(trace)).returncode == 0
    rid = traceidx_cli(
        "sql", "--dataset", str(dataset), "--format", "json", "SELECT record_id FROM records"
    )
    record_id = json.loads(rid.stdout)[0]["record_id"]
    return trace, dataset, int(record_id)


def test_inspect_notices_a_changed_source(tmp_path: Path) -> None:
    trace, dataset, record_id = _one_record(tmp_path)
    trace.write_text('{"type":"user","sessionId":"s1","message":{"content":"HI"}}\n')
    done = traceidx_cli("inspect", "--dataset", str(dataset), str(record_id))
    assert done.returncode == 1 and "changed" in done.stdout


def test_schema_lists_tables_with_descriptions() -> None:
    done = traceidx_cli("schema", "--format", "json")
    rows = [r for r in json.loads(done.stdout) if r["kind"] == "table"]
    tables = {r["table"] for r in rows}
    assert tables == {"sources", "records", "sessions", "loops", "items", "model_calls"}
    assert all(r["description"] for r in rows)


def test_schema_lists_every_shipped_view_as_a_dataset_has_it(built: Path) -> None:
    """Every ``sql/views/*.sql`` view with the columns DuckDB gives it over a real dataset."""
    from traceidx.analysis import sqlfiles
    from traceidx.analysis.query import connect

    folder = sqlfiles.root().joinpath("views")
    shipped = {p.name.removesuffix(".sql") for p in folder.iterdir() if p.name.endswith(".sql")}
    done = traceidx_cli("schema", "--format", "json")
    assert done.returncode == 0, done.stderr
    listed: dict[str, list[tuple[str, str]]] = {}
    for r in json.loads(done.stdout):
        if r["kind"] == "view":
            listed.setdefault(r["table"], []).append((r["column"], r["type"]))
    assert set(listed) == shipped
    assert {"shell_statements", "shell_invocations", "shell_redirects"} <= set(listed)
    con = connect(built)
    for view, columns in listed.items():
        described = [(str(c), str(t)) for c, t, *_ in con.execute(f"DESCRIBE {view}").fetchall()]
        assert columns == described, view
    text = traceidx_cli("schema").stdout
    assert "views:" in text and "\nshell_invocations  — " in text and "  program " in text


def test_dataset_defaults_follow_the_environment(tmp_path: Path) -> None:
    done = traceidx_cli("status", env={"TRACEIDX_DATASET": str(tmp_path / "nowhere")})
    assert done.returncode == 2 and "traceidx build" in done.stderr
    xdg = traceidx_cli("status", env={"XDG_DATA_HOME": str(tmp_path), "TRACEIDX_DATASET": ""})
    assert str(tmp_path / "traceidx") in xdg.stderr


def test_usage_errors_exit_2() -> None:
    assert traceidx_cli("build", "--runtime", "nonsense").returncode == 2
    assert traceidx_cli("frobnicate").returncode == 2


def test_bad_input_is_reported_and_loses_nothing(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(
        '{"type":"user","sessionId":"s1","timestamp":"2026-01-01T00:00:00Z",'
        '"message":{"content":"hello"}}\nnot json at all\n{"type":"user","sessionId":"s1"'
    )
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "junk.jsonl").write_bytes(b"\x00\xff\xfe binary\n")
    unreadable = tmp_path / "locked.jsonl"
    unreadable.write_text('{"type":"user","sessionId":"s2","message":{"content":"x"}}\n')
    unreadable.chmod(0)
    dataset = tmp_path / "ds"
    done = traceidx_cli("build", "--dataset", str(dataset), "--format", "json", str(tmp_path))
    summary = json.loads(done.stdout)
    if os.geteuid() == 0:  # root reads anything: no failure to observe
        assert done.returncode == 0
    else:
        assert done.returncode == 1 and summary["failed"] == 1
    assert summary["indexed"] >= 1 and summary["skipped"] >= 2
    rows = traceidx_cli(
        "sql",
        "--dataset",
        str(dataset),
        "--format",
        "json",
        "SELECT source_position, parse_status FROM records r JOIN sources s USING (source_id) "
        "WHERE s.locator LIKE '%good.jsonl' ORDER BY 1",
    )
    assert json.loads(rows.stdout) == [
        {"source_position": 0, "parse_status": "ok"},
        {"source_position": 1, "parse_status": "malformed"},
    ]


def test_demo_builds_every_runtime_and_reports(tmp_path: Path) -> None:
    done = traceidx_cli(
        "demo",
        "--corpus",
        str(tmp_path / "traces"),
        "--dataset",
        str(tmp_path / "ds"),
    )
    assert done.returncode == 0, done.stderr
    for runtime in ("claude_code", "codex", "pi", "dsh"):
        assert f" {runtime}" in done.stderr.splitlines()[0]
    for title in ("token usage by month", "models side by side", "the slowest tool calls"):
        assert title in done.stdout
    assert f"traceidx report tools --dataset {tmp_path / 'ds'}" in done.stdout
    page = tmp_path / "traces" / "report.html"
    assert f"the HTML report (charts and tables, one file): {page}\n" in done.stdout
    assert page.read_text("utf-8").startswith("<!DOCTYPE html>")


def test_a_vanished_source_is_reported_missing_not_failed(tmp_path: Path) -> None:
    trace, dataset, record_id = _one_record(tmp_path)
    trace.unlink()
    rebuilt = traceidx_cli("build", "--dataset", str(dataset), "--format", "json", str(tmp_path))
    assert rebuilt.returncode == 0 and json.loads(rebuilt.stdout)["missing"] == 1
    status = traceidx_cli("status", "--dataset", str(dataset), "--format", "json")
    assert {"runtime": "claude_code", "state": "missing", "sources": 1} in json.loads(status.stdout)
    done = traceidx_cli("inspect", "--dataset", str(dataset), str(record_id))
    assert done.returncode == 0 and "source missing" in done.stdout
    pruned = traceidx_cli("prune", "--dataset", str(dataset))
    assert pruned.returncode == 0 and str(trace) in pruned.stdout
    gone = traceidx_cli(
        "sql", "--dataset", str(dataset), "--format", "csv", "SELECT count(*) FROM records"
    )
    assert gone.stdout.splitlines()[1] == "0"


def test_a_first_build_without_traces_says_where_it_looked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "data")}
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "DSH_HOME"):
        env[name] = ""
    done = traceidx_cli("build", env=env)
    assert done.returncode == 0, done.stderr
    assert "no trace folders at the default roots" in done.stderr
    assert str(home / ".claude" / "projects") in done.stderr
    usage = traceidx_cli("report", "usage", "--format", "json", env=env)  # an empty dataset answers
    assert usage.returncode == 0 and json.loads(usage.stdout) == []
