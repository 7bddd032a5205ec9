"""The HTML report: the shipped reports' rows as Altair charts and great-tables in one offline file.

Every number comes from the report SQL (`traceidx.analysis.reports.run_report`, the same call
`traceidx report NAME` makes, with the same parameters), so the page agrees with the batch
reports by construction. Charts are Vega-Lite specs drawn by the Vega bundle vl-convert ships,
inlined with the specs into the page: the file fetches nothing. Each report's rows are also
embedded whole as JSON (``<script type="application/json" id="traceidx-data">``) for programs.
Needs the ``html`` extra (altair, vl-convert-python, great-tables); no other command imports it.
"""

from __future__ import annotations

import functools
import html
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceidx.analysis import htmlcharts as sections
from traceidx.analysis.htmlcharts import Page, key, label
from traceidx.analysis.palette import model_colours
from traceidx.analysis.reports import ReportParams, run_report
from traceidx.analysis.rows import UNKNOWN, jsonable
from traceidx.errors import ReportError

if TYPE_CHECKING:
    import duckdb
    import polars as pl

#: the reports the page is made of (all rows embedded; charts and tables read these only)
SECTIONS = ("usage", "models", "projects", "subagents", "tools", "slowest")


def _require() -> None:
    try:
        import altair  # noqa: F401
        import great_tables  # noqa: F401
        import vl_convert  # noqa: F401
    except ImportError as exc:
        raise ReportError(
            f"report html needs the html extra ({exc.name} is missing): "
            "pip install 'traceidx[html]'"
        ) from exc


def collect(con: duckdb.DuckDBPyConnection, p: ReportParams) -> dict[str, pl.DataFrame]:
    """Each section's report rows for the scope, as `traceidx report NAME` has them."""
    return {name: run_report(con, name, p).pl() for name in SECTIONS}


