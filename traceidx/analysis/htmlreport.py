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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceidx.analysis.reports import ReportParams, run_report
from traceidx.analysis.rows import UNKNOWN as OUTPUT_UNKNOWN
from traceidx.analysis.rows import jsonable
from traceidx.errors import ReportError

if TYPE_CHECKING:
    import altair as alt
    import duckdb
    import polars as pl

#: the reports the page is made of (all rows embedded; charts and tables read these only)
SECTIONS = ("usage", "models", "projects", "subagents", "tools", "slowest")
#: rows shown in one table (the embedded data keeps them all)
TABLE_ROWS = 15
#: chart width in CSS pixels (fits an A4 page in print)
WIDTH = 640
UNKNOWN = OUTPUT_UNKNOWN
#: the models report's columns charted side by side (those present and not all empty)
METRICS = ("tokens_per_loop_median", "cache_hit_share", "cost_per_loop_usd", "tool_failure_rate")
OUTCOMES = ("completed", "interrupted", "failed", "no_outcome")
#: the model colours, in order of spend (Tableau 20); further models get golden-angle hues
PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a",
    "#d62728", "#ff9896", "#9467bd", "#c5b0d5",
)  # fmt: skip


def model_colours(names: list[str]) -> dict[str, str]:
    """One fixed colour per model for every chart of the page (`names` in order of spend):
    distinct for the first 20, then distinct hues of the golden angle."""
    out = {}
    for index, name in enumerate(names):
        if index < len(PALETTE):
            out[name] = PALETTE[index]
        else:
            out[name] = f"hsl({(index * 137.508) % 360:.0f}, 55%, 45%)"
    return out


def time_unit(periods: list[str], period: str) -> tuple[str, str]:
    """The time unit a chart of periods uses (Vega-Lite timeUnit, and its word): the report's
    own period when it is week or month; for days, days up to two months of span, weeks up to
    two years, months beyond."""
    if period == "week":
        return "yearweek", "week"
    if period == "month":
        return "yearmonth", "month"
    dates = sorted(p for p in periods if p)
    if not dates:
        return "yearmonthdate", "day"
    from datetime import date

    span = (date.fromisoformat(dates[-1][:10]) - date.fromisoformat(dates[0][:10])).days
    if span <= 62:
        return "yearmonthdate", "day"
    if span <= 730:
        return "yearweek", "week"
    return "yearmonth", "month"


@dataclass
class Page:
    """What the page shows, in order: sections of prose, charts and tables; `colours` is the
    one colour scale every chart colours models by."""

    parts: list[str] = field(default_factory=list)
    charts: dict[str, dict[str, Any]] = field(default_factory=dict)
    colours: dict[str, str] = field(default_factory=dict)

    def model_colour(self, field_name: str = "model", legend: bool = True) -> Any:
        """The colour channel of a chart coloured by model, on the page's shared scale."""
        import altair as alt

        scale = alt.Scale(domain=list(self.colours), range=list(self.colours.values()))
        return alt.Color(
            f"{field_name}:N", scale=scale, title="model", legend=alt.Legend() if legend else None
        )

    def heading(self, text: str, about: str = "") -> None:
        self.parts.append(f"<h2>{html.escape(text)}</h2>")
        if about:
            self.parts.append(f'<p class="about">{html.escape(about)}</p>')

    def note(self, text: str) -> None:
        self.parts.append(f'<p class="note">{html.escape(text)}</p>')

    def chart(self, name: str, chart: alt.TopLevelMixin) -> None:
        self.charts[name] = chart.to_dict()
        self.parts.append(f'<div class="chart" id="chart-{name}" data-chart="{name}"></div>')

    def table(self, name: str, frame: pl.DataFrame, title: str) -> None:
        self.parts.append(_table(name, frame, title))


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
    _costs(page, frames)
    _usage(page, frames["usage"], p)
    _models(page, frames["models"])
    _projects(page, frames["projects"])
    _subagents(page, frames["subagents"])
    _tools(page, frames["tools"], frames["slowest"])
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
        names = sorted({str(m or UNKNOWN) for m in unpriced.get_column(_key(usage))})
        if names:
            missing.append(
                f"{_n(_total(unpriced, column))} {column.removeprefix('unpriced_')} of unpriced "
                f"{_key(usage)}s ({', '.join(names)}) have no cost"
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
            _label(usage, "model")
            .group_by("model")
            .agg(pl.col("cost_usd").sum(), pl.col("total").sum())
        )
        for row in sums.iter_rows(named=True):
            seen[row["model"]] = (row["cost_usd"] or 0.0, row["total"] or 0)
    models = frames["models"]
    if "model" in models.columns:
        for name in _label(models, "model").get_column("model"):
            seen.setdefault(name, (0.0, 0))
    return sorted(seen, key=lambda m: (-seen[m][0], -seen[m][1], m))


