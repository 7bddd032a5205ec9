"""The HTML report's sections: each report's rows as Altair charts, notes and great-tables.

A chart is drawn only when it has a mark to show (a bar of non-zero length); otherwise the
section says in words why there is none. Models are coloured from `palette` (one stable
colour each, the same in every chart); every other meaning is drawn in greys.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from traceidx.analysis.palette import NEUTRAL, OUTCOME_COLOURS
from traceidx.analysis.reports import stated_outcomes
from traceidx.analysis.rows import UNKNOWN

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

#: rows shown in one table (the embedded data keeps them all)
TABLE_ROWS = 15
#: chart width in CSS pixels (fits an A4 page in print)
WIDTH = 640
#: the models report's columns charted side by side (those with a value above 0)
METRICS = ("tokens_per_loop_median", "cache_hit_share", "cost_per_loop_usd", "tool_failure_rate")
OUTCOMES = ("completed", "interrupted", "failed", "no_outcome")
#: how the outcome chart's legend names an outcome
OUTCOME_LABELS = {"no_outcome": "not stated"}


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

    def note(self, text: str, name: str = "") -> None:
        """A sentence in place of (or beside) a chart; `name`: the chart it stands for."""
        attribute = f' data-instead-of="{html.escape(name)}"' if name else ""
        self.parts.append(f'<p class="note"{attribute}>{html.escape(text)}</p>')

    def caption(self, name: str, text: str) -> None:
        """What a chart's marks mean, said under it."""
        self.parts.append(
            f'<p class="caption" id="caption-{html.escape(name)}">{html.escape(text)}</p>'
        )

    def chart(self, name: str, chart: alt.TopLevelMixin) -> None:
        self.charts[name] = chart.to_dict()
        self.parts.append(f'<div class="chart" id="chart-{name}" data-chart="{name}"></div>')

    def table(self, name: str, frame: pl.DataFrame, title: str) -> None:
        self.parts.append(_table(name, frame, title))


def key(usage: pl.DataFrame) -> str:
    """What the usage rows are stacked by: the model, else the first dimension grouped by."""
    return "model" if "model" in usage.columns else usage.columns[1]


