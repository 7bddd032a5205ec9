"""The usage rollup: `report usage` answered from ``usage-rollup.json`` gives exactly the rows,
and the CLI exactly the bytes, of the report's SQL; a stale, foreign or damaged rollup is not
used; the answer loads no data library.

The rollups here are written in `ZONE` (the machine's zone as `local_timezone` reads ``TZ``), a
zone whose days are not UTC's, so that placing a call on its local day is tested too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.support.files import traceidx_cli
from traceidx.analysis import rollup
from traceidx.analysis.query import connect
from traceidx.analysis.reports import (
    DEFAULT_GROUP_BY,
    DIMENSIONS,
    ReportParams,
    params,
    report_sql,
    run_report,
)
from traceidx.analysis.rows import jsonable
from traceidx.errors import ReportError
from traceidx.pipeline.job import build

#: the machine's zone while the rollups are written (and the CLI runs)
ZONE = "America/Los_Angeles"
GROUP_BYS: tuple[tuple[str, ...], ...] = (
    DEFAULT_GROUP_BY,
    ("project",),
    ("agent", "origin"),
    ("origin", "runtime"),
    DIMENSIONS,
)
#: runs the CLI as `traceidx` does, then says on stderr which data libraries it loaded
CLI_SAYING_WHAT_LOADED = (
    "import sys\n"
    "from traceidx.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "heavy = [m for m in ('duckdb', 'pyarrow', 'polars') if m in sys.modules]\n"
    "sys.stderr.write(f'loaded: {heavy}\\n')\n"
    "sys.exit(code)\n"
)


class Rolled:
    """A copy of a dataset with a rollup written in `ZONE`, a connection over it and the
    facts its parameter grid is made of."""

    def __init__(self, source: Path, where: Path) -> None:
        self.path = where / "dataset"
        shutil.copytree(source, self.path)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("TZ", ZONE)
            rollup.write(self.path)
        self.con = connect(self.path)
        data = rollup.read(self.path)
        assert data is not None and data["timezone"] == ZONE
        at = {c: i for i, c in enumerate(data["columns"])}
        rows = data["rows"]
        self.days = sorted({date.fromisoformat(r[0]) for r in rows if r[0]})
        billed: dict[str, int] = {}
        for row in rows:
            if row[at["calls"]] and row[at["model"]] is not None:
                billed[row[at["model"]]] = billed.get(row[at["model"]], 0) + row[at["calls"]]
        self.models = sorted(billed, key=lambda m: -billed[m])
        self.runtimes = sorted({r[at["runtime"]] for r in rows if r[at["runtime"]]})
        assert len(self.days) >= 4 and len(self.models) >= 2 and len(self.runtimes) >= 2

    def filters(self) -> list[dict[str, Any]]:
        """since/until inside and at the edges of the data, runtimes, models, and all at once."""
        first, last, middle = self.days[0], self.days[-1], self.days[len(self.days) // 2]
        return [
            {},
            {"since": first},
            {"until": last},
            {"since": middle},
            {"until": middle},
            {"since": middle, "until": middle},
            {"since": first - timedelta(days=1), "until": last + timedelta(days=1)},
            {"since": last + timedelta(days=1)},
            {"runtimes": (self.runtimes[0],)},
            {"runtimes": tuple(self.runtimes[-2:])},
            {"models": (self.models[0],)},
            {"models": tuple(self.models[:2])},
            {
                "since": self.days[1],
                "until": self.days[-2],
                "runtimes": tuple(self.runtimes),
                "models": (self.models[0],),
            },
        ]

    def sql(self, p: ReportParams) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The report's columns and rows through its SQL (other prices on a connection of
        their own: they replace the connection's)."""
        if p.prices is None:
            rel = run_report(self.con, "usage", p)
            return list(rel.columns), rel.fetchall()
        con = connect(self.path)
        try:
            rel = run_report(con, "usage", p)
            return list(rel.columns), rel.fetchall()
        finally:
            con.close()


def typed(found: tuple[list[str], list[tuple[Any, ...]]] | None) -> Any:
    """Rows with each value's type beside it (1 and 1.0 are different outputs)."""
    assert found is not None
    columns, rows = found
    return columns, [[(type(v).__name__, v) for v in row] for row in rows]


@pytest.fixture(scope="module")
def demo_rolled(demo_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rolled]:
    rolled = Rolled(demo_dataset, tmp_path_factory.mktemp("rollup-demo"))
    yield rolled
    rolled.con.close()


@pytest.fixture(scope="module")
def traces_rolled(
    traces_dataset: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Rolled]:
    rolled = Rolled(traces_dataset, tmp_path_factory.mktemp("rollup-traces"))
    yield rolled
    rolled.con.close()


