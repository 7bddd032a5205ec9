"""The HTML report: written by `traceidx report html` and `traceidx demo`, opened in headless
Chromium (no console errors, no network, every chart drawn, a screenshot that is not blank), its
numbers equal to the batch reports' for the same scope, small enough to send."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support.browser import PRINT_WIDTH, Opened, ensure_chromium, open_page, variance
from tests.support.files import FIXTURES, WITH_CORPUS, traceidx_cli
from traceidx.analysis.htmlreport import SECTIONS
from traceidx.analysis.palette import NEUTRAL
from traceidx.analysis.reports import report_options
from traceidx.demo import RUNTIMES, write_demo
from traceidx.pipeline.job import build

#: the charts the demo's report draws (every section has data there)
DEMO_CHARTS = {
    "cost-models",
    "cost-projects",
    "spend",
    "tokens",
    "models",
    "outcomes",
    "projects",
    "subagents",
    "slow-tool",
    "failing-tool",
    "slow-program",
    "failing-program",
}
#: scopes as the command line takes them (the same flags go to `report NAME`)
SCOPES = (
    ("--timezone", "UTC", "--period", "week"),
    ("--timezone", "Asia/Tokyo", "--period", "day", "--runtime", "codex", "--runtime", "pi"),
    ("--timezone", "America/New_York", "--period", "month", "--model", "gpt-5.5"),
)
MB = 1_000_000


@pytest.fixture(scope="session")
def chromium() -> None:
    reason = ensure_chromium()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("html-demo")
    write_demo(root / "traces")
    report = build([root / "traces" / rt for rt in RUNTIMES], root / "dataset", jobs=2)
    assert report.exit_code == 0
    return root / "dataset"


def write_html(dataset: Path, output: Path, *scope: str) -> Path:
    done = traceidx_cli(
        "report", "html", "--dataset", str(dataset), "--output", str(output), *scope
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith(f"wrote {output} (") and done.stdout.endswith(" MB)\n")
    return output


def report_json(dataset: Path, name: str, *scope: str) -> list[dict[str, Any]]:
    """A report's rows in the scope of an HTML report (without the options it does not apply:
    the page's scope names them for the reports that do)."""
    pairs = list(zip(scope[::2], scope[1::2], strict=True))
    applies = report_options(name)
    kept = [x for flag, v in pairs if flag.strip("-").replace("-", "_") in applies or flag not in
            ("--period", "--group-by") for x in (flag, v)]  # fmt: skip
    done = traceidx_cli("report", name, "--dataset", str(dataset), "--format", "json", *kept)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


@pytest.fixture(scope="module")
def opened(
    demo: Path, tmp_path_factory: pytest.TempPathFactory, chromium: None
) -> Iterator[tuple[Path, Opened]]:
    page = write_html(demo, tmp_path_factory.mktemp("page") / "report.html", *SCOPES[0])
    yield page, open_page(page)


def test_the_demo_report_is_one_offline_file(opened: tuple[Path, Opened]) -> None:
    page, _ = opened
    text = page.read_text("utf-8")
    assert page.stat().st_size < 5 * MB
    # nothing is loaded from elsewhere: scripts are inline, and the markup outside them has no
    # src/href attribute, CSS import or url()
    scripts = re.findall(r"<script\b([^>]*)>", text)
    assert len(scripts) == 4 and not any("src" in attrs for attrs in scripts)
    markup = re.sub(r"(?s)<script\b[^>]*>.*?</script>", "", text)
    assert not re.search(r"<(link|img|iframe|object|embed)\b", markup)
    assert not re.search(r"\b(src|href)=|@import|url\(", markup)
    assert "@media print" in text