def _top(frame: pl.DataFrame, key: str, value: str) -> tuple[str, float] | None:
    """The key of the row group with the largest sum of `value`, and that sum."""
    import polars as pl

    if frame.is_empty() or key not in frame.columns or value not in frame.columns:
        return None
    sums = (
        _label(frame, key)
        .group_by(key)
        .agg(pl.col(value).sum())
        .filter(pl.col(value) > 0)
        .sort([value, key], descending=[True, False])
    )
    return None if sums.is_empty() else (str(sums[0, key]), float(sums[0, value]))


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


def _costs(page: Page, frames: dict[str, pl.DataFrame]) -> None:
    """Cost by model and by project: the first two questions a reader has."""
    import altair as alt
    import polars as pl

    page.heading("Where the money went", "Cost by model and by project, priced per call.")
    usage, projects = frames["usage"], frames["projects"]
    drawn = False
    for name, frame, key, title in (
        ("cost-models", usage, "model", "Cost by model (USD)"),
        ("cost-projects", projects, "project", "Cost by project (USD)"),
    ):
        if key not in frame.columns or "cost_usd" not in frame.columns:
            continue
        sums = (
            _label(frame, key)
            .group_by(key)
            .agg(pl.col("cost_usd").sum())
            .filter(pl.col("cost_usd") > 0)
            .sort(["cost_usd", key], descending=[True, False])
            .head(TABLE_ROWS)
            .with_columns(pl.col("cost_usd").round(2).alias("label"))
        )
        if sums.is_empty():
            continue
        drawn = True
        colour: Any = page.model_colour(legend=False) if key == "model" else alt.value("#4e79a7")
        bars = (
            alt.Chart(sums)
            .mark_bar()
            .encode(
                x=alt.X("cost_usd:Q", title="USD"),
                y=alt.Y(f"{key}:N", sort="-x", title=None),
                color=colour,
                tooltip=[f"{key}:N", alt.Tooltip("cost_usd:Q", format=",.2f")],
            )
        )
        totals = bars.mark_text(align="left", dx=3).encode(
            text=alt.Text("label:Q", format="$,.2f"), color=alt.value("#222")
        )
        page.chart(
            name, (bars + totals).properties(width=WIDTH - 260, height=alt.Step(18), title=title)
        )
    if not drawn:
        page.note("No priced calls in scope: no cost to show.")


def _key(usage: pl.DataFrame) -> str:
    """What the usage rows are stacked by: the model, else the first dimension grouped by."""
    return "model" if "model" in usage.columns else usage.columns[1]


