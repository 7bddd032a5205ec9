"""Reading the dataset: `report` (and `prices`), `sql`, `search`, `schema` and `inspect`."""

from __future__ import annotations

import argparse
import contextlib
import sys
import textwrap
from pathlib import Path
from typing import Any

from traceidx.cli.commands import EXIT_FAILED, EXIT_OK, Reply
from traceidx.cli.output import Document, Rows, cell, err, totals_row
from traceidx.cli.parser import refuse_options_that_do_not_apply
from traceidx.errors import UsageError


def _hint_unknown_models(con: Any, models: list[str] | None) -> None:
    """Say so when a --model names no model call of the dataset (the report is then empty)."""
    if not models:
        return
    known = {row[0] for row in con.execute("SELECT DISTINCT model FROM model_calls").fetchall()}
    unknown = [m for m in models if m not in known]
    if unknown:
        some = ", ".join(sorted(k for k in known if k)[:8])
        err(f"--model {', '.join(unknown)}: no model call names it; models here: {some}")


def cmd_report(args: argparse.Namespace) -> int | Reply:
    from traceidx.analysis.reports import params

    refuse_options_that_do_not_apply(args)
    p = params(
        since=args.since,
        until=args.until,
        timezone=args.timezone,
        runtimes=args.runtime,
        models=args.model,
        period=args.period,
        limit=args.limit,
        prices=args.prices,
        group_by=args.group_by,
    )
    output = getattr(args, "output", None)  # only `report` has --output
    rollup = args.name == "usage" and output is None and isinstance(args.dataset, Path)
    stamp: list[int] | None = None
    if rollup:  # from the dataset's usage rollup when it can answer: no data library loads
        from traceidx.analysis.rollup import answer
        from traceidx.analysis.summary import manifest_stamp

        found = answer(args.dataset, p)
        if found is not None:
            return Reply(_report_rows(args.name, p, *found))
        stamp = manifest_stamp(args.dataset)  # the manifest `connect` is about to read
    from traceidx.analysis.query import connect
    from traceidx.analysis.reports import run_report

    con = connect(args.dataset)
    _hint_unknown_models(con, args.model)
    if args.name == "html":
        return _write_html(con, p, output)
    if output is not None:
        raise UsageError("--output is for `report html`; other reports write to stdout")
    rel = run_report(con, args.name, p)
    columns, data = list(rel.columns), rel.fetchall()
    if rollup:
        _write_rollup(args.dataset, p, con, stamp)
    return Reply(_report_rows(args.name, p, columns, data))


def _report_rows(name: str, p: Any, columns: list[str], data: list[tuple[Any, ...]]) -> Rows:
    """A report's rows as every format shows them (a usage report with its totals row)."""
    from traceidx.analysis.reports import outcome_footnote, report_detail, report_summary

    total = totals_row(columns, data, "total") if name == "usage" else None
    note = outcome_footnote(columns, data) if name == "models" else None
    span = f"{p.since or 'all time'} … {p.until or 'now'}"
    return Rows(
        columns,
        data,
        total,
        report_detail(name),
        title=f"{name}: {report_summary(name)}",
        heading=(f"({span}, timezone {p.timezone})", ""),
        notes=(note,) if note else (),
    )


def _write_rollup(dataset: Path, p: Any, con: Any, stamp: list[int] | None) -> None:
    """Write the dataset's usage rollup after a usage report ran its SQL in the rollup's
    timezone with the default prices, unless a current one is there (so that the next report
    answers from it); a dataset folder this user cannot write is left as it is."""
    import os

    from traceidx.analysis import rollup
    from traceidx.analysis.reports import local_timezone

    if p.prices is not None or p.timezone != local_timezone() or stamp is None:
        return
    if not os.access(dataset, os.W_OK) or rollup.usable(dataset, p.timezone):
        return
    with contextlib.suppress(OSError):
        rollup.write(dataset, con, stamp)


def _write_html(con: Any, p: Any, output: Path | None) -> int:
    from traceidx.analysis.htmlreport import write

    if output is None:
        raise UsageError("report html needs --output FILE (the HTML file to write)")
    path = write(con, p, output.expanduser())
    sys.stdout.write(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)\n")
    return EXIT_OK


def cmd_sql(args: argparse.Namespace) -> int | Reply:
    import duckdb

    from traceidx.analysis.query import connect, rows

    query = args.query if args.query != "-" else sys.stdin.read()
    con = connect(args.dataset, prices=args.prices)
    try:
        columns, data = rows(con, query)
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0]
        err(f"query failed: {first}; see `traceidx schema` for tables and columns")
        return EXIT_FAILED
    return Reply(Rows(columns, data))