@pytest.fixture(params=["demo", "traces"])
def rolled(request: pytest.FixtureRequest) -> Rolled:
    found: Rolled = request.getfixturevalue(f"{request.param}_rolled")
    return found


@pytest.mark.parametrize("period", ["day", "week", "month"])
def test_the_rollup_answers_as_the_sql_does(rolled: Rolled, period: str) -> None:
    for group_by in GROUP_BYS:
        for given in rolled.filters():
            p = ReportParams(timezone=ZONE, period=period, group_by=group_by, **given)
            assert typed(rollup.answer(rolled.path, p)) == typed(rolled.sql(p)), p


@pytest.mark.parametrize("limit", [1, 3])
def test_a_limit_cuts_the_ordered_rows(rolled: Rolled, limit: int) -> None:
    for group_by in (DEFAULT_GROUP_BY, ("agent", "origin")):
        for given in rolled.filters()[:6]:
            p = ReportParams(timezone=ZONE, group_by=group_by, limit=limit, **given)
            found = rollup.answer(rolled.path, p)
            assert typed(found) == typed(rolled.sql(p)), p
            assert found is not None and len(found[1]) <= limit


def test_a_registered_runtime_without_data_answers_no_rows(demo_rolled: Rolled) -> None:
    from traceidx import runtimes

    absent = sorted(set(runtimes.names()) - set(demo_rolled.runtimes))
    assert absent, "the demo has every runtime: pick another absent one"
    p = ReportParams(timezone=ZONE, runtimes=(absent[0],))
    assert typed(rollup.answer(demo_rolled.path, p)) == typed(demo_rolled.sql(p))


def test_what_the_rollup_cannot_answer_exactly_goes_to_the_sql(demo_rolled: Rolled) -> None:
    path = demo_rolled.path
    prices = path.parent / "prices.json"
    prices.write_text(json.dumps({"models": []}))
    for p in (
        ReportParams(timezone="Asia/Tokyo"),  # another zone
        ReportParams(timezone=ZONE, prices=prices),  # other prices
        ReportParams(timezone=ZONE, models=("no-such-model",)),  # the SQL names the models
        ReportParams(timezone=ZONE, runtimes=("no-such-runtime",)),  # the SQL says it is none
        ReportParams(timezone=ZONE, group_by=()),  # the SQL says what to give
        ReportParams(timezone=ZONE, group_by=("tool",)),
        ReportParams(timezone=ZONE, period="year"),
        ReportParams(timezone=ZONE, since=date(2026, 2, 1), until=date(2026, 1, 1)),
    ):
        assert rollup.answer(path, p) is None, p
    with pytest.raises(ReportError):
        demo_rolled.sql(ReportParams(timezone=ZONE, group_by=()))
    with pytest.MonkeyPatch.context() as patch:  # an override file in effect since
        patch.setenv("TRACEIDX_PRICES", str(prices))
        assert rollup.answer(path, ReportParams(timezone=ZONE)) is None
    assert rollup.answer(path, ReportParams(timezone=ZONE)) is not None


