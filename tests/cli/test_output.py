"""Human output: tables and markdown fit 100 columns, numbers read well, JSON and CSV stay raw.

The fitting is checked as a property over arbitrary result sets, and every report is run as
a user runs it (a `traceidx report` subprocess) on the demo dataset, narrow and `--wide`.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.files import traceidx_cli
from traceidx.analysis.query import connect
from traceidx.analysis.reports import REPORTS, params, report_detail, run_report
from traceidx.analysis.rows import holds_ids
from traceidx.cli.output import (
    DEFAULT_WIDTH,
    Document,
    emit,
    is_key_column,
    print_rows,
    readable,
)


def printed(*args: Any, **kwargs: Any) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        print_rows(*args, **kwargs)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("value", "column", "shown"),
    [
        (1234567, "total", "1,234,567"),
        (0, "loops", "0"),
        (Decimal("4200"), "input", "4,200"),
        (12.3456, "cost_usd", "12.35"),
        (1234.5, "cost_per_loop_usd", "1,234.50"),
        (0.0031, "cost_usd", "<0.01"),
        (0.0, "cost_usd", "0.00"),
        (0.78294, "cache_hit_share", "0.783"),
        (15865.0, "tokens_per_loop_median", "15,865"),
        (2.114, "tool_calls_per_loop", "2.11"),
        (None, "cost_usd", ""),
        (True, "failed", "True"),
        ("gpt-5.5", "model", "gpt-5.5"),
    ],
)
def test_values_read_with_separators_and_costs_to_the_cent(
    value: Any, column: str, shown: str
) -> None:
    assert readable(value, column) == shown


names = st.from_regex(r"[a-z][a-z0-9]{0,7}(_[a-z0-9]{1,8}){0,3}", fullmatch=True)
values = st.one_of(
    st.none(),
    st.integers(-(10**15), 10**15),
    st.floats(-1e9, 1e9, allow_nan=False),
    st.text(max_size=120).filter(lambda t: "\n" not in t and "\r" not in t),
)


@st.composite
def result_sets(draw: st.DrawFn) -> tuple[list[str], list[tuple[Any, ...]]]:
    columns = draw(st.lists(names, min_size=1, max_size=18, unique=True))
    rows = draw(st.lists(st.tuples(*[values for _ in columns]), max_size=6))
    return columns, rows


@settings(max_examples=150, deadline=None)
@given(result_sets(), st.sampled_from(["table", "markdown"]))
def test_human_formats_fit_100_columns_and_name_what_they_hide(
    result: tuple[list[str], list[tuple[Any, ...]]], fmt: str
) -> None:
    columns, rows = result
    text = printed(columns, rows, fmt)
    lines = text.splitlines()
    first = max(len(readable(v, columns[0])) for v in [columns[0], *(r[0] for r in rows)])
    body = [line for line in lines if not line.startswith("(") and not line.startswith("_(")]
    assert all(len(line) <= max(DEFAULT_WIDTH, first + 4) for line in body), text
    shown = markdown_columns(text) if fmt == "markdown" else table_columns(text)
    assert shown == [c for c in columns if c in shown]
    footer = text.split("hidden:")[-1].replace("\n", " ") if "hidden:" in text else ""
    for column in set(columns) - set(shown):
        assert column in footer
    wide = printed(columns, rows, fmt, wide=True)
    assert (markdown_columns(wide) if fmt == "markdown" else table_columns(wide)) == columns
    # a table that fits whole is not wrapped or clipped (markdown pads no cell, so its lines
    # say nothing of the widths it fits)
    fits = all(len(line) <= DEFAULT_WIDTH for line in wide.splitlines() if line[:1] != "(")
    if fmt == "table" and fits:
        assert text == wide


def markdown_columns(text: str) -> list[str]:
    if text.startswith("**row 1**"):  # rows as lists: the first one's items
        block = text.split("\n\n")[1]
        return [line[4:].split("**")[0] for line in block.splitlines() if line.startswith("- **")]
    return [c.strip() for c in text.splitlines()[0].strip("|").split("|")]


@settings(max_examples=60, deadline=None)
@given(result_sets())
def test_json_and_csv_stay_raw(result: tuple[list[str], list[tuple[Any, ...]]]) -> None:
    columns, rows = result
    data = json.loads(printed(columns, rows, "json"))
    ids = [holds_ids(c) for c in columns]
    assert [list(d.values()) for d in data] == [
        [str(v) if i and type(v) is int else v for i, v in zip(ids, r, strict=True)] for r in rows
    ]
    table = list(csv.reader(io.StringIO(printed(columns, rows, "csv"))))
    assert table[0] == columns
    assert len(table) == len(rows) + 1


def test_detail_columns_are_columns_of_their_report(demo_dataset: Path) -> None:
    con = connect(demo_dataset)
    for name in REPORTS:
        columns = run_report(con, name, params(timezone="UTC")).columns
        assert set(report_detail(name)) <= set(columns), name


def table_columns(text: str) -> list[str]:
    """The column names of a printed table, its names wrapped over lines or not (or of its
    rows printed as blocks)."""
    lines = text.splitlines()
    if any(line.startswith("-- row 1 ") for line in lines):
        return block_columns(text)
    rule = next(i for i, line in enumerate(lines) if line and set(line) <= {"-", " "})
    spans, start = [], 0
    for dashes in lines[rule].split("  "):
        spans.append((start, start + len(dashes)))
        start += len(dashes) + 2
    blank = max([i for i in range(rule) if not lines[i].strip()], default=-1)
    head = lines[blank + 1 : rule]
    names = ["".join(line[a:b].strip() for line in head) for a, b in spans]
    return [n for n in names if n]


def block_columns(text: str) -> list[str]:
    """The column names of the first row of a table printed as blocks."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("-- row 1 "))
    names = []
    for line in lines[start + 1 :]:
        if line.startswith(("-- ", "(")):
            break
        if line and not line.startswith(" "):
            names.append(line.split()[0])
    return names