def _label(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    import polars as pl

    if column not in frame.columns:
        return frame
    return frame.with_columns(
        pl.col(column).cast(pl.String).fill_null(UNKNOWN).replace("", UNKNOWN)
    )


def _usage(page: Page, usage: pl.DataFrame, p: ReportParams) -> None:
    import altair as alt
    import polars as pl

    unit, word = time_unit(usage.get_column("period").to_list() if "period" in usage.columns
                           else [], p.period)  # fmt: skip
    page.heading(
        f"Spend and tokens by {word}",
        "Stacked by model, on a time axis that keeps the gaps between active periods; tokens "
        "and costs fall in the period of each call (report usage).",
    )
    if usage.is_empty():
        page.note("No loops in scope.")
        return
    key = _key(usage)
    shown = _label(usage, key).filter(pl.col("period") != "")  # unknown times: named once above
    base = alt.Chart(shown).properties(width=WIDTH, height=220)
    axis = alt.X(f"{unit}(period):T", title=word, axis=alt.Axis(labelOverlap=True))
    color = page.model_colour() if key == "model" else alt.Color(f"{key}:N", title=key)
    priced = shown.filter(pl.col("cost_usd").is_not_null())
    if priced.is_empty():
        page.note("No priced loops in scope: no spend to chart.")
    else:
        page.chart(
            "spend",
            alt.Chart(priced)
            .properties(width=WIDTH, height=220, title=f"Spend by {word} (USD)")
            .mark_bar()
            .encode(
                x=axis,
                y=alt.Y("sum(cost_usd):Q", title="USD"),
                color=color,
                tooltip=["period:N", f"{key}:N", "cost_usd:Q"],
            ),
        )
    page.chart(
        "tokens",
        base.mark_bar()
        .encode(
            x=axis,
            y=alt.Y("sum(total):Q", title="tokens"),
            color=color,
            tooltip=["period:N", f"{key}:N", "loops:Q", "total:Q"],
        )
        .properties(title=f"Tokens by {word} (input + output)"),
    )
    newest = usage.tail(TABLE_ROWS)
    title = "usage rows" if len(newest) == len(usage) else f"newest {len(newest)} usage rows"
    page.table("usage", newest, title)


def _models(page: Page, models: pl.DataFrame) -> None:
    import altair as alt

    page.heading("Models side by side", "One row per model (report models).")
    if models.is_empty():
        page.note("No loops in scope.")
        return
    shown = _label(models, "model")
    metrics: list[Any] = [m for m in METRICS if m in shown.columns and shown.get_column(m).count()]
    page.chart(
        "models",
        alt.Chart(shown)
        .transform_fold(metrics, as_=["metric", "value"])
        .transform_filter("isValid(datum.value)")
        .mark_bar()
        .encode(
            x=alt.X("value:Q", title=None),
            y=alt.Y("model:N", title=None, sort="-x"),
            color=page.model_colour(legend=False),
            tooltip=["model:N", "metric:N", "value:Q"],
        )
        .properties(width=WIDTH // 2 - 60, height=alt.Step(16))
        .facet(facet=alt.Facet("metric:N", title=None, sort=metrics), columns=2)
        .resolve_scale(x="independent"),
    )
    outcomes: list[Any] = [o for o in OUTCOMES if o in shown.columns]
    if outcomes:
        page.chart(
            "outcomes",
            alt.Chart(shown)
            .transform_fold(outcomes, as_=["outcome", "loops"])
            .mark_bar()
            .encode(
                x=alt.X("sum(loops):Q", stack="normalize", title="share of loops"),
                y=alt.Y("model:N", title=None),
                color=alt.Color("outcome:N", sort=outcomes),
                tooltip=["model:N", "outcome:N", "loops:Q"],
            )
            .properties(
                width=WIDTH - 160, height=alt.Step(18), title="How each model's loops ended"
            ),
        )
    page.table("models", models, "models")


def _bars(name: str, frame: pl.DataFrame, value: str, label: str, title: str) -> Any:
    import altair as alt

    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X(f"{value}:Q", title=value),
            y=alt.Y(f"{label}:N", sort="-x", title=None),
            tooltip=[_tooltip(frame, c) for c in frame.columns[:10]],
        )
        .properties(width=WIDTH - 220, height=alt.Step(16), title=title, name=name)
    )


def _tooltip(frame: pl.DataFrame, column: str) -> Any:
    import altair as alt

    return alt.Tooltip(
        column, type="quantitative" if frame[column].dtype.is_numeric() else "nominal"
    )


def _projects(page: Page, projects: pl.DataFrame) -> None:
    import polars as pl

    page.heading(
        "Top projects",
        "Per project: the repository its sessions worked in, else the working directory's "
        "last part (report projects).",
    )
    shown = _label(projects, "project").filter(pl.col("tokens").is_not_null()).head(TABLE_ROWS)
    if shown.is_empty():
        page.note("No project has loops with usage in scope.")
        return
    page.chart("projects", _bars("projects", shown, "tokens", "project", "Tokens by project"))
    page.table("projects", projects.head(TABLE_ROWS), f"top {len(shown)} projects")


