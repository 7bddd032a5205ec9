"""Reports: every report in every format, numbers that agree with the base views and the runtimes.

Each report runs as a user runs it (a `traceidx report` subprocess) on the whole-corpus
dataset and on a demo dataset; its numbers are checked against direct SQL over the views,
the usage report against the generated corpora's ground truth, and periods against the
timezone arithmetic done here independently.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import traceidx
from tests.support.expect import (
    SESSION_USAGE,
    TRUTHS,
    USAGE,
    add_usage,
    build_folder,
    calls,
    usage_by_model,
)
from traceidx.analysis.query import connect
from traceidx.analysis.reports import REPORTS, params, run_report

FORMATS = ("table", "markdown", "json", "csv")
MEMBERS = ("input", "cached", "cache_write", "output", "reasoning", "total")


def report_cli(
    dataset: Path, name: str, *args: str, fmt: str = "json", prices: bool = False
) -> Any:
    """A report's output (`prices`: the `traceidx prices` command, `name` ignored)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "traceidx.cli.main",
            *(["prices"] if prices else ["report", name]),
            "--dataset",
            str(dataset),
            "--format",
            fmt,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    if fmt == "json":
        return json.loads(done.stdout)
    return done.stdout


@pytest.fixture(params=["traces", "demo"])
def dataset(request: pytest.FixtureRequest, traces_dataset: Path, demo_dataset: Path) -> Path:
    return traces_dataset if request.param == "traces" else demo_dataset


def sql(dataset: Path, query: str) -> list[tuple[Any, ...]]:
    return connect(dataset).execute(query).fetchall()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", REPORTS)
def test_every_report_runs_in_every_format(dataset: Path, name: str, fmt: str) -> None:
    out = report_cli(dataset, name, "--timezone", "UTC", fmt=fmt)
    if fmt == "json":
        assert isinstance(out, list) and out and isinstance(out[0], dict)
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(out)))
        assert len(rows) >= 2 and len({len(r) for r in rows}) == 1
    elif fmt == "markdown":  # a table, or a list per row when its key columns alone are wider
        assert "| ---" in out or "|---" in out or "\n- **" in out
    else:
        assert f"{name}: " in out.splitlines()[0] and "timezone UTC" in out


def _session_excess(dataset: Path, member: str) -> int:
    """What the sessions' own usage totals (sessions.session_usage) exceed their billed calls
    by, in `member`, over the sessions whose total exceeds them in input or output (none holds
    cache_write or reasoning): what the usage report adds beside the calls."""
    if member in ("cache_write", "reasoning"):
        return 0
    return sum(_session_excesses(dataset, member).values())


def _session_excesses(dataset: Path, member: str = "total") -> dict[str, int]:
    """`_session_excess` per session (by native id), of the sessions that have one."""
    members = ("input", "output") if member == "total" else (member,)
    differences = " + ".join(f"(s.session_usage.{m} - coalesce(k.{m}, 0))" for m in members)
    found = sql(
        dataset,
        f"""SELECT s.native_id, {differences} FROM sessions AS s
            LEFT JOIN (SELECT session_id, sum(usage.input) AS input, sum(usage.cached) AS cached,
                              sum(usage.output) AS output
                       FROM model_calls WHERE usage IS NOT NULL GROUP BY session_id) AS k
              USING (session_id)
            WHERE s.session_usage.input > coalesce(k.input, 0)
               OR s.session_usage.output > coalesce(k.output, 0)""",
    )
    return {native: int(value) for native, value in found}


def test_usage_agrees_with_the_loop_view(dataset: Path) -> None:
    rows = report_cli(dataset, "usage", "--timezone", "UTC")
    assert list(rows[0])[:11] == [
        "period",
        "runtime",
        "model",
        "loops",
        "calls",
        "input",
        "cached",
        "cache_write",
        "output",
        "reasoning",
        "total",
    ]
    for member in MEMBERS:  # every model call's, those outside any loop included
        column = "usage.input + usage.output" if member == "total" else f"usage.{member}"
        expected = sql(dataset, f"SELECT sum({column}) FROM model_calls")[0][0]
        beyond = _session_excess(dataset, member)  # a session total beyond its calls, once
        assert sum(r[member] or 0 for r in rows) == (expected or 0) + beyond, member
    billed = sql(dataset, "SELECT count(*) FROM model_calls WHERE usage IS NOT NULL")
    assert sum(r["calls"] for r in rows) == billed[0][0]  # failed attempts billed nothing
    assert sum(r["loops"] for r in rows) == sql(dataset, "SELECT count(*) FROM loops")[0][0]
    unknown = sql(dataset, "SELECT count(*) FROM loop_usage WHERE started_at IS NULL")[0][0]
    assert sum(r["loops"] for r in rows if r["period"] == "") == unknown
    without = sql(dataset, "SELECT count(*) FROM loop_usage WHERE input IS NULL AND output IS NULL")
    assert sum(r["loops_without_usage"] for r in rows) == without[0][0]


