"""The demo: the shipped sample of real traces, re-dated to now, built and reported on."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from traceidx.analysis.query import connect
from traceidx.demo import (
    FIRST_DAY,
    LAST_DAY,
    NEWEST,
    RUNTIMES,
    SAMPLE,
    copy_sample,
    days_to,
    is_trace,
    sample_files,
    shift,
    write_demo,
)
from traceidx.pipeline.job import build

NOW = datetime(2027, 3, 15, 4, 30, tzinfo=UTC)  # before the newest event's time of day


def _traces(runtime: str) -> list[Path]:
    return [f for f in sample_files() if f.parts[0] == runtime and is_trace(f)]


def test_the_sample_is_small_and_covers_every_runtime_in_its_own_layout() -> None:
    files = sample_files()
    assert sum((SAMPLE / f).stat().st_size for f in files) < 5_000_000
    by_runtime = {rt: [f for f in files if f.parts[0] == rt] for rt in RUNTIMES}
    assert all(len(paths) >= 10 for paths in by_runtime.values()), by_runtime
    assert any("subagents" in f.parts for f in by_runtime["claude_code"])
    for f in by_runtime["codex"]:  # sessions/YYYY/MM/DD/rollout-YYYY-MM-DDT…
        year, month, day = f.parts[2:5]
        assert f.parts[1] == "sessions" and f.name.startswith(f"rollout-{year}-{month}-{day}T")
    assert all(f.parts[1] == "sessions" for f in by_runtime["pi"] + by_runtime["dsh"])
    assert all(f.name == "session.jsonl.zstd" for f in by_runtime["dsh"])


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b'"timestamp":"2026-11-30T06:40:06.142Z"', b'"timestamp":"2026-12-03T06:40:06.142Z"'),
        (b'"t":"2026-11-30T23:59:59+02:00"', b'"t":"2026-12-03T23:59:59+02:00"'),
        (b'"t":"2026-11-30T06:40:06.123456789Z"', b'"t":"2026-12-03T06:40:06.123456789Z"'),
        (b'"current_date":"2026-11-30"', b'"current_date":"2026-12-03"'),
        (b'"time":1796020720134,', b'"time":1796279920134,'),  # epoch ms
        (b'"completed_at":1796020720}', b'"completed_at":1796279920}'),  # epoch s
        (b'"create_time":1796020720.5}', b'"create_time":1796279920.5}'),
        (
            b"sessions/2026/11/30/rollout-2026-11-30T06-29-50-01a2",
            b"sessions/2026/12/03/rollout-2026-12-03T06-29-50-01a2",
        ),
        (b"2026-11-30T06-30-06-780Z_01a22b25", b"2026-12-03T06-30-06-780Z_01a22b25"),
        # not times of the sample: other dates, numbers, ids
        (b'"betas":["context-2025-06-27"]', b'"betas":["context-2025-06-27"]'),
        (b'"id":"msg_1796020720134"', b'"id":"msg_1796020720134"'),
        (b'"n":17960207201345', b'"n":17960207201345'),
        (b'"n":1000000000', b'"n":1000000000'),
    ],
)
def test_shift_moves_every_form_of_time_in_place(before: bytes, after: bytes) -> None:
    assert shift(before, 3) == after
    assert len(shift(before, 3)) == len(before)
    assert shift(before, 0) == before


def test_days_to_brings_the_newest_event_within_the_last_day() -> None:
    for now in (NOW, NOW + timedelta(hours=5), datetime.now(UTC)):
        days = days_to(now)
        assert now - timedelta(days=1) < NEWEST + timedelta(days=days) <= now


def _loops(dataset: Path) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    rows = (
        connect(dataset)
        .execute(
            """
            SELECT s.runtime, s.native_id, l.native_id, l.session_position, l.started_at,
                   l.ended_at - l.started_at, l.usage, l.model.id, l.end.outcome,
                   (SELECT count(*) FROM items i WHERE i.loop_id = l.loop_id)
            FROM loops l JOIN sessions s USING (session_id)
            """
        )
        .fetchall()
    )
    return {row[:4]: row[4:] for row in rows}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, list[Path]]]:
    root = tmp_path_factory.mktemp("demo")
    assert build([SAMPLE / rt for rt in RUNTIMES], root / "sample-ds", jobs=1).exit_code == 0
    written = write_demo(root / "traces", now=NOW)
    report = build([root / "traces" / rt for rt in RUNTIMES], root / "demo-ds", jobs=1)
    assert report.exit_code == 0 and report.totals()["failed"] == 0
    return root / "sample-ds", root / "demo-ds", written


def test_the_sample_window_is_what_the_demo_assumes(built: tuple[Path, Path, Any]) -> None:
    sample, _, _ = built
    query = "SELECT min(occurred_at), max(occurred_at) FROM records"
    first, last = connect(sample).execute(query).fetchall()[0]
    assert first.date() == FIRST_DAY and last == NEWEST and NEWEST.date() == LAST_DAY


def test_the_demo_keeps_every_loop_but_moves_it_to_now(built: tuple[Path, Path, Any]) -> None:
    sample, demo, written = built
    before, after = _loops(sample), _loops(demo)
    assert set(before) == set(after) and len(before) > 100
    moved = timedelta(days=days_to(NOW))
    for key, (started, *rest) in before.items():
        assert after[key] == (started + moved if started else None, *rest), key
    newest = max(started for started, *_ in after.values() if started)
    assert NOW - timedelta(days=2) < newest <= NOW
    assert {rt: len(paths) for rt, paths in written.items()} == {
        rt: len(_traces(rt)) for rt in RUNTIMES
    }


def test_a_copy_can_be_edited_and_restricted(tmp_path: Path) -> None:
    codex = [f for f in sample_files() if f.parts[0] == "codex"][:2]
    written = copy_sample(tmp_path, -1, only=codex, edit=lambda b: b.replace(b"rollout", b"ROLL"))
    assert [len(paths) for paths in written.values()] == [0, 2, 0, 0]
    for path in written["codex"]:
        assert path.name.startswith("ROLL-") and b"rollout" not in path.read_bytes()


def test_the_demo_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "traceidx.cli.main", "demo", "--corpus", str(tmp_path / "traces")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    counts = ", ".join(f"{len(_traces(rt))} {rt}" for rt in RUNTIMES)
    assert done.stderr == f"demo corpus: {counts} trace files in {tmp_path / 'traces'}\n"
    dataset = tmp_path / "traces" / "dataset"
    sources = sum(len(_traces(rt)) for rt in RUNTIMES)
    assert done.stdout.startswith(f"built {dataset}: {sources} sources, {sources} sessions, ")
    newest = (NEWEST + timedelta(days=days_to(datetime.now(UTC)))).strftime("%Y-%m")
    for title in ("token usage by month", "models side by side", "the slowest tool calls"):
        assert title in done.stdout
    assert f"\n{newest} " in done.stdout  # the newest month is this one
    assert f"traceidx report tools --dataset {dataset}" in done.stdout