@pytest.mark.parametrize("name", REPORTS)
def test_every_report_fits_100_columns_unless_wide(demo_dataset: Path, name: str) -> None:
    base = ("report", name, "--dataset", str(demo_dataset), "--timezone", "UTC")
    narrow = traceidx_cli(*base)
    assert narrow.returncode == 0, narrow.stderr
    assert all(len(line) <= DEFAULT_WIDTH for line in narrow.stdout.splitlines())
    wide = traceidx_cli(*base, "--wide")
    raw = json.loads(traceidx_cli(*base, "--format", "json").stdout)
    if raw:
        assert table_columns(wide.stdout) == list(raw[0])
        shown = table_columns(narrow.stdout)
        assert shown == [c for c in raw[0] if c in shown]
        footer = narrow.stdout.split("hidden:")[-1].replace("\n", " ")
        for column in set(raw[0]) - set(shown):
            assert column in footer


def test_usage_table_shows_separators_and_cents(demo_dataset: Path) -> None:
    base = ("report", "usage", "--dataset", str(demo_dataset), "--timezone", "UTC")
    rows = json.loads(traceidx_cli(*base, "--format", "json").stdout)
    table = traceidx_cli(*base).stdout
    total = sum(r["total"] or 0 for r in rows)
    cost = sum(r["cost_usd"] or 0 for r in rows)
    total_line = next(line for line in table.splitlines() if line.startswith("total"))
    assert f"{total:,}" in total_line.split()
    assert readable(cost, "cost_usd") in total_line.split()


def test_key_columns_are_never_clipped_and_paths_keep_their_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "90")
    columns = ["model", "working_directory", "note", "input", "output", "cost_usd"]
    model = "claude-opus-4-5-20251101-with-a-long-suffix"
    path = "/home/dev/projects/a-rather-long-repository-name/src/module"
    rows = [(model, path, "x" * 80, 1234567, 7654321, 12.5)]
    out = printed(columns, rows, "table")
    assert model in out  # whole, although the line is then wider than asked
    shown = next(w for w in out.split() if w.startswith("…/") or w.startswith("…a"))
    assert path.endswith(shown[1:]) and "/src/module" in shown  # the path's end shows
    assert "12.50" in out  # the cost outlasts the other numbers
    assert "hidden:" in out and "output" in out.split("hidden:")[-1]


def test_columns_is_honoured_when_piped(demo_dataset: Path) -> None:
    base = ("report", "usage", "--dataset", str(demo_dataset), "--timezone", "UTC")
    rows = json.loads(traceidx_cli(*base, "--format", "json").stdout)
    for width in (80, 120):
        table = traceidx_cli(*base, env={"COLUMNS": str(width)}).stdout
        lines = table.splitlines()
        assert all(len(line) <= width for line in lines), width
        assert "cost_usd" in table_columns(table), width
        for model in {r["model"] for r in rows if r["model"]}:
            assert model in table, (width, model)


def test_json_never_carries_a_number_a_double_rounds() -> None:
    """Ids (``*_id``, ``*_ids``, ``id``, in structs too) are strings whatever their value, and
    so is any other integer beyond 2**53 - 1; smaller numbers stay numbers."""
    big = 2**63 - 25
    columns = ["record_id", "record_ids", "id", "n", "total", "semantic", "ratio"]
    rows = [(big, [big, 7], 12, big, 2**53 - 1, {"child_session_id": 3, "count": 4}, 0.5)]
    data = json.loads(printed(columns, rows, "json"))
    assert data == [
        {
            "record_id": str(big),
            "record_ids": [str(big), "7"],
            "id": "12",
            "n": str(big),
            "total": 2**53 - 1,
            "semantic": {"child_session_id": "3", "count": 4},
            "ratio": 0.5,
        }
    ]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        emit(Document({"record_id": big, "content_range": {"start": 1, "end": big}}, ""), "json")
    assert json.loads(buffer.getvalue()) == {
        "record_id": str(big),
        "content_range": {"start": 1, "end": str(big)},
    }


