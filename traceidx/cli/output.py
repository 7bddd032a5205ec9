"""Rows as people and programs read them: fitted tables, markdown, CSV or JSON on stdout.

The one place the output format is applied: a command hands its result (`Rows`, a result set,
or a `Document`, one structured value) to `emit` with the format the user asked for, and
`emit` alone decides what that format shows.

JSON and CSV carry the raw values; JSON writes ids (``id``, ``*_id``, ``*_ids``) and any integer
beyond 2**53 - 1 as strings, so that a reader holding numbers as doubles (JavaScript, jq before
1.7) gets them exactly. The human formats (table, markdown) show integers with
thousands separators, costs (columns ending ``_usd``) to the cent, other fractions to three
decimals, and fit a width (``COLUMNS`` when set, else the terminal's, else 100 columns):
long texts are clipped first, then the columns named as detail are hidden, then texts are
clipped further, then columns are hidden from the right, costs last; a footer names what was
hidden, and ``wide`` shows every column whole. Key columns (ids, runtime, model, provider,
project, session, parent session, tool, …) tell rows apart: they are never clipped or hidden,
so when they alone are wider than the width, each row is shown as a block of ``column value``
lines instead (every column but the detail ones, values whole, wrapped to the width). A clipped
path keeps its last parts. Titles and footers are filled to the width in both human formats.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any, Final

from traceidx.analysis.rows import UNKNOWN, jsonable, portable

#: the width the human formats fit when stdout is not a terminal
DEFAULT_WIDTH: Final = 100
#: the human formats: a table is fitted in these (where ``--wide`` applies)
FITTED: Final = ("table", "markdown")
#: the widest a text column is shown before fitting starts
_TEXT_CAP: Final = 60
#: the narrowest a clipped text column gets in the first and in the last fitting round
_TEXT_SOFT, _TEXT_HARD = 24, 10
#: how many lines a column name may take in a fitted table
_HEADER_LINES: Final = 3
#: the columns a row is read by: never clipped, never hidden (ids too, see `is_id_column`)
KEY_COLUMNS: Final = frozenset(
    {
        *("runtime", "model", "provider", "project", "session", "parent_session"),
        *("tool", "tool_name", "kind", "agent", "program"),
    }
)
#: columns holding paths: clipped from the left, so their last parts show
PATH_COLUMNS: Final = frozenset({"working_directory", "locator", "path", "git_root", "file"})


def is_key_column(column: str) -> bool:
    """Whether a table never clips or hides the column."""
    return column in KEY_COLUMNS or is_id_column(column)


def cell(value: Any) -> str:
    """A value as raw text (CSV, `inspect`): no separators, no rounding."""
    if value is None:
        return ""
    if isinstance(value, dict | list | tuple):
        return json.dumps(jsonable(value), ensure_ascii=False)
    shown = jsonable(value)
    return "" if shown is None else str(shown)


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def is_id_column(column: str) -> bool:
    """Whether a column holds ids (``*_id``, ``id``): shown as stored, to be pasted back."""
    name = column.lower()
    return name == "id" or name.endswith("_id")


def readable(value: Any, column: str = "") -> str:
    """A value as people read it: separators, costs to the cent, fractions to 3 decimals; an
    id as it is stored (no separators: `inspect` and SQL take it back as printed)."""
    if not _numeric(value) or is_id_column(column):
        return cell(value)
    if isinstance(value, Decimal):
        value = int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    if column.endswith("_usd"):
        return "<0.01" if 0 < value < 0.005 else f"{value:,.2f}"
    if value.is_integer() or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3f}" if abs(value) < 1 else f"{value:,.2f}"


def _shows_int(value: Any) -> str:
    return f"{value:,}" if type(value) is int else cell(value)


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


def terminal_width() -> int:
    """The width to fit: ``COLUMNS`` when it is set (also when stdout is piped), else the
    terminal's when stdout is one, else `DEFAULT_WIDTH`."""
    value = os.environ.get("COLUMNS", "")
    if value.isdigit() and int(value) > 0:
        return max(int(value), 40)
    if sys.stdout.isatty():
        return max(shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns, 40)
    return DEFAULT_WIDTH