def test_the_table_adds_a_totals_row_and_json_does_not(demo_dataset: Path) -> None:
    table = report_cli(demo_dataset, "usage", "--timezone", "UTC", "--wide", fmt="table")
    rows = report_cli(demo_dataset, "usage", "--timezone", "UTC")
    total_line = next(line for line in table.splitlines() if line.startswith("total"))
    assert f"{sum(r['total'] or 0 for r in rows):,}" in total_line.split()
    assert all(r["period"] != "total" for r in rows)


def test_models_sessions_tools_and_slowest_agree_with_the_views(dataset: Path) -> None:
    models = report_cli(dataset, "models", "--timezone", "UTC")
    by_model = dict(sql(dataset, "SELECT model, count(*) FROM loop_usage GROUP BY 1"))
    assert {r["model"]: r["loops"] for r in models} == by_model
    calls = sql(dataset, "SELECT count(*) FROM tool_calls WHERE loop_id IS NOT NULL")[0][0]
    per_loop = sum(r["tool_calls_per_loop"] * r["loops"] for r in models)  # rounded to 0.01
    assert per_loop == pytest.approx(calls, abs=sum(0.005 * r["loops"] for r in models))

    sessions = report_cli(dataset, "sessions", "--timezone", "UTC")
    with_loops = sql(dataset, "SELECT count(DISTINCT session_id) FROM loops")[0][0]
    assert len(sessions) == with_loops
    assert sum(r["loops"] for r in sessions) == sql(dataset, "SELECT count(*) FROM loops")[0][0]
    parents = sql(
        dataset,
        "SELECT count(*) FROM sessions WHERE delegated_from IS NOT NULL AND session_id IN "
        "(SELECT session_id FROM loops)",
    )[0][0]
    assert sum(r["subagent_sessions"] for r in sessions) >= parents

    tools = report_cli(dataset, "tools", "--timezone", "UTC")
    tool_rows = [r for r in tools if r["entry"] == "tool kind"]
    assert (
        sum(r["calls"] for r in tool_rows) == sql(dataset, "SELECT count(*) FROM tool_calls")[0][0]
    )
    failed = sql(dataset, "SELECT count(*) FROM tool_calls WHERE failed")[0][0]
    assert sum(r["failures"] for r in tool_rows) == failed
    known, reported = sql(
        dataset,
        "SELECT count(coalesce(duration_ms, elapsed_ms)), count(duration_ms) FROM tool_calls",
    )[0]
    assert sum(r["with_duration"] for r in tool_rows) == known > reported
    assert sum(r["duration_reported"] for r in tool_rows) == reported
    for row in tool_rows:
        if row["with_duration"] == 0:  # not known is not zero
            assert row["duration_ms_median"] is None and row["duration_ms_max"] is None
    for runtime in ("claude_code", "pi", "dsh"):  # runtimes that report no durations
        timed = report_cli(dataset, "tools", "--timezone", "UTC", "--runtime", runtime)
        assert any(r["duration_ms_median"] is not None for r in timed), runtime
    assert len(report_cli(dataset, "tools", "--timezone", "UTC", "--limit", "5")) == 5
    models = report_cli(dataset, "models", "--timezone", "UTC")
    assert (
        sum(r["calls_with_duration"] for r in models)
        == sql(
            dataset,
            "SELECT count(coalesce(duration_ms, elapsed_ms)) FROM tool_calls "
            "WHERE loop_id IS NOT NULL",
        )[0][0]
    )

    slowest = report_cli(dataset, "slowest", "--timezone", "UTC", "--limit", "5")
    longest = sql(
        dataset,
        "SELECT max(coalesce(duration_ms, elapsed_ms)) FROM tool_calls",
    )[0][0]
    assert len(slowest) <= 5
    if longest is not None:
        assert slowest[0]["duration_ms"] == longest
        assert [r["duration_ms"] for r in slowest] == sorted(
            (r["duration_ms"] for r in slowest), reverse=True
        )