def test_the_demo_report_renders_in_chromium_without_errors_or_network(
    opened: tuple[Path, Opened],
) -> None:
    page, seen = opened
    assert seen.console_errors == []
    assert seen.requests == [page.resolve().as_uri()]
    assert set(seen.marks) == DEMO_CHARTS
    assert all(count > 0 for count in seen.marks.values()), seen.marks
    assert seen.screenshot.startswith(b"\x89PNG")
    assert variance(seen.screenshot) > 100  # a blank (one-colour) page has 0
    assert seen.print_width <= PRINT_WIDTH  # printed, nothing is cut off at the page's edge


def _number(text: str) -> float | None:
    """A table cell's number as shown ('12,345', '78.29%', '$0.0275'); None for a dash."""
    if text in ("–", ""):
        return None
    value = float(text.replace(",", "").replace("$", "").rstrip("%"))
    return value / 100 if text.endswith("%") else value


def _decimals(text: str) -> int:
    digits = text.rstrip("%").partition(".")[2]
    return len(digits) + (2 if text.endswith("%") else 0)


def test_the_models_table_shows_the_models_report(demo: Path, opened: tuple[Path, Opened]) -> None:
    _, seen = opened
    expected = report_json(demo, "models", *SCOPES[0])
    shown = seen.tables["models"]
    assert len(shown) == len(expected)
    compared = 0
    for cells, row in zip(shown, expected, strict=True):
        assert len(cells) == len(row)
        for text, (column, value) in zip(cells, row.items(), strict=True):
            if isinstance(value, bool) or not isinstance(value, int | float):
                assert text == (value if value not in (None, "") else "–"), column
                continue
            number = _number(text)
            assert number is not None, (column, text)
            assert abs(number - value) <= 0.5 * 10 ** -_decimals(text) + 1e-12, (column, text)
            compared += 1
    assert compared > 50


@pytest.mark.parametrize("scope", SCOPES, ids=["week-utc", "day-tokyo-codex-pi", "month-model"])
def test_the_embedded_rows_equal_the_reports(
    demo: Path, tmp_path: Path, scope: tuple[str, ...]
) -> None:
    page = write_html(demo, tmp_path / "report.html", *scope)
    text = page.read_text("utf-8")
    found = re.search(r'<script type="application/json" id="traceidx-data">(.*?)</script>', text)
    assert found is not None
    data = json.loads(found.group(1))
    assert set(data) == set(SECTIONS)
    for name in SECTIONS:
        assert data[name] == report_json(demo, name, *scope), name
    usage = data["usage"]
    assert usage and all(row["period"] for row in usage)


def test_the_header_says_what_was_counted_and_missing(demo: Path, tmp_path: Path) -> None:
    page = write_html(demo, tmp_path / "r.html", "--timezone", "UTC")
    text = page.read_text("utf-8")
    usage = report_json(demo, "usage", "--timezone", "UTC")
    loops = sum(r["loops"] for r in usage)
    without = sum(r["loops_without_usage"] for r in usage)
    column = next(c for c in usage[0] if c.startswith("unpriced_"))  # loops, or calls
    unpriced = sum(r[column] for r in usage)
    calls = [
        r for r in report_json(demo, "tools", "--timezone", "UTC") if r["entry"] == "tool kind"
    ]
    no_duration = sum(r["calls"] - r["with_duration"] for r in calls)
    assert f"Counted: {loops:,} loops, " in text
    assert f"{sum(r['calls'] for r in calls):,} tool calls" in text
    assert f"<li>{without:,} loops reported no usage</li>" in text
    noun = column.removeprefix("unpriced_")
    assert f"<li>{unpriced:,} {noun} of unpriced models (" in text
    assert f"<li>{no_duration:,} tool calls have no duration</li>" in text


def test_an_empty_scope_still_writes_a_page_that_says_so(
    demo: Path, tmp_path: Path, chromium: None
) -> None:
    page = write_html(demo, tmp_path / "empty.html", "--since", "2999-01-01", "--runtime", "pi")
    text = page.read_text("utf-8")
    assert "No loops in scope." in text and "No tool calls in scope." in text
    seen = open_page(page)
    assert seen.console_errors == [] and len(seen.requests) == 1
    assert all(count > 0 for count in seen.marks.values())


