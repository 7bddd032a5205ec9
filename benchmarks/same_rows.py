"""Whether two built datasets publish the same rows: every table compared row for row.

    python benchmarks/same_rows.py BASE_DATASET NEW_DATASET

Each table's live parts (as the current manifest names them) are read whole, its rows sorted
by their id (``sessions`` by ``session_id``) and compared, column by column, with the other
dataset's; so are the partitions each table's rows were published in (``runtime``, ``month``
and bucket of the part holding each row). Rows may sit in another order within a part (that
depends on how a build batched its sources); no row may differ, be missing or be added.
Exit code 0 when every table is equal, 1 when one differs (each difference on one line), 2
when a dataset cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.append(str(Path(__file__).resolve().parents[1]))

from traceidx.domain.model import TABLES
from traceidx.store.dataset import read_published
from traceidx.tables.encode import ID_COLUMNS

#: the column each table's rows are sorted by (unique within a dataset)
SORT_COLUMNS = {**ID_COLUMNS, "sessions": "session_id"}


def table_rows(dataset: Path, table: str) -> pa.Table | None:
    """Every live row of `table` in `dataset`, sorted by its id, with the key of the
    partition (``runtime/month/bucket``) it was published in; None if the table has no part."""
    manifest = read_published(dataset)
    if manifest is None:
        raise SystemExit(f"{dataset}: no published dataset here; build it first")
    pieces = []
    for key, tables in sorted(manifest.parts.items()):
        part = tables.get(table)
        if part is None:
            continue
        data = pq.read_table(dataset / part.path)
        partition = pa.array([key] * data.num_rows, pa.string())
        pieces.append(data.append_column("partition", partition))
    if not pieces:
        return None
    rows = pa.concat_tables(pieces, promote_options="none")
    return rows.take(pc.sort_indices(rows, sort_keys=[(SORT_COLUMNS[table], "ascending")]))


def differences(base: Path, new: Path) -> list[str]:
    """What differs between the rows of two datasets, one line per difference (none: equal)."""
    found: list[str] = []
    for table in TABLES:
        old, now = table_rows(base, table), table_rows(new, table)
        if old is None or now is None:
            if (old is None) != (now is None):
                found.append(f"{table}: present in only one dataset")
            continue
        if old.num_rows != now.num_rows:
            found.append(f"{table}: {old.num_rows} rows in {base}, {now.num_rows} in {new}")
            continue
        if old.schema != now.schema:
            found.append(f"{table}: the schemas differ")
            continue
        for name in old.column_names:
            a, b = old.column(name), now.column(name)
            if not a.equals(b):
                unequal = pc.invert(pc.fill_null(pc.equal(a, b), False)) if _flat(a) else None
                count = pc.sum(unequal).as_py() if unequal is not None else "some"
                found.append(f"{table}.{name}: {count} of {old.num_rows} rows differ")
    return found


def _flat(column: pa.ChunkedArray) -> bool:
    t = column.type
    return not (pa.types.is_nested(t) or pa.types.is_dictionary(t))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    args = parser.parse_args()
    for dataset in (args.base, args.new):
        if not dataset.is_dir():
            print(f"{dataset}: not a folder; give two built datasets", file=sys.stderr)
            return 2
    found = differences(args.base, args.new)
    for line in found:
        print(line)
    counts = {t: (rows.num_rows if (rows := table_rows(args.new, t)) else 0) for t in TABLES}
    summary = ", ".join(f"{t} {n:,}" for t, n in counts.items())
    print(f"{'DIFFERENT' if found else 'same rows'}: {summary}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