def test_filters_narrow_the_scope(traces_dataset: Path) -> None:
    everything = report_cli(traces_dataset, "usage", "--timezone", "UTC")
    codex = report_cli(traces_dataset, "usage", "--timezone", "UTC", "--runtime", "codex")
    assert codex and {r["runtime"] for r in codex} == {"codex"}
    assert sum(r["loops"] for r in codex) == sum(
        r["loops"] for r in everything if r["runtime"] == "codex"
    )
    dated = [r for r in everything if r["period"]]
    day = sorted({r["period"] for r in dated})[len(dated) // 3 and 1]
    one_day = report_cli(
        traces_dataset, "usage", "--timezone", "UTC", "--since", day, "--until", day
    )
    assert {r["period"] for r in one_day} == {day}
    assert sum(r["loops"] for r in one_day) == sum(r["loops"] for r in dated if r["period"] == day)
    model = next(r["model"] for r in dated if r["model"])
    only = report_cli(traces_dataset, "models", "--timezone", "UTC", "--model", model)
    assert [r["model"] for r in only] == [model]


def test_periods_follow_the_timezone(traces_dataset: Path) -> None:
    starts = [
        s for (s,) in sql(traces_dataset, "SELECT started_at FROM loop_usage") if s is not None
    ]
    for zone, hours in (("UTC", 0), ("Asia/Tokyo", 9)):
        expected = Counter((s + timedelta(hours=hours)).strftime("%Y-%m-%d") for s in starts)
        rows = report_cli(traces_dataset, "usage", "--timezone", zone)
        actual: Counter[str] = Counter()
        for row in rows:
            if row["period"]:
                actual[row["period"]] += row["loops"]
        assert actual == expected, zone
    shifted = sum(1 for s in starts if s.date() != (s + timedelta(hours=9)).date())
    assert shifted > 0  # the test is not trivial: some loops move to the next day
    weeks = report_cli(traces_dataset, "usage", "--timezone", "Asia/Tokyo", "--period", "week")
    expected_weeks: Counter[str] = Counter()
    for s in starts:
        local = (s + timedelta(hours=9)).date()
        expected_weeks[(local - timedelta(days=local.weekday())).isoformat()] += 1
    actual_weeks: Counter[str] = Counter()
    for row in weeks:
        if row["period"]:
            actual_weeks[row["period"]] += row["loops"]
    assert actual_weeks == expected_weeks
    months = report_cli(traces_dataset, "usage", "--timezone", "UTC", "--period", "month")
    assert all(len(r["period"]) in (0, 7) for r in months)


def _add_session_totals(
    expected: dict[Any, dict[str, int]], truth: dict[str, Any], dataset: Path
) -> None:
    """Add, where the runtime keeps a session total the dataset publishes (session_usage), what
    the ground truth's total (``session_token_usage``) exceeds the session's billed calls by,
    under the model the trace names for it (session_usage_model): the usage report counts a
    session's tokens once, its calls and the rest of its total."""
    models = dict(
        sql(
            dataset,
            "SELECT native_id, session_usage_model FROM sessions WHERE session_usage IS NOT NULL",
        )
    )
    for session in truth["sessions"]:
        stated = session.get("session_token_usage")
        if not stated or session["native_session_id"] not in models:
            continue
        billed = dict.fromkeys(USAGE, 0)
        for call in calls(session):
            add_usage(billed, call["usage"])
        beyond = {m: stated[m] - billed[m] for m in SESSION_USAGE}
        if beyond["input"] > 0 or beyond["output"] > 0:
            totals = expected.setdefault(
                models[session["native_session_id"]], dict.fromkeys(USAGE, 0)
            )
            for member, value in beyond.items():
                totals[member] += value


@pytest.mark.parametrize("folder", list(TRUTHS))
def test_usage_totals_equal_the_runtimes_ground_truth(folder: str, tmp_path: Path) -> None:
    """The usage report of a runtime's generated folder, per model, is the usage of the billed
    model calls its expect.json states (contract units), summed per model."""
    dataset = tmp_path / "ds"
    build_folder(folder, dataset)
    runtime = TRUTHS[folder]["runtime"]
    rows = report_cli(dataset, "usage", "--timezone", "UTC", "--runtime", runtime)
    actual: dict[str, dict[str, int]] = {}
    for row in rows:
        totals = actual.setdefault(row["model"], dict.fromkeys(USAGE, 0))
        for member in USAGE:
            totals[member] += row[member] or 0
    expected = usage_by_model(TRUTHS[folder])
    _add_session_totals(expected, TRUTHS[folder], dataset)
    # a model whose calls billed nothing may have a row of zeros
    actual = {m: u for m, u in actual.items() if m in expected or any(u.values())}
    assert actual == expected


def test_an_override_file_takes_precedence_over_genai_prices(
    traces_dataset: Path, tmp_path: Path
) -> None:
    prices = tmp_path / "prices.json"
    entry = {"pattern": "^deepseek-v4-flash$", "input": 1, "cached_input": 0, "cache_write": 0}
    prices.write_text(json.dumps({"models": [{**entry, "output": 0}]}))
    repriced = report_cli(traces_dataset, "usage", "--timezone", "UTC", "--prices", str(prices))
    flash = [r for r in repriced if r["model"] == "deepseek-v4-flash" and r["total"]]
    assert flash
    for r in flash:
        fresh = r["input"] - (r["cached"] or 0) - (r["cache_write"] or 0)
        assert r["cost_usd"] == pytest.approx(fresh / 1e6)
    matched = report_cli(traces_dataset, "prices", "--prices", str(prices), prices=True)
    assert {r["source"] for r in matched if r["model"] == "deepseek-v4-flash"} == {"override"}


def test_bad_parameters_are_usage_errors(demo_dataset: Path) -> None:
    for args in (
        ["--timezone", "Mars/Olympus"],
        ["--since", "yesterday"],
        ["--since", "2026-02-02", "--until", "2026-01-01"],
    ):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "traceidx.cli.main",
                "report",
                "usage",
                "--dataset",
                str(demo_dataset),
                *args,
            ],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2 and done.stderr.startswith("traceidx: "), args
        assert done.stderr.count("\n") == 1