def label(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """The frame with `column` as text, a missing value shown as the unknown marker."""
    import polars as pl

    if column not in frame.columns:
        return frame
    return frame.with_columns(
        pl.col(column).cast(pl.String).fill_null(UNKNOWN).replace("", UNKNOWN)
    )


def _positive(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """The rows whose `column` holds a number above 0: those that draw a bar."""
    import polars as pl

    if column not in frame.columns or not frame.schema[column].is_numeric():
        return frame.clear()
    return frame.filter(pl.col(column).is_not_null() & (pl.col(column) > 0))


def costs(page: Page, frames: dict[str, pl.DataFrame]) -> None:
    """Cost by model and by project: the first two questions a reader has."""
    import altair as alt
    import polars as pl

    page.heading("Where the money went", "Cost by model and by project, priced per call.")
    usage, projects = frames["usage"], frames["projects"]
    for name, frame, column, title in (
        ("cost-models", usage, "model", "Cost by model (USD)"),
        ("cost-projects", projects, "project", "Cost by project (USD)"),
    ):
        if column not in frame.columns:
            page.note(f"The rows are not grouped by {column} (--group-by): no cost by it.", name)
            continue
        sums = (
            _positive(label(frame, column), "cost_usd")
            .group_by(column)
            .agg(pl.col("cost_usd").sum())
            .sort(["cost_usd", column], descending=[True, False])
            .head(TABLE_ROWS)
            .with_columns(pl.col("cost_usd").round(2).alias("label"))
        )
        if sums.is_empty():
            page.note(f"No priced calls in scope: no cost by {column} to show.", name)
            continue
        colour: Any = page.model_colour(legend=False) if column == "model" else alt.value(NEUTRAL)
        bars = (
            alt.Chart(sums)
            .mark_bar()
            .encode(
                x=alt.X("cost_usd:Q", title="USD"),
                y=alt.Y(f"{column}:N", sort="-x", title=None),
                color=colour,
                tooltip=[f"{column}:N", alt.Tooltip("cost_usd:Q", format=",.2f")],
            )
        )
        totals = bars.mark_text(align="left", dx=3).encode(
            text=alt.Text("label:Q", format="$,.2f"), color=alt.value("#222")
        )
        page.chart(
            name, (bars + totals).properties(width=WIDTH - 260, height=alt.Step(18), title=title)
        )


def usage(page: Page, rows: pl.DataFrame, period: str) -> None:
    """Spend and tokens per period, stacked by model (by the first dimension, in grey,
    when the rows are not grouped by model)."""
    import altair as alt
    import polars as pl

    unit, word = time_unit(
        rows.get_column("period").to_list() if "period" in rows.columns else [], period
    )
    stack = key(rows) if len(rows.columns) > 1 else "model"
    by = "model" if stack == "model" else f"{stack} (in grey: colours name models only)"
    page.heading(
        f"Spend and tokens by {word}",
        f"Stacked by {by}, on a time axis that keeps the gaps between active periods; tokens "
        "and costs fall in the period of each call (report usage).",
    )
    if rows.is_empty():
        page.note("No loops in scope.")
        return
    shown = label(rows, stack).filter(pl.col("period") != "")  # unknown times: named once above
    axis = alt.X(f"{unit}(period):T", title=word, axis=alt.Axis(labelOverlap=True))
    color: Any = (
        page.model_colour()
        if stack == "model"
        else alt.value(NEUTRAL)  # a dimension other than the model: no hue of its own
    )
    for name, column, title, y, empty in (
        (
            "spend",
            "cost_usd",
            f"Spend by {word} (USD)",
            alt.Y("sum(cost_usd):Q", title="USD"),
            "No priced loops in scope: no spend to chart.",
        ),
        (
            "tokens",
            "total",
            f"Tokens by {word} (input + output)",
            alt.Y("sum(total):Q", title="tokens"),
            "No loop in scope reported usage: no tokens to chart.",
        ),
    ):
        drawn = _positive(shown, column)  # a loop without usage (or price) draws nothing
        if drawn.is_empty():
            page.note(empty, name)
            continue
        page.chart(
            name,
            alt.Chart(drawn)
            .properties(width=WIDTH, height=220, title=title)
            .mark_bar(stroke="white", strokeWidth=0.5)
            .encode(
                x=axis,
                y=y,
                color=color,
                tooltip=["period:N", f"{stack}:N", "loops:Q", f"{column}:Q"],
            ),
        )
    newest = rows.tail(TABLE_ROWS)
    title = "usage rows" if len(newest) == len(rows) else f"newest {len(newest)} usage rows"
    page.table("usage", newest, title)


def models(page: Page, rows: pl.DataFrame) -> None:
    """Models side by side, and how their loops ended (with what "not stated" means)."""
    import altair as alt

    page.heading("Models side by side", "One row per model (report models).")
    if rows.is_empty():
        page.note("No loops in scope.")
        return
    shown = label(rows, "model")
    metrics: list[Any] = [m for m in METRICS if not _positive(shown, m).is_empty()]
    if not metrics:
        page.note("No model has a per-loop measure above 0 in scope: nothing to chart.", "models")
    else:
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
        legend = " : ".join(
            f"datum.label == '{o}' ? '{text}'" for o, text in OUTCOME_LABELS.items()
        )
        page.chart(
            "outcomes",
            alt.Chart(shown)
            .transform_fold(outcomes, as_=["outcome", "loops"])
            .mark_bar(stroke="#999", strokeWidth=0.5)
            .encode(
                x=alt.X("sum(loops):Q", stack="normalize", title="share of loops"),
                y=alt.Y("model:N", title=None),
                color=alt.Color(
                    "outcome:N",
                    sort=outcomes,
                    scale=alt.Scale(domain=outcomes, range=[OUTCOME_COLOURS[o] for o in outcomes]),
                    legend=alt.Legend(labelExpr=f"{legend} : datum.label"),
                ),
                tooltip=["model:N", "outcome:N", "loops:Q"],
            )
            .properties(
                width=WIDTH - 160, height=alt.Step(18), title="How each model's loops ended"
            ),
        )
        page.caption("outcomes", outcome_caption(rows))
    page.table("models", rows, "models")


def outcome_caption(rows: pl.DataFrame) -> str:
    """What "not stated" means, and which runtimes of the scope stated any outcome."""
    stating, silent = stated_outcomes(rows.columns, rows.iter_rows())
    text = (
        '"Not stated": the runtime did not write how the loop ended, and traceidx never '
        "guesses an outcome from the text or a model's stop reason. Runtimes differ in what "
        "they write: some say when a run completed, many write only interruptions and "
        "failures, so a loop that ended normally often reads as not stated."
    )
    if stating:
        text += f" In this scope, outcomes were stated by {', '.join(stating)}"
        text += f"; never by {', '.join(silent)}." if silent else "."
    elif silent:
        text += f" In this scope no runtime stated an outcome ({', '.join(silent)})."
    return text


def _bars(name: str, frame: pl.DataFrame, value: str, axis: str, title: str) -> Any:
    import altair as alt

    return (
        alt.Chart(frame)
        .mark_bar(color=NEUTRAL)
        .encode(
            x=alt.X(f"{value}:Q", title=value),
            y=alt.Y(f"{axis}:N", sort="-x", title=None),
            tooltip=[_tooltip(frame, c) for c in frame.columns[:10]],
        )
        .properties(width=WIDTH - 220, height=alt.Step(16), title=title, name=name)
    )


def _tooltip(frame: pl.DataFrame, column: str) -> Any:
    import altair as alt

    return alt.Tooltip(
        column, type="quantitative" if frame[column].dtype.is_numeric() else "nominal"
    )


def projects(page: Page, rows: pl.DataFrame) -> None:
    page.heading(
        "Top projects",
        "Per project: the repository its sessions worked in, else the working directory's "
        "last part (report projects).",
    )
    shown = _positive(label(rows, "project"), "tokens").head(TABLE_ROWS)
    if shown.is_empty():
        page.note("No project has loops with usage in scope.", "projects")
        return
    page.chart("projects", _bars("projects", shown, "tokens", "project", "Tokens by project"))
    page.table("projects", rows.head(TABLE_ROWS), f"top {len(shown)} projects")


def subagents(page: Page, rows: pl.DataFrame) -> None:
    import altair as alt
    import polars as pl

    page.heading("Subagents", "Child sessions another session delegated to (report subagents).")
    if rows.is_empty():
        page.note("No subagent sessions in scope.")
        return
    kind = "agent_type" if "agent_type" in rows.columns else "runtime"
    shown = label(label(rows, kind), "runtime")
    if kind != "runtime" and "runtime" in shown.columns:  # the runtime in words, not a hue
        shown = shown.with_columns(
            pl.format("{} ({})", pl.col(kind), pl.col("runtime")).alias(kind)
        )
    page.chart(
        "subagents",
        alt.Chart(shown)
        .mark_bar(color=NEUTRAL)
        .encode(
            x=alt.X("count():Q", title="child sessions"),
            y=alt.Y(f"{kind}:N", sort="-x", title=f"{kind} (runtime)"),
            tooltip=[f"{kind}:N", "count():Q", "sum(tokens):Q"],
        )
        .properties(width=WIDTH - 220, height=alt.Step(18), title="Child sessions by agent type"),
    )
    busiest = rows.sort(pl.col("tokens"), descending=True, nulls_last=True)
    page.table("subagents", busiest.head(TABLE_ROWS), "subagents with the most tokens")


def tools(page: Page, rows: pl.DataFrame, slowest: pl.DataFrame) -> None:
    import polars as pl

    page.heading(
        "Tools and shell programs",
        "The slowest (median duration where known) and most failing (report tools, slowest).",
    )
    if rows.is_empty():
        page.note("No tool calls in scope.")
        return
    for entry, kind, noun in (
        ("tool kind", "tool", "tool kinds"),
        ("program", "program", "shell programs"),
    ):
        of_entry = label(rows.filter(pl.col("entry") == entry), "name")
        slow = _positive(of_entry, "duration_ms_median").sort("duration_ms_median", descending=True)
        failing = _positive(of_entry, "failures").sort(
            ["failures", "calls"], descending=[True, True]
        )
        if slow.is_empty():
            page.note(f"No {noun} with a known duration in scope.", f"slow-{kind}")
        else:
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
            page.note(f"No failing {noun} in scope.", f"failing-{kind}")
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
