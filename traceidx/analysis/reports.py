"""Reports: the common questions, each one SQL file in ``sql/reports/``, with shared parameters.

A report runs on a connection from `traceidx.connect`: `prepare` loads the price tables
(`traceidx.analysis.pricing`), sets the parameters as DuckDB session variables and defines the
``report_model_calls`` / ``report_loops`` / ``report_calls`` scope
(``sql/reports/_scope.sql``); the report's own SQL then reads them.

Parameters: ``since`` / ``until`` (local dates, inclusive), ``timezone`` (IANA name; periods
and date bounds follow it; default: the machine's zone, else UTC), ``runtimes``, ``models``,
``period`` (day | week | month, for ``usage``), ``group_by`` (`DIMENSIONS`, for ``usage``),
``limit``, ``prices`` (an override file, see `traceidx.analysis.pricing`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceidx.analysis import sqlfiles
from traceidx.errors import ReportError

if TYPE_CHECKING:
    import duckdb
    import polars as pl

PERIODS = ("day", "week", "month")

#: what `report usage --group-by` can group by: model, and the columns of the scope's
#: ``session_dimensions`` table (a new dimension is a column there and its name here)
DIMENSIONS: tuple[str, ...] = ("runtime", "model", "project", "branch", "agent", "origin")
DEFAULT_GROUP_BY: tuple[str, ...] = ("runtime", "model")


def _report_names() -> tuple[str, ...]:
    return tuple(n for n in sqlfiles.names("reports") if not n.startswith("_"))


#: every shipped report, by name
REPORTS: tuple[str, ...] = _report_names()


def report_sql(name: str) -> str:
    """The shipped SQL text of one report (or of ``_scope``)."""
    if name not in REPORTS and name != "_scope":
        raise ReportError(f"no report named {name!r}; reports: {', '.join(REPORTS)}")
    return sqlfiles.text("reports", name)


_DETAIL = "detail (hidden first in a narrow table):"


def _header(name: str) -> list[str]:
    """The lines of a report's header comment, without their ``--``."""
    header = []
    for line in report_sql(name).splitlines():
        if not line.startswith("--"):
            break
        header.append(line.removeprefix("--").strip())
    return header


def report_detail(name: str) -> tuple[str, ...]:
    """The columns a report names as detail: a table too wide for the terminal hides them
    first (its header's ``-- detail (…):`` line)."""
    for line in _header(name):
        if line.startswith(_DETAIL):
            return tuple(c.strip() for c in line.removeprefix(_DETAIL).split(",") if c.strip())
    return ()


#: the report options that apply only where a report's SQL reads them: option -> what it reads
_READS: dict[str, str] = {"period": "period_of(", "group_by": "getvariable('group_by')"}


def report_options(name: str) -> frozenset[str]:
    """The options among `--limit`, `--period`, `--group-by` that a report applies: `--limit`
    every one (`run_report` cuts the rows), the others where its SQL reads them (the one place
    that decides; the html report shows every report: all of them)."""
    if name == "html":
        return frozenset({"limit", *_READS})
    text = report_sql(name)
    return frozenset({"limit"} | {option for option, mark in _READS.items() if mark in text})


def report_summary(name: str) -> str:
    """The first sentence of a report's header comment: what it answers."""
    header = [line for line in _header(name) if not line.startswith(_DETAIL)]
    text = " ".join(header).removeprefix(f"{name}:").strip()
    first, dot, _ = text.partition(". ")
    return first + ("." if dot else "")


