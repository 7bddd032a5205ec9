"""Publication: deterministic ids and contents, atomic generations, views that match the schema."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.files import ROOT, fixture_path
from traceidx.adapters import adapters
from traceidx.analysis.query import VIEWS, connect, view_sql
from traceidx.analysis.reports import REPORTS
from traceidx.demo import sample_files
from traceidx.domain.columns import DERIVED_COLUMNS
from traceidx.domain.model import TABLES
from traceidx.pipeline.job import build
from traceidx.store.dataset import read_manifest
from traceidx.tables.schema import table_schema


def _contents(dataset: Path) -> dict[str, list[dict[str, object]]]:
    manifest = read_manifest(dataset)
    assert manifest is not None
    return {
        table: [row for f in files for row in pq.read_table(dataset / f).to_pylist()]
        for table, files in manifest.tables().items()
    }


def test_rebuilding_gives_identical_contents_and_ids(tmp_path: Path) -> None:
    source = fixture_path("generated", "claude", "s1-fjord")
    first, second = tmp_path / "a", tmp_path / "b"
    build([source], first, jobs=1)
    build([source], second, jobs=2)
    manifest_a, manifest_b = read_manifest(first), read_manifest(second)
    assert manifest_a and manifest_b and manifest_a.tables() == manifest_b.tables()
    for files in manifest_a.tables().values():
        for f in files:
            assert (first / f).read_bytes() == (second / f).read_bytes()
    build([source], first, jobs=1, rebuild=True)  # a new generation over the same input
    assert _contents(first) == _contents(second)
    assert read_manifest(first).generation == 2  # type: ignore[union-attr]
    parts = sorted(p.name for p in first.rglob("*.parquet"))
    # the previous generation's parts stay for readers that opened it, until the next one
    assert parts and {p[:11] for p in parts} == {"part-000001", "part-000002"}


def test_parts_keep_statistics_where_they_prune_and_none_for_free_text(
    traces_dataset: Path,
) -> None:
    """Ids, positions, times and categories keep min/max (readers skip row groups by them);
    texts, argument strings and fingerprints do not (no query is pruned by them)."""
    manifest = read_manifest(traces_dataset)
    assert manifest is not None
    seen: dict[str, bool] = {}
    for files in manifest.tables().values():
        for f in files:
            meta = pq.ParquetFile(traces_dataset / f).metadata
            for g in range(meta.num_row_groups):
                for c in range(meta.num_columns):
                    column = meta.row_group(g).column(c)
                    stats = column.statistics
                    has = stats is not None and stats.has_min_max
                    seen[column.path_in_schema] = seen.get(column.path_in_schema, False) or has
    assert seen["item_id"] and seen["occurred_at"] and seen["record_id"]
    assert seen["semantic.role"] and seen["source_position"]
    assert not seen["semantic.tool_output.text.value"] and not seen["fingerprint"]
    assert not seen["semantic.tool_call.arguments"]


def test_views_match_the_derived_schema(traces_dataset: Path) -> None:
    con = connect(traces_dataset)
    for table in TABLES:
        view_cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
        derived = set(DERIVED_COLUMNS.get(table, {}))
        assert set(view_cols) == set(table_schema(table).names) | derived, table
        stored = dict(
            con.execute(f"SELECT column_name, column_type FROM (DESCRIBE _{table})").fetchall()
        )
        public = dict(
            con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {table})").fetchall()
        )
        assert {k: v for k, v in public.items() if k not in derived} == stored, table


def test_every_view_file_is_headed_by_what_it_answers() -> None:
    for name in VIEWS:
        text = view_sql(name)
        assert text.startswith(f"-- {name}:"), name


@pytest.mark.slow
def test_sql_ships_inside_the_wheel(tmp_path: Path) -> None:
    """The top-level ``sql/`` ships as ``traceidx/sql``, beside every package and data file."""
    root = ROOT
    if not (root / "traceidx").is_dir():
        pytest.skip("needs the source tree (this copy of the tests runs against an install)")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0 and "No module named" in done.stderr:
        pytest.skip("no build backend in this environment")
    assert done.returncode == 0, done.stderr
    wheel = next(tmp_path.glob("traceidx-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in VIEWS:
        assert f"traceidx/sql/views/{name}.sql" in names
    for name in [*REPORTS, "_scope"]:
        assert f"traceidx/sql/reports/{name}.sql" in names
    for runtime in adapters():
        assert f"traceidx/adapters/{runtime}/adapter.py" in names
    assert not any(n.startswith(("sql/", "tests/", "benchmarks/")) for n in names)
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    assert "traceidx/demo/__init__.py" in names and "traceidx/demo/sample/README.md" in names
    for sample in sample_files():  # the demo's traces, every file of them
        assert f"traceidx/demo/sample/{sample.as_posix()}" in names
    assert "traceidx/analysis/pricing.py" in names


def test_manifest_lists_sources_with_their_state(tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    build([fixture_path("generated", "claude", "s1-zephyr")], dataset)
    manifest = read_manifest(dataset)
    assert manifest is not None
    states = [entry.state for entry in manifest.sources.values()]
    assert states.count("indexed") == 2 and "skipped" in states
    for files in manifest.tables().values():
        assert all((dataset / f).is_file() for f in files)


def test_an_id_collision_fails_loudly_instead_of_merging(tmp_path: Path) -> None:
    from traceidx.pipeline.worker import source_rows
    from traceidx.projection.ingest import Settings, ingest
    from traceidx.tables.encode import (
        IdCollision,
        IdGuard,
        check_ids,
        encode_rows,
        id_column,
    )

    trace = tmp_path / "t.jsonl"
    trace.write_text('{"type":"user","sessionId":"s","message":{"content":"hi"}}\n')
    rows = source_rows(ingest(str(trace), Settings()), {})
    assert rows is not None
    tables = encode_rows(rows[1])
    column = id_column("items", tables["items"])
    assert column is not None
    guard = IdGuard()
    guard.take("items", column)
    guard.finish()
    guard.take("items", column)  # the same ids again, as if another file had them
    with pytest.raises(IdCollision):
        guard.finish()
    check_ids("items", [column])
    with pytest.raises(IdCollision):
        check_ids("items", [column, column])  # two pieces of one part


def test_the_package_exposes_connect(traces_dataset: Path) -> None:
    import traceidx

    con = traceidx.connect(traces_dataset)
    assert con.execute("SELECT count(*) FROM loop_usage").fetchall()[0][0] > 100


def test_shell_views_expose_programs_pipelines_and_redirects(traces_dataset: Path) -> None:
    con = connect(traces_dataset)
    pipeline = con.execute(
        """SELECT program, argv, pipeline_id, pipeline_position FROM shell_invocations v
           JOIN tool_calls t USING (item_id)
           WHERE t.command = 'cat README.md | tr ''a-z'' ''A-Z'' | head -3'
           ORDER BY v.item_id, statement_position LIMIT 3"""
    ).fetchall()
    assert pipeline == [
        ("cat", ["README.md"], 0, 0),
        ("tr", ["'a-z'", "'A-Z'"], 0, 1),
        ("head", ["-3"], 0, 2),
    ]
    failing = con.execute(
        """SELECT v.exit_code, v.failed FROM shell_invocations v JOIN tool_calls t USING (item_id)
           WHERE t.command = 'ls /nonexistent-dir' LIMIT 1"""
    ).fetchall()
    assert failing == [(2, True)]
    redirect = con.execute(
        """SELECT source_fd, operator, target FROM shell_redirects r JOIN tool_calls t
           USING (item_id) WHERE t.command LIKE 'ls -la src 1>/dev/null 2>err.txt%'
           ORDER BY statement_position, target"""
    ).fetchall()
    assert ("2", ">", "err.txt") in redirect and ("1", ">", "/dev/null") in redirect


def test_a_build_leaves_the_callers_garbage_collector_and_allocator_as_they_were(
    tmp_path: Path,
) -> None:
    import gc

    import pyarrow as pa

    before, pool = gc.get_threshold(), pa.default_memory_pool()
    system = pa.system_memory_pool()
    try:
        gc.set_threshold(700, 10, 10)
        pa.set_memory_pool(system)
        build([fixture_path("generated", "claude", "s1-aurora")], tmp_path / "ds", jobs=1)
        assert gc.get_threshold() == (700, 10, 10)
        assert pa.default_memory_pool().backend_name == system.backend_name
    finally:
        gc.set_threshold(*before)
        pa.set_memory_pool(pool)