def _subagents(page: Page, subagents: pl.DataFrame) -> None:
    import altair as alt
    import polars as pl

    page.heading("Subagents", "Child sessions another session delegated to (report subagents).")
    if subagents.is_empty():
        page.note("No subagent sessions in scope.")
        return
    kind = "agent_type" if "agent_type" in subagents.columns else "runtime"
    shown = _label(subagents, kind)
    page.chart(
        "subagents",
        alt.Chart(shown)
        .mark_bar()
        .encode(
            x=alt.X("count():Q", title="child sessions"),
            y=alt.Y(f"{kind}:N", sort="-x", title=kind),
            color=alt.Color("runtime:N"),
            tooltip=[f"{kind}:N", "runtime:N", "count():Q", "sum(tokens):Q"],
        )
        .properties(width=WIDTH - 220, height=alt.Step(18), title="Child sessions by agent type"),
    )
    busiest = subagents.sort(pl.col("tokens"), descending=True, nulls_last=True)
    page.table("subagents", busiest.head(TABLE_ROWS), "subagents with the most tokens")


def _tools(page: Page, tools: pl.DataFrame, slowest: pl.DataFrame) -> None:
    import polars as pl

    page.heading(
        "Tools and shell programs",
        "The slowest (median duration where known) and most failing (report tools, slowest).",
    )
    if tools.is_empty():
        page.note("No tool calls in scope.")
        return
    for entry, kind, noun in (
        ("tool kind", "tool", "tool kinds"),
        ("program", "program", "shell programs"),
    ):
        rows = _label(tools.filter(pl.col("entry") == entry), "name")
        slow = rows.filter(pl.col("duration_ms_median").is_not_null()).sort(
            "duration_ms_median", descending=True
        )
        failing = rows.filter(pl.col("failures") > 0).sort(
            ["failures", "calls"], descending=[True, True]
        )
        if not slow.is_empty():
            page.chart(
                f"slow-{kind}",
                _bars(
                    f"slow-{kind}",
                    slow.head(TABLE_ROWS),
                    "duration_ms_median",
                    "name",
                    f"Slowest {noun} (median milliseconds)",
                ),
            )
        if failing.is_empty():
            page.note(f"No failing {noun} in scope.")
        else:
            page.chart(
                f"failing-{kind}",
                _bars(
                    f"failing-{kind}",
                    failing.head(TABLE_ROWS),
                    "failures",
                    "name",
                    f"Most failing {noun}",
                ),
            )
            page.table(f"failing-{kind}", failing.head(TABLE_ROWS), f"most failing {noun}")
    if not slowest.is_empty():
        page.table("slowest", slowest.head(TABLE_ROWS), "slowest tool calls")


def _table(name: str, frame: pl.DataFrame, title: str) -> str:
    import great_tables as gt
    import polars as pl

    table = gt.GT(frame, id=f"table-{name}").tab_header(title=title)
    for column, dtype in frame.schema.items():
        if dtype == pl.Boolean:
            table = table.fmt(lambda v: "yes" if v else "no", columns=column)
        elif not dtype.is_numeric():
            continue  # text as it is
        elif column.endswith("_usd"):
            table = table.fmt_currency(column, decimals=4)
        elif column.endswith(("_share", "_rate")):
            table = table.fmt_percent(column, decimals=2)
        elif column.endswith("_ratio"):
            table = table.fmt_number(column, decimals=4)
        elif dtype.is_integer():
            table = table.fmt_integer(column)
        else:
            table = table.fmt_number(column, decimals=2, drop_trailing_zeros=True)
    table = table.sub_missing(missing_text="–").opt_table_font(stack="system-ui")
    return f'<section class="table" data-table="{name}">{table.as_raw_html()}</section>'


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1000px; color: #222;
       padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; }
h2 { font-size: 1.2rem; margin-top: 2.5rem; border-bottom: 1px solid #ccc; }
header .scope, .about, .note { color: #555; }
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