@dataclass(slots=True)
class _Layout:
    """Which columns are shown, and how wide each is."""

    shown: list[int]
    widths: list[int]
    gap: int

    def width(self) -> int:
        return sum(self.widths[i] for i in self.shown) + self.gap * (len(self.shown) - 1)


def _wrap_name(name: str, width: int) -> list[str]:
    """A column name broken after its underscores into lines of at most `width` (a part
    longer than that gets a line of its own)."""
    parts = [p + "_" for p in name.split("_")]
    parts[-1] = parts[-1][:-1]
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + len(part) <= width:
            lines[-1] += part
        else:
            lines.append(part)
    return lines


def _name_width(name: str, lines: int) -> int:
    """The least width at which a column name takes at most `lines` header lines."""
    parts = name.split("_")
    width = max([len(p) + 1 for p in parts[:-1]] + [len(parts[-1])])
    while len(_wrap_name(name, width)) > lines:
        width += 1
    return width


def _fit(
    columns: Sequence[str],
    cells: list[list[str]],
    numeric: list[bool],
    width: int | None,
    detail: Sequence[str],
    header_lines: int,
    gap: int,
) -> _Layout:
    """Column widths and the columns kept so that a line fits `width` (None: everything);
    a column name may take up to `header_lines` lines."""
    data = [max([0, *(len(row[i]) for row in cells)]) for i in range(len(columns))]
    if width is None:
        return _Layout(
            list(range(len(columns))),
            [max(len(c), d) for c, d in zip(columns, data, strict=True)],
            gap,
        )
    names = [_name_width(c, header_lines) for c in columns]
    keys = [is_key_column(c) for c in columns]
    layout = _Layout(
        list(range(len(columns))),
        [
            max(n, d if numeric[i] or keys[i] else min(d, _TEXT_CAP))
            for i, (n, d) in enumerate(zip(names, data, strict=True))
        ],
        gap,
    )

    def clip_texts(floor: int) -> None:
        for i in sorted(layout.shown, key=lambda i: -layout.widths[i]):
            if layout.width() <= width:
                return
            least = max(names[i], floor)
            if not numeric[i] and not keys[i] and layout.widths[i] > least:
                layout.widths[i] = max(least, layout.widths[i] - (layout.width() - width))

    def hide(candidates: list[int]) -> None:
        for i in candidates:
            if layout.width() <= width or len(layout.shown) == 1:
                return
            layout.shown.remove(i)

    clip_texts(_TEXT_SOFT)
    hide([i for i in reversed(layout.shown) if columns[i] in detail and not keys[i]])
    clip_texts(_TEXT_HARD)
    rest = [i for i in reversed(layout.shown[1:]) if not keys[i]]
    hide([i for i in rest if not columns[i].endswith("_usd")])  # costs go last
    hide([i for i in rest if columns[i].endswith("_usd")])
    # room left over (a hidden column's, or all of it when the table is narrow) gives clipped
    # texts back their width, then unwraps names, left to right: a table that fits whole is
    # shown as `--wide` shows it
    for i in layout.shown:
        clipped = max(data[i], names[i]) - layout.widths[i]
        layout.widths[i] += max(0, min(clipped, width - layout.width()))
    for i in layout.shown:
        extra = len(columns[i]) - layout.widths[i]
        if 0 < extra <= width - layout.width():
            layout.widths[i] += extra
    return layout


def _header(columns: Sequence[str], layout: _Layout) -> list[list[str]]:
    """The header lines of a table: each column's name wrapped to its width, bottom-aligned."""
    wrapped = {i: _wrap_name(columns[i], layout.widths[i]) for i in layout.shown}
    depth = max(len(w) for w in wrapped.values())
    lines = [[""] * len(columns) for _ in range(depth)]
    for i, parts in wrapped.items():
        for row, part in enumerate(parts, start=depth - len(parts)):
            lines[row][i] = part
    return lines


def _clip(text: str, width: int, column: str = "") -> str:
    """A text cut to `width` with an ellipsis; a path keeps its end (``…/repo/src``)."""
    if len(text) <= width:
        return text
    if column in PATH_COLUMNS or (text.startswith("/") and "/" in text[1:]):
        return "…" + text[len(text) - width + 1 :]
    return text[: width - 1] + "…"