def test_bad_uses_are_one_line_usage_errors(demo: Path, tmp_path: Path) -> None:
    cases = [
        (("report", "html"), "report html needs --output FILE"),
        (("report", "usage", "--output", str(tmp_path / "x")), "--output is for `report html`"),
        (
            ("report", "html", "--output", str(tmp_path / "r.html"), "--timezone", "Mars/Base"),
            "is not an IANA zone",
        ),
    ]
    blocker = tmp_path / "file"
    blocker.write_text("")
    cases.append((("report", "html", "--output", str(blocker / "r.html")), "not a folder (a file)"))
    for args, message in cases:
        done = traceidx_cli(*args, "--dataset", str(demo))
        assert done.returncode == 2, done
        assert done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and message in done.stderr, done.stderr


def test_other_commands_do_not_import_the_html_libraries(demo: Path) -> None:
    code = (
        "import sys, io, contextlib\n"
        "from traceidx.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    for name in {list(SECTIONS)!r}:\n"
        f"        assert main(['report', name, '--dataset', {str(demo)!r}]) == 0\n"
        "loaded = {'altair', 'great_tables', 'vl_convert'} & set(sys.modules)\n"
        "print(sorted(loaded))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


@pytest.mark.skipif(not WITH_CORPUS, reason="needs the shared corpus")
def test_the_corpus_report_is_small_and_renders(
    traces_dataset: Path, tmp_path: Path, chromium: None
) -> None:
    page = write_html(traces_dataset, tmp_path / "corpus.html", "--timezone", "UTC")
    assert page.stat().st_size < 5 * MB
    seen = open_page(page)
    assert seen.console_errors == [] and len(seen.requests) == 1
    assert {"tokens", "models", "projects", "slow-tool"} <= set(seen.marks)
    assert all(count > 0 for count in seen.marks.values()), seen.marks


@pytest.fixture(scope="module")
def demo_frames(demo: Path) -> dict[str, Any]:
    """The demo's report rows as the HTML report collects them."""
    from traceidx.analysis.htmlreport import collect
    from traceidx.analysis.query import connect
    from traceidx.analysis.reports import params

    return collect(connect(demo), params(timezone="UTC"))


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=12),
)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    section=st.sampled_from(SECTIONS),
    column=st.from_regex(r"[a-z][a-z_]{0,10}(_usd|_share|_rate|_ratio|_ms)?", fullmatch=True),
    values=st.lists(_VALUES, min_size=1, max_size=1),
)
def test_a_new_report_column_is_shown_without_breaking_the_page(
    demo_frames: dict[str, Any], section: str, column: str, values: list[Any]
) -> None:
    import polars as pl

    from traceidx.analysis.htmlreport import render
    from traceidx.analysis.reports import params

    frames = dict(demo_frames)
    assume(column not in frames[section].columns)
    height = len(frames[section])
    extra = pl.Series(column, values * height, strict=False)
    frames[section] = frames[section].with_columns(extra)
    page = render(frames, params(timezone="UTC"))
    data = re.search(r'id="traceidx-data">(.*?)</script>', page)
    assert data is not None
    rows = json.loads(data.group(1))[section]
    assert len(rows) == height and all(column in row for row in rows)
    if section != "tools" and height:  # each of these sections shows its report's columns
        assert f">{column}</th>" in page or f'id="{column}"' in page