def run(*args: str, fast: bool) -> subprocess.CompletedProcess[str]:
    """The CLI in `ZONE`: as a user runs it, or (`fast`) saying on stderr what it loaded."""
    if not fast:
        return traceidx_cli(*args, env={"TZ": ZONE})
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run(
        [sys.executable, "-c", CLI_SAYING_WHAT_LOADED, *args],
        capture_output=True,
        text=True,
        env={**env, "TZ": ZONE},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--period", "week", "--group-by", "project,agent"],
        ["--period", "month", "--group-by", "origin,runtime", "--since", "MIDDLE", "--limit", "3"],
        ["--runtime", "RUNTIME", "--model", "MODEL", "--until", "MIDDLE", "--wide"],
    ],
)
def test_the_cli_prints_the_same_bytes_with_and_without_the_rollup(
    demo_rolled: Rolled, options: list[str]
) -> None:
    values = {
        "MIDDLE": demo_rolled.days[len(demo_rolled.days) // 2].isoformat(),
        "RUNTIME": demo_rolled.runtimes[0],
        "MODEL": demo_rolled.models[0],
    }
    path = demo_rolled.path
    args = ["report", "usage", "--dataset", str(path), *(values.get(o, o) for o in options)]
    for fmt in ("json", "table") if "--wide" not in options else ("table",):
        (path / rollup.NAME).unlink()
        slow = run(*args, "--format", fmt, fast=False)  # runs the SQL, then writes the rollup
        assert slow.returncode == 0 and slow.stderr == "", slow.stderr
        assert rollup.current(path, ZONE) is not None
        fast = run(*args, "--format", fmt, fast=True)
        assert fast.returncode == 0 and fast.stderr == "loaded: []\n", fast.stderr
        assert fast.stdout == slow.stdout, (fmt, options)


def test_the_answer_loads_no_data_library(demo_rolled: Rolled) -> None:
    path = str(demo_rolled.path)
    for options in ([], ["--format", "csv", "--period", "week", "--group-by", "project"]):
        done = run("report", "usage", "--dataset", path, *options, fast=True)
        assert done.returncode == 0 and done.stderr == "loaded: []\n", done.stderr
        assert done.stdout.count("\n") > 5
    slower = run("report", "usage", "--dataset", path, "--timezone", "UTC", fast=True)
    assert slower.returncode == 0 and "duckdb" in slower.stderr


def test_another_zone_or_prices_bypass_the_rollup(demo_rolled: Rolled) -> None:
    path = demo_rolled.path
    written = (path / rollup.NAME).read_bytes()
    prices = path.parent / "flat-prices.json"
    flat = {"pattern": ".", "input": 1, "cached_input": 0.1, "cache_write": 1, "output": 2}
    prices.write_text(json.dumps({"models": [flat]}))
    for options, p in (
        (["--timezone", "Asia/Tokyo"], params(timezone="Asia/Tokyo")),
        (["--prices", str(prices)], params(timezone=ZONE, prices=prices)),
    ):
        done = run(
            "report", "usage", "--dataset", str(path), "--format", "json", *options, fast=True
        )
        assert done.returncode == 0 and "duckdb" in done.stderr
        columns, rows = demo_rolled.sql(p)
        assert json.loads(done.stdout) == [
            {c: jsonable(v) for c, v in zip(columns, row, strict=True)} for row in rows
        ]
    assert (path / rollup.NAME).read_bytes() == written  # the rollup is the default's only


def test_a_damaged_rollup_is_ignored_and_replaced(demo_rolled: Rolled) -> None:
    path = demo_rolled.path
    p = ReportParams(timezone=ZONE, period="week")
    good = (path / rollup.NAME).read_text()
    data = json.loads(good)
    data["rows"][0][data["columns"].index("cost_usd")] = 0.5  # a cost that is not exact text
    for damaged in ("{not json", "[]", json.dumps({**data, "rows": [[1]]}), json.dumps(data)):
        (path / rollup.NAME).write_text(damaged)
        assert rollup.answer(path, p) is None
    done = run("report", "usage", "--dataset", str(path), "--format", "json", fast=True)
    assert done.returncode == 0 and "duckdb" in done.stderr
    assert len(json.loads(done.stdout)) == len(demo_rolled.sql(ReportParams(timezone=ZONE))[1])
    assert typed(rollup.answer(path, p)) == typed(demo_rolled.sql(p))  # written afresh


def test_a_new_build_makes_the_rollup_stale(demo_dataset: Path, tmp_path: Path) -> None:
    traces = demo_dataset.parent / "traces"
    dataset = tmp_path / "dataset"
    assert build([traces / "codex"], dataset, jobs=1).exit_code == 0
    done = traceidx_cli("summarize", "--dataset", str(dataset), env={"TZ": ZONE})
    assert done.returncode == 0 and rollup.NAME in done.stdout
    p = ReportParams(timezone=ZONE)
    before = rollup.answer(dataset, p)
    assert before is not None and {row[1] for row in before[1]} == {"codex"}
    assert build([traces], dataset, jobs=1).exit_code == 0
    assert rollup.answer(dataset, p) is None
    con = connect(dataset)
    try:
        rel = run_report(con, "usage", p)
        columns, rows = list(rel.columns), rel.fetchall()
    finally:
        con.close()
    assert len({row[1] for row in rows}) > 1
    done = run("report", "usage", "--dataset", str(dataset), "--format", "json", fast=True)
    assert done.returncode == 0 and "duckdb" in done.stderr
    assert json.loads(done.stdout) == [
        {c: jsonable(v) for c, v in zip(columns, row, strict=True)} for row in rows
    ]
    assert typed(rollup.answer(dataset, p)) == typed((columns, rows))  # and the fresh rollup


def test_the_cost_is_summed_exactly() -> None:
    """The report sums each call's cost as a decimal: every grouping adds up to the same cost
    (a float sum depends on the order of its terms)."""
    con = duckdb.connect()
    terms = "(0.1::DOUBLE), (0.2::DOUBLE), (0.0000005::DOUBLE)"
    exact = con.sql(f"SELECT sum(x::DECIMAL(38, 15)) FROM (VALUES {terms}) AS t(x)").fetchall()
    assert str(exact[0][0]) == "0.300000500000000"
    usage = report_sql("usage")
    assert "c.cost_usd::DECIMAL(38, 15) AS cost_usd" in usage and rollup._COST in usage
