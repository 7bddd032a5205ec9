"""Column-wise records: the table built from flat columns equals encoding Record objects."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from traceidx.domain import ids
from traceidx.sources.frame import fingerprint
from traceidx.sources.records import RecordColumns, SourceKeys
from traceidx.tables.records import records_table
from traceidx.tables.schema import to_table

_RECORD = st.tuples(
    st.integers(0, 1 << 40),  # start
    st.integers(0, 1 << 20),  # length
    st.binary(max_size=40),  # content (for the fingerprint)
    st.sampled_from(["ok", "malformed", "oversized", "joined"]),
    st.one_of(st.none(), st.integers(-(1 << 50), 1 << 50)),  # occurred_at
    st.one_of(st.none(), st.text(max_size=12)),  # native type
)
_RUN = st.tuples(st.integers(0, (1 << 63) - 1), st.integers(0, 40), st.lists(_RECORD, max_size=20))


@given(st.lists(_RUN, max_size=4))
def test_records_table_equals_encoding_the_record_objects(runs: list) -> None:
    columns = []
    for source_id, first, records in runs:
        keys = SourceKeys(source_id)
        for position in range(first):  # the source's earlier records, in another run
            keys.add(None, fingerprint(b"%d" % position).encode("ascii"))
        run = RecordColumns(source_id, keys, first)
        for start, length, content, status, occurred_at, native_type in records:
            keys.add(occurred_at, fingerprint(content).encode("ascii"))
            run.append(start, start + length, status, native_type)
        columns.append(run)
    objects = [record for run in columns for record in run.objects()]
    assert records_table(columns).equals(to_table("records", objects))
    for run, source in zip(columns, runs, strict=True):
        expected = [ids.record_id(source[0], run.first + i) for i in range(len(run))]
        assert [r.record_id for r in run.objects()] == expected
