"""`--runtime` scopes a build's reading, never the dataset.

A dataset of several runtimes keeps every source, session and item of the others through
`build --runtime X` and `build --rebuild --runtime X`, and a later plain build finds nothing
to do; a build that reads one runtime records nothing of the files of the others (they are
not "skipped"), so a later plain build indexes them as new.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.files import FIXTURES, traceidx_cli
from traceidx.runtimes import names

ROOT = str(FIXTURES / "generated")  # traces of every registered runtime

COUNTS = """
    SELECT s.runtime, count(DISTINCT s.source_id) AS sources,
           (SELECT count(*) FROM items i JOIN sources t USING (source_id)
            WHERE t.runtime = s.runtime) AS items
    FROM sources s GROUP BY ALL ORDER BY ALL
"""


def _ok(*args: str) -> str:
    done = traceidx_cli(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def _counts(dataset: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads(
        _ok("sql", "--dataset", str(dataset), "--format", "json", COUNTS)
    )
    return rows


def _states(dataset: Path) -> dict[str, int]:
    rows = json.loads(_ok("status", "--dataset", str(dataset), "--format", "json"))
    out: dict[str, int] = {}
    for row in rows:
        key = f"{row['runtime']}/{row['state']}"
        out[key] = out.get(key, 0) + int(row["sources"])
    return out


def test_a_runtime_filter_keeps_the_other_runtimes(tmp_path: Path) -> None:
    dataset = tmp_path / "dataset"
    _ok("build", "--dataset", str(dataset), ROOT)
    before, states = _counts(dataset), _states(dataset)
    assert {row["runtime"] for row in before} == set(names())  # every runtime has fixtures
    for extra in ([], ["--rebuild"]):
        out = _ok("build", "--dataset", str(dataset), "--runtime", "codex", *extra, ROOT)
        assert "outside" in out  # the other runtimes' sources, left as they were
        assert _counts(dataset) == before
        assert _states(dataset) == states
    out = _ok("build", "--dataset", str(dataset), ROOT)
    assert "unchanged at generation" in out  # nothing to bring back: nothing was lost
    assert _counts(dataset) == before and _states(dataset) == states


def test_files_of_other_runtimes_are_not_recorded(tmp_path: Path) -> None:
    dataset, whole = tmp_path / "dataset", tmp_path / "whole"
    _ok("build", "--dataset", str(dataset), "--runtime", "pi", ROOT)
    _ok("build", "--dataset", str(whole), ROOT)
    scoped, everything = _states(dataset), _states(whole)
    # pi's sources, and the files no adapter claims at all (runtime unknown): nothing else
    assert scoped == {k: n for k, n in everything.items() if k.startswith(("pi/", "-/"))}
    out = _ok("build", "--dataset", str(dataset), ROOT)  # the others are new to it now
    assert "new" in out.split("this run:")[1].splitlines()[0]
    assert _counts(dataset) == _counts(whole) and _states(dataset) == everything