def test_python_api_matches_the_cli(demo_dataset: Path) -> None:
    frame = traceidx.report("usage", demo_dataset, timezone="UTC", period="week")
    rows = report_cli(demo_dataset, "usage", "--timezone", "UTC", "--period", "week")
    assert frame.to_dicts() == rows or len(frame) == len(rows)
    assert frame["total"].sum() == sum(r["total"] or 0 for r in rows)
    relation = run_report(connect(demo_dataset), "tools", params(timezone="UTC"))
    assert relation.fetchall()
    lazy = traceidx.scan_items(demo_dataset)
    roles = lazy.select("semantic").collect()["semantic"].struct.field("role")
    assert "tool.output" in set(roles.to_list())


def test_subagents_lists_each_child_and_sessions_rolls_them_up(dataset: Path) -> None:
    children = report_cli(dataset, "subagents", "--timezone", "UTC")
    delegated = sql(dataset, "SELECT count(*) FROM sessions WHERE delegated_from IS NOT NULL")
    assert len(children) == delegated[0][0] > 0
    assert all("agent_type" in r and r["parent_session"] for r in children)
    excesses = _session_excesses(dataset)
    for r in children:  # the child's own numbers, as the views give them
        (loops, tokens, calls) = sql(
            dataset,
            f"""SELECT (SELECT count(*) FROM loop_usage u WHERE u.session_id = s.session_id),
                       (SELECT sum(total) FROM loop_usage u WHERE u.session_id = s.session_id),
                       (SELECT count(*) FROM tool_calls t WHERE t.session_id = s.session_id)
                FROM sessions s WHERE s.runtime = '{r["runtime"]}'
                  AND s.native_id = '{r["session"]}'""",
        )[0]
        beyond = excesses.get(r["session"])  # its own total beyond its calls, counted once
        if beyond is not None:
            tokens = (tokens or 0) + beyond
        assert (r["loops"], r["tokens"], r["tool_calls"]) == (loops, tokens, calls)
    # every parent's rollup in `report sessions` is the sum over its descendants' rows here
    parent_of = {
        (r["runtime"], r["session"]): (r["runtime"], r["parent_session"]) for r in children
    }
    sums: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for r in children:
        key: tuple[str, str] | None = (r["runtime"], r["session"])
        seen = set()
        while key in parent_of and key not in seen:
            seen.add(key)
            key = parent_of[key]
            sums[key].update(
                sessions=1,
                tokens=r["tokens"] or 0,
                tool_calls=r["tool_calls"],
                failures=r["failures"],
            )
    sessions = report_cli(dataset, "sessions", "--timezone", "UTC")
    rolled = [s for s in sessions if s["subagent_sessions"]]
    assert rolled
    for s in rolled:
        want = sums[(s["runtime"], s["native_id"])]
        got = (
            s["subagent_sessions"],
            s["subagent_tokens"] or 0,
            s["subagent_tool_calls"],
            s["subagent_failures"],
        )
        assert got == (want["sessions"], want["tokens"], want["tool_calls"], want["failures"])