def print_rows(
    columns: list[str],
    rows: list[tuple[Any, ...]],
    fmt: str,
    total: tuple[Any, ...] | None = None,
    *,
    wide: bool = False,
    detail: Sequence[str] = (),
) -> None:
    """Print a result set as a table, Markdown, JSON (one array of objects) or CSV.

    `total` (a totals row) is shown by the human formats (table, markdown) only; they fit the
    terminal unless `wide`, hiding the `detail` columns first.
    """
    out = sys.stdout
    if fmt == "json":
        data = [{c: portable(v, c) for c, v in zip(columns, row, strict=True)} for row in rows]
        json.dump(data, out, ensure_ascii=False)
        out.write("\n")
        return
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(columns)
        writer.writerows([cell(v) for v in row] for row in rows)
        return
    shown_rows = [*rows, total] if total is not None and rows else rows
    # the value types of each column, to pick its alignment and formatter once
    kinds = [{type(v) for v in column} - {type(None)} for column in zip(*rows, strict=True)]
    kinds = kinds or [set() for _ in columns]
    numeric = [
        bool(k) and all(issubclass(t, int | float | Decimal) and t is not bool for t in k)
        for k in kinds
    ]
    shows = [
        cell if is_id_column(c) else _shows_int if k == {int} else partial(readable, column=c)
        for k, c in zip(kinds, columns, strict=True)
    ]
    cells = [[show(v) for show, v in zip(shows, row, strict=True)] for row in shown_rows]
    unknown = [is_key_column(c) and not is_id_column(c) for c in columns]
    for raw, shown_cells in zip(rows, cells, strict=False):  # data rows, not the totals row
        for i, value in enumerate(raw):
            if value is None and unknown[i]:
                shown_cells[i] = UNKNOWN
    markdown = fmt == "markdown"
    limit = None if wide else terminal_width() - (4 if markdown else 0)
    layout = _fit(
        columns,
        cells,
        numeric,
        limit,
        detail,
        1 if markdown else _HEADER_LINES,
        3 if markdown else 2,
    )
    blocks = limit is not None and layout.width() > limit  # the key columns alone do not fit
    if blocks:  # a block has room for every column but the detail ones
        layout.shown = [i for i, c in enumerate(columns) if c not in detail or is_key_column(c)]
    shown = layout.shown
    hidden = [columns[i] for i in range(len(columns)) if i not in shown]
    footer = f"{len(rows):,} row{'s' if len(rows) != 1 else ''}"
    if hidden:
        footer += f"; hidden: {', '.join(hidden)} (--wide shows every column)"
    if blocks:
        assert limit is not None
        totals = len(rows) if total is not None and rows else None
        out.write(_blocks(columns, cells, shown, limit, totals, markdown))
        out.write(_footer(footer, limit, markdown))
        return

    def fields(values: Sequence[str]) -> list[str]:
        return [_clip(values[i].replace("\n", " "), layout.widths[i], columns[i]) for i in shown]

    if markdown:
        out.write("| " + " | ".join(fields(columns)) + " |\n")
        out.write("|" + "|".join("---:" if numeric[i] else "---" for i in shown) + "|\n")
        for index, row in enumerate(cells):
            values = fields(row)
            if total is not None and index == len(rows):
                values = [f"**{v}**" if v else v for v in values]
            out.write("| " + " | ".join(v.replace("|", "\\|") for v in values) + " |\n")
    else:

        def line(values: Sequence[str]) -> str:
            padded = [
                v.rjust(layout.widths[i]) if numeric[i] else v.ljust(layout.widths[i])
                for v, i in zip(fields(values), shown, strict=True)
            ]
            return "  ".join(padded).rstrip() + "\n"

        rule = "  ".join("-" * layout.widths[i] for i in shown) + "\n"
        for names in _header(columns, layout):
            out.write(line(names))
        out.write(rule)
        for index, row in enumerate(cells):
            if total is not None and index == len(rows):
                out.write(rule)
            out.write(line(row))
    if not markdown or hidden:
        out.write(_footer(footer, limit, markdown))


