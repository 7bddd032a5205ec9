"""Column-wise records: the table built from flat columns equals encoding Record objects."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from traceidx.frame import fingerprint
from traceidx.records import RecordColumns, records_table
from traceidx.schema import to_table

_RECORD = st.tuples(
    st.integers(0, (1 << 63) - 1),  # record id
    st.integers(0, 1 << 40),  # start
    st.integers(0, 1 << 20),  # length
    st.binary(max_size=40),  # content (for the fingerprint)
    st.sampled_from(["ok", "malformed", "oversized", "joined"]),
    st.one_of(st.none(), st.integers(-(1 << 50), 1 << 50)),  # occurred_at
    st.one_of(st.none(), st.text(max_size=12)),  # native type
)
_RUN = st.tuples(
    st.integers(0, (1 << 63) - 1), st.integers(0, 1 << 30), st.lists(_RECORD, max_size=20)
)


@given(st.lists(_RUN, max_size=4))
def test_records_table_equals_encoding_the_record_objects(runs: list) -> None:
    columns = []
    for source_id, first, records in runs:
        run = RecordColumns(source_id, first)
        for record_id, start, length, content, status, occurred_at, native_type in records:
            digest = fingerprint(content).encode("ascii")
            run.append(record_id, start, start + length, digest, status, occurred_at, native_type)
        columns.append(run)
    objects = [record for run in columns for record in run.objects()]
    assert records_table(columns).equals(to_table("records", objects))


def test_a_run_continues_where_the_last_one_stopped() -> None:
    run = RecordColumns(7, first=3)
    run.append(11, 0, 5, b"0" * 32, "ok", None, "user")
    rest = run.rest()
    assert (rest.source_id, rest.first, len(rest)) == (7, 4, 0)
    assert [r.source_position for r in run.objects()] == [3]