def test_the_headline_answers_at_a_glance_with_one_colour_per_model(
    demo: Path, tmp_path: Path
) -> None:
    """The cards say the total cost, tokens, sessions and the costliest model and project as
    the reports have them; every chart colours a model the same."""
    page = write_html(demo, tmp_path / "r.html", "--timezone", "UTC")
    text = page.read_text("utf-8")
    usage = report_json(demo, "usage", "--timezone", "UTC")
    projects = report_json(demo, "projects", "--timezone", "UTC")
    cost = sum(r["cost_usd"] or 0 for r in usage)
    assert (
        f'id="card-cost"><span class="label">total cost</span><span class="value">${cost:,.2f}'
        in text
    )
    tokens = sum(r["total"] or 0 for r in usage)
    assert f'<span class="value">{tokens:,}</span>' in text
    assert f'<span class="value">{sum(r["sessions"] for r in projects):,}</span>' in text
    by_model: dict[str, float] = {}
    for r in usage:
        by_model[r["model"] or "(unknown)"] = by_model.get(r["model"] or "(unknown)", 0) + (
            r["cost_usd"] or 0
        )
    top = max(by_model, key=lambda m: by_model[m])
    assert (
        f'id="card-model"><span class="label">costliest model</span><span class="value">{top} ·'
        in text
    )
    specs = json.loads(re.search(r'id="traceidx-charts">(.*?)</script>', text, re.S)[1])  # type: ignore[index]
    scales = []
    for name in ("spend", "tokens", "models", "cost-models"):
        found = json.dumps(specs[name])
        match = re.search(r'"scale": \{"domain": (\[[^\]]*\]), "range": (\[[^\]]*\])', found)
        assert match, name
        scales.append((json.loads(match[1]), json.loads(match[2])))
    assert all(scale == scales[0] for scale in scales)
    domain, colours = scales[0]
    assert domain[0] == top and len(set(colours)) == len(colours)


# -- charts with marks, colours with one meaning, outcomes explained -------------------------

#: a real Qwen Code session whose first prompt's requests all failed: a loop without usage
#: beside one with usage (the model is unpriced)
QWEN_HTTP_ERROR = FIXTURES.joinpath(
    "generated", "qwen", "projects", "-home-dev-projects-error-http-s1", "chats",
    "a1c1a718-ab69-48d0-8d75-8270f240994a.jsonl",
)  # fmt: skip
#: a real Codex session whose only turn failed on HTTP 500: no usage at all
CODEX_HTTP_ERROR = FIXTURES.joinpath(
    "generated", "codex",
    "error_http500-s1__rollout-2026-11-30T06-29-42-01a22b25-1cb9-72e3-98bb-2a1d1d9ac10e.jsonl",
)  # fmt: skip


def built(root: Path, *paths: Path) -> Path:
    report = build(list(paths), root / "dataset", jobs=1)
    assert report.exit_code == 0
    return root / "dataset"


def _specs(text: str) -> dict[str, Any]:
    found = re.search(r'id="traceidx-charts">(.*?)</script>', text, re.S)
    assert found is not None
    specs: dict[str, Any] = json.loads(found.group(1))
    return specs


def _instead(text: str) -> set[str]:
    """The charts a page names a sentence in place of."""
    return set(re.findall(r'<p class="note" data-instead-of="([^"]+)">', text))


@pytest.mark.parametrize(
    ("trace", "drawn", "told"),
    [
        (QWEN_HTTP_ERROR, {"tokens", "models", "outcomes"}, {"spend", "cost-models"}),
        (CODEX_HTTP_ERROR, {"outcomes"}, {"spend", "tokens", "models", "cost-models"}),
    ],
    ids=["a-loop-without-usage", "no-usage-at-all"],
)
def test_no_chart_is_drawn_without_marks_and_a_missing_one_is_said(
    tmp_path: Path, chromium: None, trace: Path, drawn: set[str], told: set[str]
) -> None:
    dataset = built(tmp_path, trace)
    usage = report_json(dataset, "usage", "--timezone", "UTC")
    assert any(r["loops_without_usage"] and r["total"] is None for r in usage)  # the case
    page = write_html(dataset, tmp_path / "r.html", "--timezone", "UTC")
    text = page.read_text("utf-8")
    seen = open_page(page)
    assert seen.console_errors == []
    assert drawn <= set(seen.marks) and not told & set(seen.marks)
    assert all(count > 0 for count in seen.marks.values()), seen.marks  # bars with an area
    assert told <= _instead(text) and not _instead(text) & set(seen.marks)
    if "tokens" in told:
        assert "No loop in scope reported usage: no tokens to chart." in text