def stated_outcomes(
    columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> tuple[list[str], list[str]]:
    """From the models report's rows: the runtimes that stated a loop outcome in its scope,
    and those that stated none (its ``runtimes`` and ``runtimes_with_outcome`` columns)."""
    if "runtimes" not in columns or "runtimes_with_outcome" not in columns:
        return [], []
    every, stating = columns.index("runtimes"), columns.index("runtimes_with_outcome")
    seen: set[str] = set()
    stated: set[str] = set()
    for row in rows:
        for index, names in ((every, seen), (stating, stated)):
            if isinstance(row[index], str):
                names.update(n.strip() for n in row[index].split(",") if n.strip())
    return sorted(stated), sorted(seen - stated)


def outcome_footnote(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str | None:
    """One line saying what the models report's ``no_outcome`` means and which runtimes of
    its scope stated outcomes at all (None when it has no such column)."""
    if "no_outcome" not in columns:
        return None
    stated, silent = stated_outcomes(columns, rows)
    text = (
        "no_outcome: the runtime did not state how the loop ended (traceidx never guesses it; "
        "many runtimes state only interruptions and failures)"
    )
    if stated:
        text += f"; stated here by {', '.join(stated)}"
    if silent:
        text += f"; never by {', '.join(silent)}"
    return text + "."


def local_timezone() -> str:
    """The machine's IANA zone name when it can be told, else UTC."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if (tz and "/" in tz) or tz == "UTC":
        return tz
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        return "UTC"
    match = re.search(r"zoneinfo/(.+)$", target)
    return match.group(1) if match else "UTC"


@dataclass(frozen=True, slots=True)
class ReportParams:
    """What a report covers."""

    since: date | None = None
    until: date | None = None
    timezone: str = "UTC"
    runtimes: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    period: str = "day"
    limit: int | None = None
    prices: Path | None = None
    group_by: tuple[str, ...] = DEFAULT_GROUP_BY


def params(**kwargs: Any) -> ReportParams:
    """ReportParams from loose values (ISO date strings, single strings for lists)."""
    values = dict(kwargs)
    for key in ("since", "until"):
        value = values.get(key)
        if isinstance(value, str):
            try:
                values[key] = date.fromisoformat(value)
            except ValueError as exc:
                raise ReportError(f"--{key} {value!r} is not a date (YYYY-MM-DD)") from exc
    if isinstance(values.get("group_by"), str):
        values["group_by"] = tuple(v.strip() for v in values["group_by"].split(",") if v.strip())
    for key in ("runtimes", "models", "group_by"):
        value = values.get(key)
        if isinstance(value, str):
            values[key] = (value,)
        elif value is not None:
            values[key] = tuple(value)
        else:
            values.pop(key, None)
    if values.get("timezone") is None:
        values["timezone"] = local_timezone()
    if isinstance(values.get("prices"), str):
        values["prices"] = Path(values["prices"])
    try:
        return ReportParams(**{k: v for k, v in values.items() if v is not None})
    except TypeError as exc:
        raise ReportError(str(exc)) from exc


def prepare(con: duckdb.DuckDBPyConnection, p: ReportParams) -> None:
    """Load prices, set the parameters and define the report scope on a connection."""
    from traceidx import runtimes  # here: `report usage` answered from its rollup needs neither
    from traceidx.analysis import pricing

    if p.period not in PERIODS:
        raise ReportError(f"--period {p.period!r}: choose one of {', '.join(PERIODS)}")
    known = runtimes.names() if p.runtimes else []  # listing them loads every adapter
    unknown = sorted(set(p.runtimes) - set(known))
    if unknown:
        raise ReportError(f"unknown runtime {unknown[0]!r}; runtimes: {', '.join(known)}")
    known_zone = con.execute(
        "SELECT count(*) FROM pg_timezone_names() WHERE name = ?", [p.timezone]
    ).fetchall()[0][0]
    if not known_zone:
        raise ReportError(f"--timezone {p.timezone!r} is not an IANA zone (e.g. Europe/Berlin)")
    if p.since and p.until and p.since > p.until:
        raise ReportError(f"--since {p.since} is after --until {p.until}")
    odd = [d for d in p.group_by if d not in DIMENSIONS]
    if odd or not p.group_by:
        raise ReportError(
            f"--group-by {','.join(p.group_by)!r}: give a comma-separated list of "
            f"{', '.join(DIMENSIONS)}"
        )
    if p.prices is not None:  # connect priced the calls with genai-prices
        pricing.load(con, p.prices)
    variables: dict[str, Any] = {
        "tz": p.timezone,
        "period": p.period,
        "since": p.since.isoformat() if p.since else None,
        "until": p.until.isoformat() if p.until else None,
        "runtimes": list(p.runtimes) or None,
        "models": list(p.models) or None,
        "row_limit": p.limit,
        "group_by": list(p.group_by),
    }
    for name, value in variables.items():
        if value is None:
            con.execute(f"SET VARIABLE {name} = NULL")
        elif isinstance(value, list):
            con.execute(f"SET VARIABLE {name} = ?::VARCHAR[]", [value])
        else:
            con.execute(f"SET VARIABLE {name} = ?", [value])
    for statement in _statements(report_sql("_scope")):
        con.execute(statement)


def _statements(sql: str) -> list[str]:
    """The statements of a script whose comments are whole lines (as ours are)."""
    code = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    return [part.strip() for part in code.split(";") if part.strip()]


def run_report(
    con: duckdb.DuckDBPyConnection, name: str, p: ReportParams
) -> duckdb.DuckDBPyRelation:
    """The result relation of one report (after `prepare`)."""
    sql = report_sql(name)
    prepare(con, p)
    rel = con.sql(sql)
    return rel if p.limit is None else rel.limit(p.limit)


def report(name: str, dataset: str | Path | None = None, **kwargs: Any) -> pl.DataFrame:
    """A report as a Polars DataFrame.

    >>> traceidx.report("usage", period="week", timezone="Asia/Tokyo")  # doctest: +SKIP
    >>> traceidx.report("slowest", runtimes=["codex"], limit=5)  # doctest: +SKIP
    """
    from traceidx.analysis.query import connect

    con = connect(dataset)
    frame: pl.DataFrame = run_report(con, name, params(**kwargs)).pl()
    return frame
