"""Reports: the common questions, each one SQL file in ``sql/reports/``, with shared parameters.

A report runs on a connection from `traceidx.connect`: `prepare` loads the price table, sets
the parameters as DuckDB session variables and defines the ``report_loops`` /
``report_calls`` scope (``sql/reports/_scope.sql``); the report's own SQL then reads them.

Parameters: ``since`` / ``until`` (local dates, inclusive), ``timezone`` (IANA name; periods
and date bounds follow it; default: the machine's zone, else UTC), ``runtimes``, ``models``,
``period`` (day | week | month, for ``usage``), ``limit`` (for ``slowest``).

Prices: the bundled table ``traceidx/prices.json`` (versioned; USD per million tokens, with
regular-expression model patterns), extended or overridden by a user file (``prices=`` /
``--prices``, else ``$TRACEIDX_PRICES``, else ``$XDG_CONFIG_HOME/traceidx/prices.json``) of
the same shape, whose entries take precedence. A model no pattern matches is unpriced.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceidx import runtimes
from traceidx.errors import ReportError

if TYPE_CHECKING:
    import duckdb
    import polars as pl

PERIODS = ("day", "week", "month")


def _report_names() -> tuple[str, ...]:
    folder = resources.files("traceidx.sql").joinpath("reports")
    names = [p.name[: -len(".sql")] for p in folder.iterdir() if p.name.endswith(".sql")]
    return tuple(sorted(n for n in names if not n.startswith("_")))


#: every shipped report, by name
REPORTS: tuple[str, ...] = _report_names()


def report_sql(name: str) -> str:
    """The shipped SQL text of one report (or of ``_scope``)."""
    if name not in REPORTS and name != "_scope":
        raise ReportError(f"no report named {name!r}; reports: {', '.join(REPORTS)}")
    return resources.files("traceidx.sql").joinpath("reports", f"{name}.sql").read_text("utf-8")


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


def report_summary(name: str) -> str:
    """The first sentence of a report's header comment: what it answers."""
    header = [line for line in _header(name) if not line.startswith(_DETAIL)]
    text = " ".join(header).removeprefix(f"{name}:").strip()
    first, dot, _ = text.partition(". ")
    return first + ("." if dot else "")


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
    for key in ("runtimes", "models"):
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


def bundled_prices() -> list[dict[str, Any]]:
    """The price entries of the bundled table (``traceidx/prices.json``), in its order."""
    table = json.loads(resources.files("traceidx").joinpath("prices.json").read_text("utf-8"))
    entries: list[dict[str, Any]] = table["models"]
    return entries


def load_prices(override: Path | None = None) -> list[dict[str, Any]]:
    """Price entries in precedence order (user file first, then the bundled table)."""
    entries: list[dict[str, Any]] = []
    user = override or _user_prices()
    if user is not None:
        try:
            data = json.loads(user.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise ReportError(f"{user}: cannot read prices ({exc})") from exc
        entries.extend(data.get("models", []))
    entries.extend(bundled_prices())
    for entry in entries:
        try:
            re.compile(entry["pattern"])
            for key in ("input", "cached_input", "cache_write", "output"):
                float(entry[key])
        except (KeyError, TypeError, ValueError, re.error) as exc:
            raise ReportError(f"bad price entry {entry!r}: {exc}") from exc
    return entries


def _user_prices() -> Path | None:
    explicit = os.environ.get("TRACEIDX_PRICES")
    if explicit:
        return Path(explicit)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    path = Path(config) / "traceidx" / "prices.json"
    return path if path.is_file() else None


def prepare(con: duckdb.DuckDBPyConnection, p: ReportParams) -> None:
    """Load prices, set the parameters and define the report scope on a connection."""
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
    prices = load_prices(p.prices)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE prices (priority INTEGER, pattern VARCHAR, input DOUBLE, "
        "cached_input DOUBLE, cache_write DOUBLE, output DOUBLE)"
    )
    con.executemany(
        "INSERT INTO prices VALUES (?, ?, ?, ?, ?, ?)",
        [
            [i, e["pattern"], e["input"], e["cached_input"], e["cache_write"], e["output"]]
            for i, e in enumerate(prices)
        ],
    )
    variables: dict[str, Any] = {
        "tz": p.timezone,
        "period": p.period,
        "since": p.since.isoformat() if p.since else None,
        "until": p.until.isoformat() if p.until else None,
        "runtimes": list(p.runtimes) or None,
        "models": list(p.models) or None,
        "row_limit": p.limit,
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
    from traceidx.query import connect

    con = connect(dataset)
    frame: pl.DataFrame = run_report(con, name, params(**kwargs)).pl()
    return frame