def _scale_colours(specs: dict[str, Any]) -> tuple[dict[str, str], set[str]]:
    """The model scale of a page's charts (model -> colour; one scale for every chart) and
    every other colour the charts name (other scales' ranges, fixed mark colours)."""
    models: dict[str, str] = {}
    others: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            colour = node.get("color")
            if isinstance(colour, dict) and isinstance(colour.get("scale"), dict):
                scale = colour["scale"]
                if colour.get("field") == "model":
                    pairs = dict(zip(scale["domain"], scale["range"], strict=True))
                    assert not models or pairs == models  # the same scale everywhere
                    models.update(pairs)
                else:
                    others.update(scale.get("range", []))
            elif isinstance(colour, dict) and "value" in colour:
                others.add(colour["value"])
            elif isinstance(colour, str):
                others.add(colour)  # a mark's own colour
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(specs)
    return models, others


def test_a_model_has_one_colour_in_every_report_and_it_means_only_that_model(
    demo: Path, tmp_path: Path
) -> None:
    other = built(tmp_path, FIXTURES / "generated" / "codex", FIXTURES / "generated" / "gemini")
    pages = [
        write_html(demo, tmp_path / "demo.html", "--timezone", "UTC"),
        write_html(other, tmp_path / "other.html", "--timezone", "UTC"),
        write_html(demo, tmp_path / "codex.html", "--timezone", "UTC", "--runtime", "codex"),
        # stacked by other dimensions than the model: in grey, never in a model's colour
        write_html(demo, tmp_path / "by.html", "--timezone", "UTC", "--group-by", "project"),
    ]
    scales = []
    for page in pages:
        models, others = _scale_colours(_specs(page.read_text("utf-8")))
        assert models and len(set(models.values())) == len(models)
        assert others and not others & set(models.values()), others & set(models.values())
        scales.append(models)
    shared = set(scales[0]) & set(scales[1])
    assert "gpt-5.5" in shared
    for models in scales[1:]:
        assert all(models[m] == scales[0][m] for m in set(models) & set(scales[0])), models
    # the costliest model differs between the two datasets: the colour follows the name only
    assert next(iter(scales[0])) != next(iter(scales[1]))
    grouped = pages[-1].read_text("utf-8")
    assert "The rows are not grouped by model (--group-by): no cost by it." in grouped
    assert _specs(grouped)["tokens"]["encoding"]["color"] == {"value": NEUTRAL}


def test_the_outcome_chart_says_what_not_stated_means_and_who_states_outcomes(
    tmp_path: Path,
) -> None:
    dataset = built(tmp_path, FIXTURES / "generated" / "codex", FIXTURES / "generated" / "gemini")
    models = report_json(dataset, "models", "--timezone", "UTC")
    stated = {n for r in models for n in (r["runtimes_with_outcome"] or "").split(",") if n}
    silent = {n for r in models for n in r["runtimes"].split(",")} - stated
    assert stated == {"codex"} and silent == {"gemini"}  # what these traces state
    text = write_html(dataset, tmp_path / "r.html", "--timezone", "UTC").read_text("utf-8")
    caption = re.search(r'<p class="caption" id="caption-outcomes">([^<]*)</p>', text)
    assert caption is not None
    said = html.unescape(caption.group(1))
    assert said.startswith('"Not stated": the runtime did not write how the loop ended')
    assert "never guesses an outcome" in said
    assert said.endswith("In this scope, outcomes were stated by codex; never by gemini.")
    assert "labelExpr" in json.dumps(_specs(text)["outcomes"])  # the legend says "not stated"