def cmd_search(args: argparse.Namespace) -> Reply:
    from datetime import date

    from traceidx.analysis.query import connect
    from traceidx.analysis.search import COLUMNS, Query, search

    def day(flag: str, value: str | None) -> date | None:
        try:
            return date.fromisoformat(value) if value else None
        except ValueError:
            raise UsageError(f"{flag} {value!r} is not a date (YYYY-MM-DD)") from None

    q = Query(
        " ".join(args.text),
        regex=args.regex,
        runtimes=tuple(args.runtime or ()),
        roles=tuple(args.role or ()),
        since=day("--since", args.since),
        until=day("--until", args.until),
        limit=args.limit,
    )
    q.check()
    con = connect(args.dataset)
    found = search(con, q)
    # a table for reading: when, where, what matched, and the record to inspect
    shown = ["time", "runtime", "project", "snippet", "record_id"]
    at = {c: COLUMNS.index(c) for c in COLUMNS}
    table = [
        (
            r[at["occurred_at"]].strftime("%Y-%m-%d %H:%M") if r[at["occurred_at"]] else None,
            *(r[at[c]] for c in shown[1:]),
        )
        for r in found
    ]
    return Reply(Rows(list(COLUMNS), found, human=Rows(shown, table)))


def cmd_schema(args: argparse.Namespace) -> Reply:
    from traceidx.analysis.query import describe_views, view_summary
    from traceidx.domain.columns import COLUMN_DOCS, DERIVED_COLUMNS
    from traceidx.tables.schema import table_schema

    # tables: the derived Arrow schema; views: DuckDB's description of the shipped view SQL
    out: list[tuple[str, str, str, str, str]] = []
    for table, docs in COLUMN_DOCS.items():
        for field in table_schema(table):
            out.append(("table", table, field.name, str(field.type), docs.get(field.name, "")))
    views = describe_views()
    for view, columns in views.items():
        docs = {**COLUMN_DOCS.get(view, {}), **DERIVED_COLUMNS.get(view, {})}
        for name, kind in columns:
            out.append(("view", view, name, kind, docs.get(name, "")))

    def text(width: int | None) -> str:
        """The tables and views, one column a line, its meaning wrapped to `width`."""
        lines: list[str] = []
        for kind_of, heading in (("table", "tables"), ("view", "views")):
            lines.append(f"{heading}:")
            for name in dict.fromkeys(row[1] for row in out if row[0] == kind_of):
                about = f"{name}  — {view_summary(name)}" if kind_of == "view" else name
                lines += textwrap.wrap(about, width, subsequent_indent="    ") if width else [about]
                for k, t, column, kind, doc in out:
                    if k == kind_of and t == name:
                        lines += _column_lines(column, kind, doc, width)
        return "".join(line + "\n" for line in lines)

    header = ["kind", "table", "column", "type", "description"]
    return Reply(Rows(header, list(out), human=text))


def _column_lines(column: str, kind: str, doc: str, width: int | None) -> list[str]:
    """A column of `schema` as people read it: name, type and meaning, the meaning wrapped
    beside them, or under them where the width leaves it too little room."""
    short = kind if len(kind) <= 40 else kind[:39] + "…"
    lead = f"  {column:<20} {short:<41} "
    if width is None or width - len(lead) >= 20:
        room = None if width is None else width - len(lead)
        wrapped = textwrap.wrap(doc, room) if room and doc else [doc]
        starts = [lead, *(" " * len(lead) for _ in wrapped[1:])]
        return [(start + part).rstrip() for start, part in zip(starts, wrapped, strict=True)]
    head = f"  {column} "
    room = max(width - len(head), 10)
    short = kind if len(kind) <= room else kind[: room - 1] + "…"
    lines = [f"{head}{short}"]
    return lines + (textwrap.wrap(doc, width, initial_indent=" " * 4, subsequent_indent=" " * 4))


def cmd_inspect(args: argparse.Namespace) -> int | Reply:
    from traceidx.analysis.evidence import holds, inspect_record
    from traceidx.analysis.query import connect

    con = connect(args.dataset)
    info = inspect_record(con, args.record_id)
    if info is None:
        err(f"record {args.record_id} is not in {args.dataset}; list ids with `traceidx sql`")
        return EXIT_FAILED
    lines = [
        f"{name}: {cell(value)}\n"
        for name, value in info.items()
        if name != "content" and (name != "json_path" or value is not None)
    ]
    if info["content"] is not None:
        lines.append(f"content:\n{info['content']}\n")
    return Reply(Document(info, "".join(lines)), EXIT_OK if holds(info) else EXIT_FAILED)
