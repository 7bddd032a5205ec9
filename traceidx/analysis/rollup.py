"""The usage rollup: a dataset's usage report at its finest grain, kept so that `traceidx report
usage` answers without loading a data library.

``usage-rollup.json`` beside the manifest holds the rows of the usage report
(``sql/reports/usage.sql`` through `traceidx.analysis.reports`) by day and by every dimension
(`reports.DIMENSIONS`), with no filter and no limit, in one timezone (the machine's, the one a
report defaults to) and with the default prices, computed once per dataset generation. It
records what it is current for: the manifest's size and modification time, the timezone, the
traceidx and genai-prices versions, the price override file in effect (its path, size and
modification time) and a digest of the report's SQL. Counts and tokens are kept as integers,
NULL as null, and each row's cost unrounded, as the exact decimal text of the sum of its calls'
costs (the report sums each call's cost as a decimal of 15 places, so a sum of sums is the
same sum).

`answer` re-aggregates those rows for a report's parameters with the standard library alone:
the days in ``--since`` … ``--until`` (inclusive; a row without a known time, its day empty,
is left out when either is given), the rows of the asked runtimes and models (the report
filters a model call by its model and a loop by its loop's model, and a row carries exactly
that model, so the filter is the rows'), each day mapped to its period (day ``YYYY-MM-DD``,
week: its ISO week's Monday ``YYYY-MM-DD``, month ``YYYY-MM``), then summed by period and the
asked dimensions (a sum of only nulls is null, as in SQL), the cost rounded to 6 places half
away from zero (as DuckDB rounds a decimal) and shown as a float (as the report casts it),
ordered by every column ascending with nulls last, and cut to ``--limit``. It answers only what
it can answer exactly, and None otherwise (the caller then runs the SQL): no rollup, or one
for another manifest, timezone, version, price override or SQL; ``--prices``; a dimension or
period it does not know; ``--since`` after ``--until``; a runtime that is not registered or a
model no billed call names (the SQL says so).

``traceidx summarize`` writes it, and so does ``traceidx report usage`` after it had to run
the SQL on a local dataset in the default timezone with the default prices.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal, localcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceidx import __version__
from traceidx.analysis import summary
from traceidx.analysis.reports import DIMENSIONS, PERIODS, report_sql
from traceidx.analysis.summary import manifest_stamp

if TYPE_CHECKING:
    import duckdb

    from traceidx.analysis.reports import ReportParams

#: the file beside the manifest
NAME = "usage-rollup.json"
#: bump when the file changes shape or meaning
FORMAT = 1
#: the usage report's cost column, and the same column unrounded, as exact decimal text
_COST = "round(sum(cost_usd), 6)::DOUBLE AS cost_usd"
_EXACT_COST = "sum(cost_usd)::VARCHAR AS cost_usd"
#: the cost a row shows: rounded to 6 places, half away from zero (as DuckDB rounds a decimal)
_CENT_MILLIONTHS = Decimal("0.000001")

Rows = tuple[list[str], list[tuple[Any, ...]]]


def _sql_digest() -> str:
    """A checksum of the usage report's SQL and its scope: a rollup of other SQL is stale."""
    import zlib

    text = report_sql("_scope") + "\0" + report_sql("usage")
    return f"{zlib.crc32(text.encode('utf-8')):08x}"


def _prices_stamp() -> list[Any] | None:
    """The price override file in effect (path, size, modification time), or None."""
    from traceidx.analysis.pricing import override_file

    path = override_file(None)
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return [str(path)]
    return [str(path), st.st_size, st.st_mtime_ns]


def _versions() -> dict[str, Any]:
    """What a rollup was computed with, besides the manifest and timezone."""
    from traceidx.analysis.pricing import genai_prices_version

    return {
        "traceidx": __version__,
        "genai_prices": genai_prices_version(),
        "prices_override": _prices_stamp(),
        "sql": _sql_digest(),
    }


def compute(
    dataset: Path,
    con: duckdb.DuckDBPyConnection | None = None,
    stamp: list[int] | None = None,
) -> dict[str, Any]:
    """The rollup of a local dataset: on `con` when given (a connection over it with the
    default prices, whose manifest had `stamp`), else on a connection of its own."""
    from traceidx.analysis.query import connect
    from traceidx.analysis.reports import ReportParams, local_timezone, prepare

    sql = report_sql("usage")
    if sql.count(_COST) != 1:
        raise AssertionError(f"usage.sql no longer computes its cost as {_COST}")
    timezone = local_timezone()
    own = con is None
    if con is None:
        stamp = manifest_stamp(dataset)  # before reading it: a newer manifest is a stale rollup
        con = connect(dataset)
    try:
        prepare(con, ReportParams(timezone=timezone, period="day", group_by=DIMENSIONS))
        rel = con.sql(sql.replace(_COST, _EXACT_COST))
        columns, rows = list(rel.columns), rel.fetchall()
    finally:
        if own:
            con.close()
    return {
        "format": FORMAT,
        "manifest": stamp,
        "timezone": timezone,
        **_versions(),
        "dimensions": [c for c in columns if c in DIMENSIONS],
        "columns": columns,
        "rows": [list(row) for row in rows],
    }


def write(
    dataset: Path,
    con: duckdb.DuckDBPyConnection | None = None,
    stamp: list[int] | None = None,
) -> Path:
    """Compute and write the rollup (atomically, private as the dataset); see `compute`."""
    return summary.write_beside(dataset, NAME, compute(dataset, con, stamp))