def test_cli_json_ids_are_strings_that_inspect_takes_back(demo_dataset: Path) -> None:
    query = (
        "SELECT record_id, record_id + 0 AS copy, [record_id] AS record_ids, source_position "
        "FROM records ORDER BY record_id DESC LIMIT 1"
    )
    base = ("--dataset", str(demo_dataset))
    done = traceidx_cli("sql", *base, "--format", "json", query)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    exact = connect(demo_dataset).execute("SELECT max(record_id) FROM records").fetchall()[0][0]
    assert exact > 2**53 and row["record_id"] == str(exact)  # exact, as the dataset holds it
    assert row["copy"] == row["record_id"] and row["record_ids"] == [row["record_id"]]
    assert isinstance(row["source_position"], int)
    for typed in (row["record_id"], f'"{row["record_id"]}"'):  # as JSON shows it, quotes too
        shown = traceidx_cli("inspect", *base, "--format", "json", typed)
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["record_id"] == row["record_id"]


@pytest.mark.parametrize("name", REPORTS)
def test_every_report_fits_a_narrow_terminal_with_its_keys_whole(
    demo_dataset: Path, name: str
) -> None:
    """At any width every line fits; the columns that tell rows apart (key columns) are shown
    whole in every row, in a table or, when they alone are too wide, as blocks of lines."""
    base = ("report", name, "--dataset", str(demo_dataset), "--timezone", "UTC")
    raw = json.loads(traceidx_cli(*base, "--format", "json").stdout)
    keys = [c for c in (raw[0] if raw else []) if is_key_column(c)]
    for width, fmt in ((60, "table"), (40, "table"), (60, "markdown")):
        done = traceidx_cli(*base, "--format", fmt, env={"COLUMNS": str(width)})
        assert done.returncode == 0, done.stderr
        long = [line for line in done.stdout.splitlines() if len(line) > width]
        assert not long, (width, fmt, long)
        shown = done.stdout.splitlines()
        joined = "".join(line.strip() for line in shown)  # a value wider than the width wraps
        for row in raw:
            for key in keys:
                value = row[key]
                if isinstance(value, str) and len(value) <= width - 4:
                    assert any(value in line for line in shown), (width, fmt, key, value)
                elif isinstance(value, str):
                    assert value in joined, (width, fmt, key, value)


def test_prices_tell_a_model_of_two_providers_apart(demo_dataset: Path) -> None:
    base = ("prices", "--dataset", str(demo_dataset), "--timezone", "UTC")
    raw = json.loads(traceidx_cli(*base, "--format", "json").stdout)
    models = [row["model"] for row in raw]
    assert len(set(models)) < len(models)  # the demo holds a model under two providers
    table = traceidx_cli(*base).stdout
    assert table_columns(table)[:2] == ["model", "provider"]
    lines = table.splitlines()
    for row in raw:
        provider = row["provider"] or "(unknown)"
        assert any(line.split()[:2] == [row["model"], provider] for line in lines if line)


def test_subagents_show_the_parent_session_whole(demo_dataset: Path) -> None:
    base = ("report", "subagents", "--dataset", str(demo_dataset), "--timezone", "UTC")
    raw = json.loads(traceidx_cli(*base, "--format", "json").stdout)
    assert raw and all(len(row["parent_session"]) > 30 for row in raw)  # too long to clip
    text = traceidx_cli(*base).stdout
    assert "parent_session" in table_columns(text)
    for row in raw:
        assert row["parent_session"] in text
    assert "…" not in "".join(line for line in text.splitlines() if line.startswith("parent"))


def test_blocks_show_every_column_but_the_detail_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    columns = ["session", "runtime", "tokens", "note"]
    rows = [("0123456789abcdef0123456789abcdef", "claude_code", 1234, "a b " * 20)]
    text = printed(columns, rows, "table", detail=["note"])
    assert all(len(line) <= 40 for line in text.splitlines()), text
    assert block_columns(text) == ["session", "runtime", "tokens"]
    assert rows[0][0] in text and "1,234" in text
    assert "hidden: note" in text
    whole = printed(columns, rows, "table")  # a long text is wrapped, not clipped
    assert " ".join(whole.split()).count("a b") == 20


def test_schema_fits_a_narrow_terminal() -> None:
    for width in (60, 100):
        done = traceidx_cli("schema", env={"COLUMNS": str(width)})
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert all(len(line) <= width for line in lines), [x for x in lines if len(x) > width]
        assert any(line.startswith("  session_id ") for line in lines)