def test_subagents_names_the_codex_agent_type(traces_dataset: Path) -> None:
    """Codex links its spawned children today; their agent type comes from the spawn."""
    children = report_cli(traces_dataset, "subagents", "--timezone", "UTC", "--runtime", "codex")
    assert children and all(r["runtime"] == "codex" for r in children)
    assert all(r["agent_type"] and r["model"] and r["loops"] >= 1 for r in children)


def test_project_means_one_thing_in_every_report(traces_dataset: Path) -> None:
    """report projects, --group-by project and sessions.project name the same projects (the
    repository, else the working directory's last part); an unknown one is null in data and
    one marker in a table."""
    projects = report_cli(traces_dataset, "projects", "--timezone", "UTC")
    grouped = report_cli(traces_dataset, "usage", "--timezone", "UTC", "--group-by", "project")
    named = {
        r[0]
        for r in sql(
            traces_dataset,
            "SELECT DISTINCT project FROM sessions "
            "WHERE session_id IN (SELECT session_id FROM loops)",
        )
    }
    assert {r["project"] for r in projects} == named
    assert {r["project"] for r in grouped} <= named
    assert all(p is None or "/" not in p for p in named)
    assert all(r["directories"] >= (r["working_directory"] is not None) for r in projects)
    if None in named:
        table = report_cli(traces_dataset, "projects", "--timezone", "UTC", fmt="table")
        assert "(unknown)" in table


def test_the_models_table_says_what_no_outcome_means_and_who_states_outcomes(
    dataset: Path,
) -> None:
    """Most loops have no outcome because many runtimes never write that a run completed: the
    human formats say so under the table, with the runtimes of the scope that stated any
    outcome; JSON and CSV carry the rows only."""
    stated = [r for (r,) in sql(dataset, "SELECT DISTINCT runtime FROM loop_usage "
                                "WHERE outcome IS NOT NULL ORDER BY 1")]  # fmt: skip
    every = [r for (r,) in sql(dataset, "SELECT DISTINCT runtime FROM loop_usage ORDER BY 1")]
    silent = [r for r in every if r not in stated]
    rows = report_cli(dataset, "models", "--timezone", "UTC")
    named = {n for r in rows for n in (r["runtimes_with_outcome"] or "").split(",") if n}
    assert sorted(named) == stated
    note = (
        "no_outcome: the runtime did not state how the loop ended (traceidx never guesses it; "
        "many runtimes state only interruptions and failures)"
        + (f"; stated here by {', '.join(stated)}" if stated else "")
        + (f"; never by {', '.join(silent)}" if silent else "")
        + "."
    )
    for fmt in ("table", "markdown"):
        out = report_cli(dataset, "models", "--timezone", "UTC", "--wide", fmt=fmt)
        assert out.endswith(f"\n{note}\n"), out[-400:]
    for fmt in ("csv",):
        assert "no_outcome: the runtime" not in report_cli(dataset, "models", fmt=fmt)
    narrow = subprocess.run(
        [sys.executable, "-m", "traceidx.cli.main", "report", "models", "--dataset",
         str(dataset), "--timezone", "UTC"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "60"},
    )  # fmt: skip
    assert narrow.returncode == 0 and " ".join(narrow.stdout.split()).endswith(note)
    assert all(len(line) <= 60 for line in narrow.stdout.splitlines()[-4:])
