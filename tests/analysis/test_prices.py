"""Model calls and their prices: calls sum to loops, each call is priced as genai-prices prices
it, unpriced models stay empty, and usage groups and periods keep the totals.

The dataset is every trace at hand (`traces_dataset`: the committed fixtures, or the whole shared
corpus when present), plus ``tests/fixtures/pricing`` (a loop crossing midnight UTC whose first call
is above a long-context threshold, and an unpriced model). Expected costs are computed here call by
call with genai-prices' own `calc_price`, never from the report SQL.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage, calc_price
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.files import FIXTURES, traceidx_cli
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build

PRICING = FIXTURES / "pricing"
MEMBERS = ("input", "cached", "cache_write", "output", "reasoning", "total")
#: the issue's family rule, written out here on its own
FAMILIES = (
    ("claude", "anthropic"),
    ("gpt", "openai"),
    ("o[0-9]", "openai"),
    ("deepseek", "deepseek"),
)


@pytest.fixture(scope="module")
def midnight(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dataset = tmp_path_factory.mktemp("midnight") / "dataset"
    assert build([PRICING], dataset, jobs=1).exit_code == 0
    return dataset


def cli_json(*args: str, env: dict[str, str] | None = None) -> Any:
    done = traceidx_cli(*args, "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return json.loads(done.stdout)


def expected_cost(call: dict[str, Any]) -> float | None:
    """The call priced by genai-prices: under the trace's provider, else the family's, else
    by the model name alone (None: genai-prices cannot price it)."""
    if call["model"] is None:
        return None
    usage = Usage(
        input_tokens=call["input"],
        cache_read_tokens=call["cached"] or 0,
        cache_write_tokens=call["cache_write"] or 0,
        output_tokens=call["output"],
    )
    families = [p for prefix, p in FAMILIES if re.match(prefix, call["model"].lower())]
    for provider in [call["provider"], *families[:1], None]:
        try:
            price = calc_price(
                usage, call["model"], provider_id=provider, genai_request_timestamp=call["at"]
            )
        except LookupError:
            continue
        return float(price.total_price)
    return None


def calls_of(dataset: Path) -> list[dict[str, Any]]:
    """Every billed model call (with usage) and the time it is priced at."""
    rows = (
        connect(dataset)
        .execute(
            "SELECT c.model, c.provider, c.usage.input, c.usage.cached, c.usage.cache_write, "
            "c.usage.output, epoch_ms(coalesce(c.occurred_at, l.started_at, s.created_at)) "
            "FROM model_calls c JOIN sessions s USING (session_id) "
            "LEFT JOIN loops l USING (loop_id) WHERE c.usage IS NOT NULL"
        )
        .fetchall()
    )
    keys = ("model", "provider", "input", "cached", "cache_write", "output", "at")
    calls = [dict(zip(keys, row, strict=True)) for row in rows]
    for call in calls:
        at = call["at"]
        call["at"] = datetime.now(UTC) if at is None else datetime.fromtimestamp(at / 1000, UTC)
    return calls


@pytest.mark.parametrize("which", ["traces", "midnight"])
def test_loop_usage_is_the_sum_of_its_model_calls_per_runtime(
    which: str, traces_dataset: Path, midnight: Path
) -> None:
    dataset = traces_dataset if which == "traces" else midnight
    con = connect(dataset)
    rows = con.execute(
        """
        WITH sums AS (
            SELECT loop_id, count(*) AS n, sum(usage.input) AS input,
                   sum(usage.output) AS output,
                   CASE WHEN count(usage.cached) = count(*) THEN sum(usage.cached) END AS cached,
                   CASE WHEN count(usage.cache_write) = count(*)
                        THEN sum(usage.cache_write) END AS cache_write,
                   CASE WHEN count(usage.reasoning) = count(*)
                        THEN sum(usage.reasoning) END AS reasoning
            FROM model_calls WHERE loop_id IS NOT NULL AND usage IS NOT NULL GROUP BY loop_id
        )
        SELECT s.runtime, count(*) AS loops, count(c.loop_id) AS with_calls,
            count(*) FILTER (WHERE
                l.usage.input IS DISTINCT FROM c.input
                OR l.usage.output IS DISTINCT FROM c.output
                OR l.usage.cached IS DISTINCT FROM c.cached
                OR l.usage.cache_write IS DISTINCT FROM c.cache_write
                OR l.usage.reasoning IS DISTINCT FROM c.reasoning) AS differing
        FROM loops l JOIN sessions s USING (session_id) LEFT JOIN sums c USING (loop_id)
        GROUP BY s.runtime
        """
    ).fetchall()
    runtimes = {runtime for runtime, *_ in rows}
    assert runtimes >= ({"pi"} if which == "midnight" else {"claude_code", "codex", "pi", "dsh"})
    for runtime, _loops, with_calls, differing in rows:
        assert differing == 0, runtime
        assert with_calls > 0 or which == "midnight", runtime
    orphans = con.execute(
        "SELECT count(*) FROM model_calls WHERE loop_id IS NOT NULL "
        "AND loop_id NOT IN (SELECT loop_id FROM loops)"
    ).fetchone()
    assert orphans == (0,)
    unsupported = con.execute(
        "SELECT count(*) FROM model_calls m WHERE len(record_ids) = 0 OR EXISTS ("
        "SELECT 1 FROM unnest(m.record_ids) AS r(id) WHERE r.id NOT IN "
        "(SELECT record_id FROM records))"
    ).fetchone()
    assert unsupported == (0,)


@pytest.mark.parametrize("which", ["traces", "midnight"])
def test_every_call_costs_what_genai_prices_says_and_unpriced_models_are_empty(
    which: str, traces_dataset: Path, midnight: Path
) -> None:
    dataset = traces_dataset if which == "traces" else midnight
    expected: dict[tuple[Any, Any], float | None] = {}
    counted: dict[tuple[Any, Any], int] = defaultdict(int)
    for call in calls_of(dataset):
        key = (call["model"], call["provider"])
        cost = expected_cost(call)
        counted[key] += 1
        if key in expected and (expected[key] is None) != (cost is None):
            pytest.fail(f"{key}: priced for some calls only")
        expected[key] = None if cost is None else (expected.get(key) or 0.0) + cost
    listed = cli_json("prices", "--dataset", str(dataset), "--timezone", "UTC")
    got = {(r["model"], r["provider"]): r for r in listed}
    # a model named only by sessions' own usage totals (Mistral Vibe's) has a row of no calls,
    # never priced
    totals_only = {k for k, r in got.items() if not r["calls"] and k not in expected}
    assert all(got[k]["cost_usd"] is None and got[k]["session_tokens"] for k in totals_only)
    assert set(got) - totals_only == set(expected)
    for key, cost in expected.items():
        row = got[key]
        assert row["calls"] == counted[key], key
        if cost is None:
            assert row["cost_usd"] is None and row["entry"] is None, key
        else:
            assert row["cost_usd"] == pytest.approx(cost, abs=1e-6), key
            assert row["entry"] and row["source"] == "genai-prices", key
    assert any(c is None for c in expected.values()) and any(c for c in expected.values())
    unpriced = [r for r in listed if r["entry"] is None]
    assert listed[-len(unpriced) :] == unpriced  # listed last
    usage = cli_json("report", "usage", "--dataset", str(dataset), "--timezone", "UTC")
    priced_total = sum(c for c in expected.values() if c is not None)
    assert sum(r["cost_usd"] or 0 for r in usage) == pytest.approx(priced_total, abs=1e-4)
    unpriced_calls = sum(counted[k] for k, c in expected.items() if c is None)
    assert sum(r["unpriced_calls"] for r in usage) == unpriced_calls
    for r in usage:
        if r["calls"] and r["unpriced_calls"] == r["calls"]:
            assert r["cost_usd"] is None  # empty, never 0


def test_a_long_context_call_is_priced_at_its_own_tier(midnight: Path) -> None:
    calls = [c for c in calls_of(midnight) if c["model"] == "claude-sonnet-4-5"]
    big = next(c for c in calls if c["input"] > 200_000 and (c["cached"] or 0) < 100_000)
    usage = Usage(input_tokens=big["input"], cache_read_tokens=big["cached"],
                  cache_write_tokens=big["cache_write"], output_tokens=big["output"])  # fmt: skip
    tiered = float(calc_price(usage, "claude-sonnet-4-5", provider_id="anthropic").total_price)
    base = (big["input"] - big["cached"] - big["cache_write"]) * 3 + big["cached"] * 0.3
    base += big["cache_write"] * 3.75 + big["output"] * 15
    assert tiered > base / 1e6  # the threshold is real: above it every token costs more
    rows = cli_json("report", "usage", "--dataset", str(midnight), "--timezone", "UTC")
    first_day = next(r for r in rows if r["period"] == "2026-03-02")
    assert first_day["calls"] == 1 and first_day["cost_usd"] == pytest.approx(tiered, abs=1e-6)


def test_a_loop_crossing_midnight_splits_its_tokens_and_counts_where_it_started(
    midnight: Path,
) -> None:
    rows = cli_json("report", "usage", "--dataset", str(midnight), "--timezone", "UTC")
    sonnet = {r["period"]: r for r in rows if r["model"] == "claude-sonnet-4-5"}
    assert sonnet["2026-03-02"]["loops"] == 1 and sonnet["2026-03-03"]["loops"] == 0
    assert sonnet["2026-03-02"]["input"] == 251_000 and sonnet["2026-03-03"]["input"] == 250_900
    # in New York both calls fall on 2 March, with the loop
    local = cli_json(
        "report", "usage", "--dataset", str(midnight), "--timezone", "America/New_York"
    )
    assert {r["period"] for r in local} == {"2026-03-02"}
    assert sum(r["total"] for r in local) == sum(r["total"] for r in rows)


GROUPINGS = ["project", "runtime,model,project,branch,agent", "branch", "agent", "model"]


@pytest.mark.parametrize("group_by", GROUPINGS)
def test_grouped_usage_sums_to_the_ungrouped_totals(traces_dataset: Path, group_by: str) -> None:
    base = ["report", "usage", "--dataset", str(traces_dataset), "--timezone", "UTC"]
    plain = cli_json(*base)
    grouped = cli_json(*base, "--group-by", group_by)
    dims = group_by.split(",")
    assert list(grouped[0])[: 1 + len(dims)] == ["period", *dims]
    for member in (*MEMBERS, "loops", "calls", "loops_without_usage", "unpriced_calls"):
        assert sum(r[member] or 0 for r in grouped) == sum(r[member] or 0 for r in plain), member
    cost = sum(r["cost_usd"] or 0 for r in plain)
    assert sum(r["cost_usd"] or 0 for r in grouped) == pytest.approx(cost, abs=1e-4)


def test_project_branch_and_agent_come_from_the_traces(traces_dataset: Path) -> None:
    con = connect(traces_dataset)
    stated = con.execute(
        "SELECT s.runtime, count(*) FILTER (WHERE branch IS NOT NULL), "
        "count(*) FILTER (WHERE project IS NOT NULL AND working_directory LIKE '%' || project "
        "|| '%'), count(*) FILTER (WHERE working_directory IS NOT NULL) FROM sessions s GROUP BY 1"
    ).fetchall()
    by_runtime = {runtime: (branch, project, cwd) for runtime, branch, project, cwd in stated}
    assert by_runtime["claude_code"][0] > 0  # gitBranch
    for runtime, (_, project, cwd) in by_runtime.items():
        assert project == cwd, runtime
    rows = cli_json(
        "report", "usage", "--dataset", str(traces_dataset), "--timezone", "UTC",
        "--group-by", "agent",
    )  # fmt: skip
    agents = {r["agent"] for r in rows}
    assert "main" in agents and len(agents) > 1  # subagents are told apart


def test_bad_group_by_and_bad_price_files_are_one_line_errors(
    midnight: Path, tmp_path: Path
) -> None:
    base = ["report", "usage", "--dataset", str(midnight)]
    done = traceidx_cli(*base, "--group-by", "runtime,colour")
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "runtime, model" in done.stderr
    bad = tmp_path / "prices.json"
    bad.write_text('{"models": [{"pattern": "(", "input": 1}]}')
    done = traceidx_cli(*base, "--prices", str(bad))
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and str(bad) in done.stderr


def test_a_warm_report_reads_resolved_prices_from_the_cache(midnight: Path, tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    first = cli_json("report", "usage", "--dataset", str(midnight), "--timezone", "UTC", env=env)
    cached = list((tmp_path / "cache" / "traceidx").glob("genai-prices-*.json"))
    assert len(cached) == 1
    entries = json.loads(cached[0].read_text())
    assert {k.split("\x1f")[0] for k in entries} == {"claude-sonnet-4-5", "qwen3-coder-30b"}
    script = (
        "import sys, traceidx.cli.main as c; code = c.main(sys.argv[1:]); "
        "sys.exit(3 if 'genai_prices' in sys.modules else code)"
    )
    args = ["report", "usage", "--dataset", str(midnight), "--timezone", "UTC", "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == first


def rate_cost(rates: tuple[tuple[Any, ...], ...], usage: dict[str, int], at: datetime) -> float:
    """A call's cost from resolved rate rows, applying the period and band rules the report
    SQL applies (the last active period, else the first; the highest band below the input)."""
    seconds = at.hour * 3600 + at.minute * 60 + at.second + at.microsecond / 1e6

    def active(row: tuple[Any, ...]) -> bool:
        kind, start_date, start_s, end_s = row[1:5]
        if kind == "always":
            return True
        if kind == "from_date":
            return at.date().isoformat() >= start_date
        if end_s < start_s:
            return bool(seconds >= start_s or seconds < end_s)
        return bool(start_s <= seconds < end_s)

    ordinal = max((r[0] for r in rates if active(r)), default=0)
    band = max((r for r in rates if r[0] == ordinal and usage["input"] > r[5]), key=lambda r: r[5])
    per_call, fresh, cached, cache_write, output = band[6:]
    uncached = usage["input"] - usage["cached"] - usage["cache_write"]
    return float(
        per_call
        + uncached * fresh
        + usage["cached"] * cached
        + usage["cache_write"] * cache_write
        + usage["output"] * output
    )


#: entries with long-context tiers, price history, time-of-day prices, no cache-write price
PROPERTY_MODELS = (
    ("claude-opus-4-6", "anthropic"),
    ("deepseek-v4-flash", "deepseek"),
    ("gpt-5.5", "openai"),
    ("claude-sonnet-4-5", "anthropic"),
    ("gpt-5.3-codex", "openai"),
)


@settings(max_examples=300, deadline=None)
@given(
    pair=st.sampled_from(PROPERTY_MODELS),
    cached=st.integers(0, 400_000),
    cache_write=st.integers(0, 100_000),
    fresh=st.integers(0, 400_000),
    output=st.integers(0, 64_000),
    at=st.datetimes(datetime(2025, 6, 1), datetime(2027, 6, 1), timezones=st.just(UTC)),
)
def test_resolved_rates_price_any_call_as_genai_prices_does(
    pair: tuple[str, str], cached: int, cache_write: int, fresh: int, output: int, at: datetime
) -> None:
    from traceidx.analysis.pricing import _lookup

    match = _lookup(*pair)
    assert match is not None
    usage = {
        "input": fresh + cached + cache_write,
        "cached": cached,
        "cache_write": cache_write,
        "output": output,
    }
    theirs = calc_price(
        Usage(
            input_tokens=usage["input"],
            cache_read_tokens=cached,
            cache_write_tokens=cache_write,
            output_tokens=output,
        ),
        pair[0],
        provider_id=pair[1],
        genai_request_timestamp=at,
    )
    assert rate_cost(match.rates, usage, at) == pytest.approx(float(theirs.total_price), rel=1e-9)


def test_model_calls_carry_the_cost_the_reports_sum(traces_dataset: Path, tmp_path: Path) -> None:
    """`model_calls.cost_usd` is the per-call cost: the usage report's total is its sum, an
    unpriced or usage-less call has none (never 0), and `sql --prices` reprices it."""
    query = (
        "SELECT round(sum(cost_usd), 6) AS cost, count(*) FILTER (WHERE cost_usd IS NULL AND "
        "usage IS NOT NULL) AS unpriced, count(*) FILTER (WHERE usage IS NULL AND cost_usd "
        "IS NOT NULL) AS usage_less FROM model_calls"
    )
    [row] = cli_json("sql", "--dataset", str(traces_dataset), "--format", "json", query)
    usage = cli_json("report", "usage", "--dataset", str(traces_dataset), "--timezone", "UTC")
    assert row["cost"] == pytest.approx(sum(r["cost_usd"] or 0 for r in usage), abs=1e-4)
    assert row["cost"] > 0 and row["unpriced"] > 0
    assert row["usage_less"] == 0
    assert row["unpriced"] == sum(r["unpriced_calls"] for r in usage)
    prices = tmp_path / "prices.json"
    entry = {"pattern": "^deepseek-v4-flash$", "input": 1, "cached_input": 0, "cache_write": 0}
    prices.write_text(json.dumps({"models": [{**entry, "output": 0}]}))
    flash = (
        "SELECT usage.input - coalesce(usage.cached, 0) - coalesce(usage.cache_write, 0) AS "
        "fresh, cost_usd FROM model_calls WHERE model = 'deepseek-v4-flash' AND usage IS NOT NULL"
    )
    args = ("sql", "--dataset", str(traces_dataset), "--format", "json")
    repriced = cli_json(*args, "--prices", str(prices), flash)
    assert repriced and all(r["cost_usd"] == pytest.approx(r["fresh"] / 1e6) for r in repriced)
    assert cli_json(*args, flash) != repriced