def read(dataset: Path) -> dict[str, Any] | None:
    """The rollup as written, or None when there is none (or it cannot be read)."""
    return summary.read_beside(dataset, NAME)


def current(dataset: Path, timezone: str) -> dict[str, Any] | None:
    """The rollup when it is current for the dataset's manifest, this timezone, these
    versions and prices, and well formed; else None."""
    rollup = read(dataset)
    if (
        rollup is None
        or rollup.get("format") != FORMAT
        or rollup.get("timezone") != timezone
        or rollup.get("manifest") is None
        or rollup.get("manifest") != manifest_stamp(dataset)
    ):
        return None
    if any(rollup.get(key) != value for key, value in _versions().items()):
        return None
    columns, rows, dimensions = rollup.get("columns"), rollup.get("rows"), rollup.get("dimensions")
    if not (
        isinstance(columns, list)
        and isinstance(rows, list)
        and isinstance(dimensions, list)
        and columns[:1] == ["period"]
        and columns[1 : 1 + len(dimensions)] == dimensions
        and {"runtime", "model", "calls", "cost_usd"} <= set(columns)
        and all(isinstance(row, list) and len(row) == len(columns) for row in rows)
    ):
        return None
    return rollup


def usable(dataset: Path, timezone: str) -> bool:
    """Whether the dataset's rollup is current for `timezone` and adds up (it answers the
    default report)."""
    from traceidx.analysis.reports import ReportParams

    return answer(dataset, ReportParams(timezone=timezone)) is not None


def _period(day: str, period: str) -> str:
    """A day's label in a period (as usage.sql's ``period_of`` renders it)."""
    if not day or period == "day":
        return day
    if period == "month":
        return day[:7]
    start = date.fromisoformat(day)
    return (start - timedelta(days=start.weekday())).isoformat()


def _null_last(row: tuple[Any, ...]) -> tuple[tuple[bool, Any], ...]:
    return tuple((value is None, value) for value in row)


def answer(dataset: Path, p: ReportParams) -> Rows | None:
    """The usage report's columns and rows for `p` from the dataset's rollup, exactly as the
    SQL gives them; None when the rollup cannot answer (see the module's docstring)."""
    if (
        p.prices is not None
        or p.period not in PERIODS
        or not p.group_by
        or (p.since is not None and p.until is not None and p.since > p.until)
        or (p.limit is not None and p.limit < 0)
    ):
        return None
    if p.runtimes:
        from traceidx import runtimes

        if not set(p.runtimes) <= set(runtimes.names()):
            return None
    rollup = current(dataset, p.timezone)
    if rollup is None:
        return None
    try:
        with localcontext() as exact:
            exact.prec = 80  # a sum of decimals is exact, as DuckDB's
            return _answer(rollup, p)
    except (ValueError, TypeError, KeyError, IndexError, ArithmeticError):
        return None  # a rollup that does not add up is no answer


def _answer(rollup: dict[str, Any], p: ReportParams) -> Rows | None:
    columns: list[str] = rollup["columns"]
    dimensions: list[str] = rollup["dimensions"]
    if not set(p.group_by) <= set(dimensions):
        return None
    at = {column: index for index, column in enumerate(columns)}
    rows: list[list[Any]] = rollup["rows"]
    runtime, model, calls, cost = at["runtime"], at["model"], at["calls"], at["cost_usd"]
    if p.models and not set(p.models) <= {row[model] for row in rows if row[calls]}:
        return None  # the SQL says which models the dataset has
    kept = [c for c in dimensions if c in p.group_by]  # in the SQL's order, not the asked one
    keys = [at[c] for c in kept]
    measures = [i for i, c in enumerate(columns) if c != "period" and c not in dimensions]
    since = p.since.isoformat() if p.since is not None else None
    until = p.until.isoformat() if p.until is not None else None
    runtimes, models = set(p.runtimes), set(p.models)
    labels: dict[str, str] = {}
    sums: dict[tuple[Any, ...], list[Any]] = {}
    for row in rows:
        day = row[0]
        if not isinstance(day, str):
            raise TypeError(f"a day of {day!r}")
        if (since is not None or until is not None) and not day:
            continue
        if (since is not None and day < since) or (until is not None and day > until):
            continue
        if (runtimes and row[runtime] not in runtimes) or (models and row[model] not in models):
            continue
        label = labels.get(day)
        if label is None:
            label = labels[day] = _period(day, p.period)
        key = (label, *(row[i] for i in keys))
        total = sums.get(key)
        if total is None:
            total = sums[key] = [None] * len(measures)
        for slot, index in enumerate(measures):
            value = row[index]
            if value is None:
                continue
            if index == cost:
                if not isinstance(value, str):
                    raise TypeError(f"a cost of {value!r}")
                value = Decimal(value)
            elif type(value) is not int:
                raise TypeError(f"{columns[index]} of {value!r}")
            total[slot] = value if total[slot] is None else total[slot] + value
    cost_slot = measures.index(cost)
    out: list[tuple[Any, ...]] = []
    for key, total in sums.items():
        if total[cost_slot] is not None:
            rounded = total[cost_slot].quantize(_CENT_MILLIONTHS, rounding=ROUND_HALF_UP)
            total[cost_slot] = float(rounded)
        out.append((*key, *total))
    out.sort(key=_null_last)
    if p.limit is not None:
        out = out[: p.limit]
    return ["period", *kept, *(columns[i] for i in measures)], out
