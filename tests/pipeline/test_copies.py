"""Property: however many earlier copies of a trace are collected, in whatever order and
grouping of builds, the dataset counts the longest one's facts once."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.files import fixture_path
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build

TRACE = max(fixture_path("generated", "codex").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
LINES = TRACE.read_bytes().splitlines(keepends=True)
TOTALS = "SELECT count(*), sum(usage.input), sum(usage.output) FROM loops"


def _totals(dataset: Path) -> tuple[int, ...]:
    row = connect(dataset).execute(TOTALS).fetchone()
    assert row is not None
    return tuple(row)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cuts=st.lists(st.integers(1, len(LINES)), min_size=1, max_size=4),
    builds=st.integers(1, 3),
)
def test_copies_count_once(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int], builds: int
) -> None:
    root = tmp_path_factory.mktemp("copies")
    files = []
    for at, cut in enumerate(cuts):
        path = root / f"origin-{at}" / TRACE.name
        path.parent.mkdir()
        path.write_bytes(b"".join(LINES[:cut]))
        files.append(path)
    dataset = root / "dataset"
    for start in range(builds):
        chunk = files[start::builds]
        if chunk:
            build(chunk, dataset, jobs=1, origin=f"build-{start}")
    longest = root / "longest"
    build([files[cuts.index(max(cuts))]], longest, jobs=1)
    assert _totals(dataset) == _totals(longest)
    sources = (
        connect(dataset)
        .execute("SELECT count(*) FILTER (WHERE duplicate_of IS NULL), count(*) FROM sources")
        .fetchone()
    )
    assert sources is not None
    assert sources[1] == len(files)
    assert sources[0] == 1 or _totals(longest)[0] == 0
