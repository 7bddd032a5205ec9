"""Rows as people and programs read them: aligned tables, markdown, CSV or JSON on stdout."""

from __future__ import annotations

import csv
import datetime as dt
import json
import sys
from decimal import Decimal
from typing import Any


def _jsonable(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list | tuple):
        return json.dumps(_jsonable(value), ensure_ascii=False)
    return str(_jsonable(value))


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def totals_row(columns: list[str], rows: list[tuple[Any, ...]], label: str) -> tuple[Any, ...]:
    """A totals row: sums of the numeric columns (empty where no row had a value)."""
    out: list[Any] = []
    for index, _ in enumerate(columns):
        values = [row[index] for row in rows if row[index] is not None]
        numeric = values and all(_numeric(v) for v in values)
        total = sum(values) if numeric else None
        out.append(round(total, 6) if isinstance(total, float) else total)
    out[0] = label
    return tuple(out)


def print_rows(
    columns: list[str], rows: list[tuple[Any, ...]], fmt: str, total: tuple[Any, ...] | None = None
) -> None:
    """Print a result set as a table, Markdown, JSON (one array of objects) or CSV.

    `total` (a totals row) is shown by the human formats (table, markdown) only.
    """
    out = sys.stdout
    if fmt == "json":
        data = [{c: _jsonable(v) for c, v in zip(columns, row, strict=True)} for row in rows]
        json.dump(data, out, ensure_ascii=False)
        out.write("\n")
        return
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(columns)
        writer.writerows([cell(v) for v in row] for row in rows)
        return
    shown = [*rows, total] if total is not None and rows else rows
    numeric = [
        any(_numeric(row[i]) for row in rows)
        and all(row[i] is None or _numeric(row[i]) for row in rows)
        for i in range(len(columns))
    ]
    cells = [[cell(v) for v in row] for row in shown]
    if fmt == "markdown":
        out.write("| " + " | ".join(columns) + " |\n")
        out.write("|" + "|".join("---:" if n else "---" for n in numeric) + "|\n")
        for index, row in enumerate(cells):
            if total is not None and index == len(rows):
                row = [f"**{v}**" if v else v for v in row]
            out.write("| " + " | ".join(v.replace("|", "\\|") for v in row) + " |\n")
        return
    widths = [len(c) for c in columns]
    for row in cells:
        widths = [min(max(w, len(v)), 60) for w, v in zip(widths, row, strict=True)]

    def line(values: list[str]) -> str:
        clipped = [
            (v if len(v) <= w else v[: w - 1] + "…") for v, w in zip(values, widths, strict=True)
        ]
        padded = [
            v.rjust(w) if n else v.ljust(w)
            for v, w, n in zip(clipped, widths, numeric, strict=True)
        ]
        return "  ".join(padded).rstrip() + "\n"

    out.write(line(columns))
    out.write("  ".join("-" * w for w in widths) + "\n")
    for index, row in enumerate(cells):
        if total is not None and index == len(rows):
            out.write("  ".join("-" * w for w in widths) + "\n")
        out.write(line(row))
    out.write(f"({len(rows)} row{'s' if len(rows) != 1 else ''})\n")
