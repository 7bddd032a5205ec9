"""The benchmark runner works end to end at a tiny size (a smoke test: no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import corpus_path

RUNNER = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


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
    assert set(corpora) == {"generated", "real-shaped"}
    assert corpora["generated"]["physical_mb"] >= 1  # the generator grows to the asked size
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
