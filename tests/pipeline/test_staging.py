"""Spooled runs: sessions in fine order make every bucket's rows one slice, for any bucket count."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from traceidx.pipeline.staging import Spooled, _kept_runs, _Readers, fine_bucket, fine_order, spool
from traceidx.store.dataset import MAX_BUCKETS

#: every bucket count a group can have
COUNTS = [1 << k for k in range(MAX_BUCKETS.bit_length())]

sources = st.lists(
    st.tuples(st.integers(min_value=0, max_value=(1 << 63) - 1), st.integers(0, 5)),
    max_size=40,
)


def _in_fine_order(members: list[tuple[int, int]]) -> tuple[list[int], tuple[tuple[int, int], ...]]:
    """The session of every row, and the segments, of sources spooled as a build spools them."""
    ordered = sorted(members, key=lambda member: fine_order(fine_bucket(member[0])))
    rows = [session for session, count in ordered for _ in range(count)]
    segments: list[tuple[int, int]] = []
    for session, count in ordered:
        if not count:
            continue
        fine = fine_bucket(session)
        if segments and segments[-1][0] == fine:
            segments[-1] = (fine, segments[-1][1] + count)
        else:
            segments.append((fine, count))
    return rows, tuple(segments)


@given(sources)
def test_any_bucket_of_any_count_is_one_span(members: list[tuple[int, int]]) -> None:
    rows, segments = _in_fine_order(members)
    run = Spooled("unused", 0, 0, None, segments)
    for count in COUNTS:
        spans = run.spans(count, range(count))
        assert len({bucket for bucket, _, _ in spans}) == len(spans)  # one span per bucket
        for bucket, start, end in spans:
            assert start < end
            assert all(session % count == bucket for session in rows[start:end])
        covered = sum(end - start for _, start, end in spans)
        assert covered == len(rows)


@settings(max_examples=30, deadline=None)
@given(sources, st.sampled_from(COUNTS), st.data())
def test_select_reads_exactly_the_wanted_rows_in_order(
    tmp_path_factory: object, members: list[tuple[int, int]], count: int, data: st.DataObject
) -> None:
    rows, segments = _in_fine_order(members)
    if not rows:
        return
    wanted = data.draw(st.sets(st.integers(0, count - 1)))
    table = pa.table({"session": pa.array(rows, pa.int64()), "at": pa.array(range(len(rows)))})
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=3))  # runs span batches
    folder = Path(str(tmp_path_factory.mktemp("spool")))  # type: ignore[attr-defined]
    [(_, run)] = spool(folder / "run.arrow", "none", [("g", chunked, segments)])
    readers = _Readers()
    try:
        got = [(bucket, piece) for bucket, piece in run.select(readers, count, wanted)]
    finally:
        readers.close()
    picked = [r for piece in (p for _, p in got) for r in piece.to_pylist()]
    expected = [{"session": s, "at": at} for at, s in enumerate(rows) if s % count in wanted]
    assert picked == expected
    assert all(row["session"] % count == bucket for bucket, p in got for row in p.to_pylist())


@given(st.lists(st.booleans(), min_size=1, max_size=60))
def test_kept_runs_are_the_rows_not_gone(flags: list[bool]) -> None:
    rows = pa.table({"n": list(range(len(flags)))})
    gone = pa.chunked_array([flags[: len(flags) // 2], flags[len(flags) // 2 :]], pa.bool_())
    runs = list(_kept_runs(rows, gone))
    kept = [n for n, flag in enumerate(flags) if not flag]
    assert [n for run in runs for n in run.column("n").to_pylist()] == kept
    assert all(run.num_rows for run in runs)