def render(frames: dict[str, pl.DataFrame], p: ReportParams) -> str:
    """The whole page for the reports' rows."""
    _require()
    page = Page(colours=model_colours(_models_by_spend(frames)))
    page.parts.append(_header(frames, p))
    page.parts.append(_cards(frames))
    sections.costs(page, frames)
    sections.usage(page, frames["usage"], p.period)
    sections.models(page, frames["models"])
    sections.projects(page, frames["projects"])
    sections.subagents(page, frames["subagents"])
    sections.tools(page, frames["tools"], frames["slowest"])
    embedded = {
        name: [{k: jsonable(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]
        for name, frame in frames.items()
    }
    bundle = _bundle()
    return _PAGE.format(
        title=html.escape(_title(p)),
        css=_CSS,
        body="\n".join(page.parts),
        bundle=bundle.replace("</script", "<\\/script"),
        data=_script_json(embedded),
        specs=_script_json(page.charts),
    )


@functools.cache
def _bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (vl-convert's bundle for Altair's version)."""
    import altair as alt
    import vl_convert as vlc

    version = "_".join(alt.SCHEMA_VERSION.split(".")[:2])  # v6.4.1 -> v6_4
    # the stub asks for a snippet; without one the bundle defines vegaEmbed on window
    return vlc.javascript_bundle(None, vl_version=version)  # type: ignore[arg-type]


def write(con: duckdb.DuckDBPyConnection, p: ReportParams, output: Path) -> Path:
    """Write the page for the scope to `output` (its folder must exist; the old file is
    replaced whole), readable by its owner only, as the dataset is: it holds prompts and
    commands; returns its path."""
    _require()
    if not output.parent.is_dir():
        what = "a file" if output.parent.exists() else "no such folder"
        raise ReportError(
            f"{output.parent}: not a folder ({what}); create the folder or write the report "
            "elsewhere"
        )
    text = render(collect(con, p), p)
    partial = output.with_name(f".{output.name}.partial")
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
            os.fchmod(sink.fileno(), 0o600)  # an old partial file keeps no wider mode
            sink.write(text)
        partial.replace(output)  # a reader never sees half a page
    except OSError as exc:
        raise ReportError(f"{output}: cannot write the report ({exc.strerror or exc})") from exc
    return output


def _script_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("</", "<\\/")


def _title(p: ReportParams) -> str:
    return f"traceidx report: {p.since or 'all time'} … {p.until or 'now'}"


def _n(value: float | int | None, digits: int = 0) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"


def _total(frame: pl.DataFrame, column: str) -> Any:
    if column not in frame.columns or frame.is_empty():
        return None
    return frame.get_column(column).sum() if frame.get_column(column).count() else None


def _header(frames: dict[str, pl.DataFrame], p: ReportParams) -> str:
    usage, models, tools = frames["usage"], frames["models"], frames["tools"]
    scope = [
        f"{p.since or 'all time'} … {p.until or 'now'}",
        f"timezone {p.timezone}",
        f"by {p.period}",
        "runtimes: " + (", ".join(p.runtimes) or "all"),
        "models: " + (", ".join(p.models) or "all"),
    ]
    loops = _total(usage, "loops") or 0
    calls = tools.filter(tools["entry"] == "tool kind") if "entry" in tools.columns else tools
    cost = _total(usage, "cost_usd")
    counted = [
        f"{_n(loops)} loops",
        f"{_n(_total(usage, 'total'))} tokens",
        f"{_n(_total(calls, 'calls'))} tool calls",
        f"cost ${_n(cost, 2)} over priced loops" if cost is not None else "no priced loops",
    ]
    missing = []
    for column in [c for c in usage.columns if c.startswith("unpriced_")][:1]:
        # unpriced_loops or unpriced_calls: what the report counts as lacking a price
        unpriced = usage.filter(usage[column] > 0)
        names = sorted({str(m or UNKNOWN) for m in unpriced.get_column(key(usage))})
        if names:
            missing.append(
                f"{_n(_total(unpriced, column))} {column.removeprefix('unpriced_')} of unpriced "
                f"{key(usage)}s ({', '.join(names)}) have no cost"
            )
    if "loops_without_usage" in usage.columns:
        missing.append(f"{_n(_total(usage, 'loops_without_usage'))} loops reported no usage")
    if {"calls", "with_duration"} <= set(calls.columns):
        without = (_total(calls, "calls") or 0) - (_total(calls, "with_duration") or 0)
        missing.append(f"{_n(without)} tool calls have no duration")
    if {"calls", "with_status"} <= set(calls.columns):
        unknown = (_total(calls, "calls") or 0) - (_total(calls, "with_status") or 0)
        missing.append(f"{_n(unknown)} tool calls have no known outcome")
    if "model" in models.columns and models.get_column("model").null_count():
        missing.append("loops whose model is not recorded are shown as (unknown)")
    items = "".join(f"<li>{html.escape(m)}</li>" for m in missing)
    return (
        "<header>"
        f"<h1>{html.escape(_title(p))}</h1>"
        f'<p class="scope">{html.escape(" · ".join(scope))}</p>'
        f'<p class="counted" id="counted">Counted: {html.escape(", ".join(counted))}.</p>'
        f'<p>Missing or unknown:</p><ul class="missing" id="missing">{items}</ul>'
        "</header>"
    )


def _models_by_spend(frames: dict[str, pl.DataFrame]) -> list[str]:
    """Every model the page shows, the costliest first (then by tokens, then by name)."""
    import polars as pl

    seen: dict[str, tuple[float, int]] = {}
    usage = frames["usage"]
    if "model" in usage.columns and not usage.is_empty():
        sums = (
            label(usage, "model")
            .group_by("model")
            .agg(pl.col("cost_usd").sum(), pl.col("total").sum())
        )
        for row in sums.iter_rows(named=True):
            seen[row["model"]] = (row["cost_usd"] or 0.0, row["total"] or 0)
    models = frames["models"]
    if "model" in models.columns:
        for name in label(models, "model").get_column("model"):
            seen.setdefault(name, (0.0, 0))
    return sorted(seen, key=lambda m: (-seen[m][0], -seen[m][1], m))


def _top(frame: pl.DataFrame, column: str, value: str) -> tuple[str, float] | None:
    """The `column` value of the row group with the largest sum of `value`, and that sum."""
    import polars as pl

    if frame.is_empty() or column not in frame.columns or value not in frame.columns:
        return None
    sums = (
        label(frame, column)
        .group_by(column)
        .agg(pl.col(value).sum())
        .filter(pl.col(value) > 0)
        .sort([value, column], descending=[True, False])
    )
    return None if sums.is_empty() else (str(sums[0, column]), float(sums[0, value]))


def _cards(frames: dict[str, pl.DataFrame]) -> str:
    """The headline: total cost, tokens, sessions, the costliest model and project."""
    usage, projects = frames["usage"], frames["projects"]
    cost = _total(usage, "cost_usd")
    model = _top(usage, "model", "cost_usd")
    project = _top(projects, "project", "cost_usd")
    cards = [
        ("total cost", f"${_n(cost, 2)}" if cost is not None else "unpriced", "cost"),
        ("tokens", _n(_total(usage, "total")), "tokens"),
        ("sessions", _n(_total(projects, "sessions")), "sessions"),
        (
            "costliest model",
            f"{model[0]} · ${_n(model[1], 2)}" if model else "–",
            "model",
        ),
        (
            "costliest project",
            f"{project[0]} · ${_n(project[1], 2)}" if project else "–",
            "project",
        ),
    ]
    body = "".join(
        f'<div class="card" id="card-{name}"><span class="label">{html.escape(label)}</span>'
        f'<span class="value">{html.escape(value)}</span></div>'
        for label, value, name in cards
    )
    return f'<section class="cards" id="cards">{body}</section>'


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1000px; color: #222;
       padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; }
h2 { font-size: 1.2rem; margin-top: 2.5rem; border-bottom: 1px solid #ccc; }
header .scope, .about, .note, .caption { color: #555; }
.caption { font-size: .9rem; max-width: 760px; }
section.cards { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1.5rem 0; }
.card { flex: 1 1 150px; border: 1px solid #ddd; border-radius: 6px; padding: .6rem .8rem; }
.card .label { display: block; color: #666; font-size: .8rem; text-transform: uppercase; }
.card .value { display: block; font-size: 1.25rem; font-weight: 600; overflow-wrap: anywhere; }
.chart { margin: 1rem 0; }
.chart svg { max-width: 100%; height: auto; }
section.table { margin: 1rem 0; overflow-x: auto; }
section.table table { font-size: 12px !important; }
section.table td { white-space: nowrap; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  .chart, section.table, header { break-inside: avoid; page-break-inside: avoid; }
  h2, .about { break-after: avoid; page-break-after: avoid; }
  section.table, section.table > div { overflow: visible !important; }
  section.table table { font-size: 6.5pt !important; width: 100% !important; }
  section.table td, section.table th { white-space: normal; overflow-wrap: anywhere;
                                       padding: 2px 3px !important; }
  .vega-embed .vega-actions, .vega-embed summary { display: none !important; }
}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="traceidx">
<title>{title}</title>
<style>{css}</style>
<script>{bundle}</script>
</head>
<body>
{body}
<script type="application/json" id="traceidx-data">{data}</script>
<script type="application/json" id="traceidx-charts">{specs}</script>
<script>
const specs = JSON.parse(document.getElementById("traceidx-charts").textContent);
window.traceidxCharts = Promise.all(Object.entries(specs).map(([name, spec]) =>
  vegaEmbed("#chart-" + name, spec, {{renderer: "svg", actions: false}})));
</script>
</body>
</html>
"""