def _footer(footer: str, width: int | None, markdown: bool) -> str:
    """The line(s) under a table: how many rows, and what was hidden."""
    text = f"_({footer})_" if markdown else f"({footer})"
    return ("\n" if markdown else "") + (textwrap.fill(text, width) if width else text) + "\n"


def _blocks(
    columns: Sequence[str],
    cells: list[list[str]],
    shown: list[int],
    width: int,
    totals: int | None,
    markdown: bool,
) -> str:
    """Rows as blocks of ``column value`` lines (Markdown: a list per row), each value whole
    and wrapped to `width`: for a table whose key columns alone are wider than `width`."""
    label = max(len(columns[i]) for i in shown)
    lines: list[str] = []
    for index, row in enumerate(cells):
        name = "total" if index == totals else f"row {index + 1}"
        if markdown:
            lines += [f"**{name}**", ""]
        else:
            lines.append(f"-- {name} ".ljust(width, "-"))
        for i in shown:
            lead = f"- **{columns[i]}**: " if markdown else f"{columns[i]:<{label}}  "
            indent = "  " if markdown else " " * (label + 2)
            value = row[i].replace("\n", " ")
            under = "  " if markdown else "    "
            if len(lead) + len(value) > width >= len(under) + len(value):
                lines += [lead.rstrip(), under + value]  # whole, under its name
                continue
            room = max(width - len(lead), 10)
            wrapped = textwrap.wrap(value, room, break_on_hyphens=False) or [""]
            lines.append((lead + wrapped[0]).rstrip())
            lines += [indent + part for part in wrapped[1:]]
        if markdown:
            lines.append("")
    return "".join(line + "\n" for line in lines)


#: a text that fits a width (None: ``--wide``, every line whole)
Text = Callable[[int | None], str]


@dataclass(slots=True)
class Rows:
    """A result set: its columns and rows, and what the human formats (table, markdown) add
    or show instead. JSON and CSV carry the columns and rows only."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    #: a totals row, shown by the human formats below the rows
    total: tuple[Any, ...] | None = None
    #: the columns a fitted table hides first
    detail: Sequence[str] = ()
    #: a paragraph the human formats print first, filled to the width of a fitted table
    title: str | None = None
    #: lines the human formats print (as they are) before the rows
    heading: Sequence[str] = ()
    #: what the human formats show instead: other rows (fewer columns, made for reading), or a
    #: text
    human: Rows | Text | None = None
    #: lines the human formats print after the rows: what a column means, filled to the width
    notes: Sequence[str] = ()


@dataclass(slots=True)
class Document:
    """One structured result: JSON for ``--format json`` (indented by `indent`), its `text`
    for every other format."""

    data: dict[str, Any]
    text: str
    indent: int | None = None


Result = Rows | Document


def emit(result: Result, fmt: str, *, wide: bool = False) -> None:
    """Print a command's result on stdout in the format the user asked for."""
    out = sys.stdout
    if isinstance(result, Document):
        if fmt == "json":
            json.dump(portable(result.data), out, ensure_ascii=False, indent=result.indent)
            out.write("\n")
        else:
            out.write(result.text)
        return
    shown = result
    if fmt in FITTED:
        room = None if wide else terminal_width()
        if result.human is not None and not isinstance(result.human, Rows):
            out.write(result.human(room))
            return
        if result.title is not None:  # (a line break in a Markdown paragraph is a space)
            out.write((textwrap.fill(result.title, room) if room else result.title) + "\n")
        for line in result.heading:
            out.write(line + "\n")
        shown = result.human or result
    print_rows(shown.columns, shown.rows, fmt, shown.total, wide=wide, detail=shown.detail)
    if fmt in FITTED and result.rows:
        room = None if wide else terminal_width()
        for note in result.notes:
            text = textwrap.fill(note, room) if room else note
            out.write(text + "\n" if fmt == "table" else f"\n{text}\n")  # Markdown: a paragraph


def err(message: str) -> None:
    """One line on stderr: where, what, and the next step."""
    sys.stderr.write(f"traceidx: {message}\n")
