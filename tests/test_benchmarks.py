"""Benchmarks: the scaled corpus's copies are unique and build cleanly, and the runner works end
to end at a tiny size (a smoke test: no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.corpora import sample_subset, scaled, size_of
from tests.support.files import ROOT, corpus_path
from traceidx.analysis.query import connect
from traceidx.demo import SAMPLE, copy_ids, is_trace, sample_files
from traceidx.pipeline.job import build

RUNNER = ROOT / "benchmarks" / "run.py"


def test_benchmark_runner_smoke(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = subprocess.run(
        [
            sys.executable,
            str(RUNNER),
            "--megabytes",
            "1",
            "--real-copies",
            "1",
            "--jobs",
            "2",
            "--repeat",
            "2",
            "--public-claude",
            str(corpus_path("public", "claude")),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    corpora = {r["corpus"]: r for r in report["results"]}
    assert set(corpora) == {"scaled", "real-shaped"}
    assert corpora["scaled"]["physical_mb"] >= 1  # copies are added up to the asked size
    for result in corpora.values():
        assert result["items"] > 0 and result["cold_s"] > 0 and result["baseline_s"] > 0
        assert result["parallel_baseline_mb_per_s"] > 0
        assert len(result["cold_s_runs"]) == len(result["baseline_s_runs"]) == 2
        assert len(result["parallel_baseline_s_runs"]) == 2
        ratios = result["cold_over_parallel_baseline_rate_runs"]  # each repeat's own pair
        assert len(ratios) == 2 and all(ratio > 0 for ratio in ratios)
        cpu_ratios = result["cold_over_parallel_baseline_cpu_rate_runs"]  # CPU time, each repeat
        assert len(cpu_ratios) == 2 and all(ratio > 0 for ratio in cpu_ratios)
        assert result["cold_cpu_s"] > 0 and result["parallel_baseline_cpu_s"] > 0
        assert result["cold_core_use"] > 0  # CPU time over wall time of `jobs` cores
        assert result["cold_s"] in result["cold_s_runs"]  # the median run is one of them
        assert result["append_lines"] >= 1
        assert set(result["queries"]) >= {"daily_usage_by_model", "slowest_tool_calls"}
    assert "cold_mb_per_s" in done.stdout  # the table is printed too


def test_copy_ids_rewrites_every_id_in_place() -> None:
    line = (
        b'{"sessionId":"49d39892-1d82-4409-a8e9-888df8260b77","id":"msg_01AbCdEf",'
        b'"requestId":"req_011Cabc","tool_use_id":"toolu_01XyZw","call_id":"call_a8c879e1",'
        b'"callId":"call_00_65xpFVid","rs":"rs_7066711b","agentId":"a4e985e9dca41ee75",'
        b'"call_id_key":"call_id","text":"users_1234 and agent-a4e985e9dca41ee75.jsonl"}'
    )
    copied = copy_ids(line, 0x2A)
    assert len(copied) == len(line)
    for new in (
        b"002a9892-1d82",
        b"msg_002aCdEf",
        b"req_002aabc",
        b"toolu_002aZw",
        b"call_002a79e1",
        b"call_00_002aFVid",
        b"rs_002a711b",
        b'"a002a5e9dca41ee75"',
        b"agent-a002a5e9dca41ee75.jsonl",
        b'"call_id_key":"call_id"',
        b"users_1234",
    ):
        assert new in copied, new


def test_scaled_copies_are_unique_and_build_cleanly(tmp_path: Path) -> None:
    chosen = sample_subset(short_sessions=False)
    one_copy = size_of([SAMPLE / f for f in chosen if is_trace(f)])
    files = scaled(tmp_path / "scaled", megabytes=one_copy * 2.5 / 1e6)
    copies = len(list((tmp_path / "scaled").iterdir()))
    traces = [f for f in chosen if is_trace(f)]
    assert copies == 3 and len(files) == copies * len(traces)
    report = build([tmp_path / "scaled"], tmp_path / "ds", jobs=2)
    totals = report.totals()
    assert report.exit_code == 0 and totals["failed"] == 0 and totals["indexed"] == len(files)
    sample_sessions = len(traces)  # every sample trace file is one session
    con = connect(tmp_path / "ds")
    (sessions, natives), *_ = con.execute(
        "SELECT count(*), count(DISTINCT runtime || native_id) FROM sessions"
    ).fetchall()
    assert sessions == natives == copies * sample_sessions
    short = sample_subset(short_sessions=True)
    assert 0 < len(short) < len(traces) and set(short) <= set(sample_files())


def test_engine_benchmark_smoke(tmp_path: Path) -> None:
    """The engine benchmark runs both engines on a tiny scaled corpus (no timing asserted)."""
    out = tmp_path / "engines.json"
    runner = RUNNER.parent / "engines.py"
    args = ["--megabytes", "1", "--repeat", "1", "--jobs", "2", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, str(runner), *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    local, ray = report["runs"]["local"][0], report["runs"]["ray"][0]
    assert local["totals"] == ray["totals"]  # the same dataset either way
    assert local["totals"]["items"] > 0 and report["ray_over_local"] > 0
    assert "Ray / local:" in done.stdout


PAIRED = RUNNER.parent / "paired.py"


@pytest.mark.skipif(
    subprocess.run(
        ["git", "-C", str(PAIRED.parent), "rev-parse", "HEAD"], capture_output=True
    ).returncode
    != 0,
    reason="not a git checkout",
)
def test_paired_benchmark_smoke(tmp_path: Path) -> None:
    # the last commit against the working tree, both pure, on a tiny corpus
    out = tmp_path / "paired.json"
    command = [sys.executable, str(PAIRED), "--base", "HEAD", "--pure", "--megabytes", "1"]
    command += ["--repeat", "2", "--workdir", str(tmp_path / "work"), "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "head / base" in done.stdout
    result = json.loads(out.read_text())
    assert result["build"] == {"base": "pure", "head": "pure"}
    assert result["head"].endswith("+worktree")
    for side in ("base", "head"):
        assert len(result["runs"][side]) == 2  # one build of each side per round
        assert all(run["seconds"] > 0 and run["peak_mib"] > 0 for run in result["runs"][side])
        assert all(run["report_seconds"] > 0 for run in result["runs"][side])
        assert result["medians"][side]["dataset_bytes"] > 0
    assert result["time_ratio_median"] > 0 and result["peak_ratio"] > 0
    assert result["report_ratio_median"] > 0


def test_a_runtime_corpus_is_scaled_with_unique_ids(tmp_path: Path) -> None:
    """benchmarks/runtimes.py copies a runtime's traces until the target size, each copy's ids
    rewritten (zstd files too), so the copies are new sessions and no copy of another."""
    from benchmarks.runtimes import scaled_runtime
    from tests.support.files import fixture_path
    from traceidx.analysis.query import connect
    from traceidx.pipeline.job import build

    source = fixture_path("generated", "dsh")
    files = scaled_runtime(source, tmp_path / "traces", 0.5)
    assert len({p.relative_to(tmp_path / "traces").parts[0] for p in files}) >= 2  # copies
    report = build([tmp_path / "traces"], tmp_path / "ds", jobs=1)
    assert report.exit_code == 0
    con = connect(tmp_path / "ds")
    try:
        [(sources, copies, sessions)] = con.execute(
            "SELECT count(*), count(duplicate_of), (SELECT count(*) FROM sessions) FROM sources"
        ).fetchall()
    finally:
        con.close()
    assert copies == 0 and sessions == sources == len(files)


def test_same_rows_tells_equal_datasets_from_different_ones(tmp_path: Path) -> None:
    """benchmarks/same_rows.py: two builds of the same traces publish the same rows (exit 0);
    a build that bounds texts differently is told apart, naming the column (exit 1)."""
    from benchmarks.same_rows import table_rows
    from tests.support.files import fixture_path
    from traceidx.projection.ingest import Settings

    traces = fixture_path("generated", "pi")
    for name, settings in (("a", None), ("b", None), ("short", Settings(text_limit=40))):
        assert build([traces], tmp_path / name, jobs=1, settings=settings).exit_code == 0
    same = _same_rows(tmp_path / "a", tmp_path / "b")
    assert same.returncode == 0, same.stdout + same.stderr
    sessions = table_rows(tmp_path / "a", "sessions")
    assert sessions is not None and sessions.num_rows > 1
    assert f"same rows: sources {sessions.num_rows:,}," in same.stdout
    other = _same_rows(tmp_path / "a", tmp_path / "short")
    assert other.returncode == 1
    assert "items.semantic: some of" in other.stdout and other.stdout.startswith("items.")
    missing = _same_rows(tmp_path / "a", tmp_path / "none")
    assert missing.returncode == 2 and "not a folder" in missing.stderr


def _same_rows(base: Path, new: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(ROOT / "benchmarks" / "same_rows.py"), str(base), str(new)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_otel_benchmark_smoke(tmp_path: Path) -> None:
    """The OpenTelemetry export benchmark runs once on one copy of the real-shaped corpus (no
    timing asserted)."""
    pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed")
    out = tmp_path / "otel.json"
    args = ["--real-copies", "1", "--repeat", "1", "--out", str(out)]
    args += ["--public-claude", str(corpus_path("public", "claude"))]
    done = subprocess.run(
        [sys.executable, str(RUNNER.parent / "otel.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["spans"]["loop"] > 0 and report["spans"]["model_call"] > 0
    assert report["medians"]["cold_seconds"] > 0 and report["medians"]["export_seconds"] > 0
    assert report["export_over_cold"]["median"] > 0 and report["file_mb"] > 0
    assert "export / cold build" in done.stdout


def test_a_runtime_of_session_folders_is_scaled_folder_by_folder(tmp_path: Path) -> None:
    """Mistral Vibe's session folders are copied whole, every path and byte rewritten per copy
    (a subagent's ``child-<hex>`` id too): each copy's folders are new sessions, the subagent's
    link kept inside its copy."""
    from benchmarks.runtimes import folder_corpus
    from tests.support.files import fixture_path
    from traceidx.analysis.query import connect
    from traceidx.pipeline.job import build

    source = fixture_path("generated", "vibe")
    files = folder_corpus(source, tmp_path / "traces", 0.6)
    copies = {p.relative_to(tmp_path / "traces").parts[0] for p in files}
    assert len(copies) >= 2
    report = build([tmp_path / "traces"], tmp_path / "ds", jobs=1)
    assert report.exit_code == 0
    con = connect(tmp_path / "ds")
    try:
        [(sources, duplicates, sessions, linked)] = con.execute(
            "SELECT count(*), count(duplicate_of), (SELECT count(*) FROM sessions), "
            "(SELECT count(delegated_from) FROM sessions) FROM sources"
        ).fetchall()
    finally:
        con.close()
    assert duplicates == 0 and sessions == sources == 4 * len(copies)
    assert linked == len(copies)  # each copy's subagent links to its own copy's parent


def test_incremental_benchmark_smoke(tmp_path: Path) -> None:
    out = tmp_path / "incremental.json"
    command = [sys.executable, str(ROOT / "benchmarks" / "incremental.py"), "--real-copies", "1"]
    command += ["--repeat", "1", "--public-claude", str(corpus_path("public", "claude"))]
    done = subprocess.run(
        [*command, "--out", str(out)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["appended_source_mb"] >= 10  # the long session it appends to
    for name in ("noop_in_process", "noop_command", "append_one_in_process"):
        assert len(result[name]["runs"]) == 1 and result[name]["median_s"] > 0
    assert result["watch_append_to_publish"]["median_s"] > 0  # watch published the append


def test_runtimes_benchmark_builds_a_before_tree_too(tmp_path: Path) -> None:
    corpus_path("generated", "pi")  # (skipped without the shared corpus)
    out = tmp_path / "runtimes.json"
    command = [sys.executable, str(ROOT / "benchmarks" / "runtimes.py"), "--megabytes", "1"]
    command += ["--repeat", "1", "--runtime", "pi", "--base", str(ROOT), "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(out.read_text())["results"]
    assert row["exit_codes"] == row["before_exit_codes"] == [0]
    assert row["before_cpu_seconds"] > 0 and row["cpu_over_before"] > 0
    assert row["before_build_over_decode_cpu"] > 0
    assert "CPU / before" in done.stdout
