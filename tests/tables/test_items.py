"""Column-wise items: the table built from columns holds what encoding their Item objects does,
each run's rows grouped by value shape."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tests.support.files import CORPUS, ROOT
from traceidx.projection.ingest import Settings, ingest
from traceidx.projection.items import ItemColumns
from traceidx.runtimes import RUNTIMES, names
from traceidx.tables.items import items_table
from traceidx.tables.schema import SHAPE_BY_ROLE, SHAPES, to_table

ROOT = ROOT
SUFFIXES = (".jsonl", ".jsonl.zst", ".jsonl.zstd", ".messages.json")


def _files() -> list[Path]:
    roots = [CORPUS / "public", CORPUS / "generated", ROOT / "tests" / "golden"]
    return [p for root in roots for p in sorted(root.rglob("*")) if p.name.endswith(SUFFIXES)]


def test_items_table_equals_encoding_the_item_objects() -> None:
    files = _files()
    if not any(CORPUS.glob("public/*")):
        pytest.skip("the shared corpus is absent")
    runtimes, items = set(), 0
    for path in files:
        result = ingest(str(path), Settings())
        if result.projection is None:
            continue
        runs = result.projection.item_runs
        objects = result.projection.items  # converted from the columns, so validated
        table = items_table(runs)
        assert table.sort_by("item_id").equals(to_table("items", objects).sort_by("item_id"))
        _assert_grouped_by_shape(table, runs)
        runtimes.add(result.runtime)
        items += len(objects)
    # every runtime whose generated set holds trace files (a database's sessions and a session
    # folder's members are not files this test ingests alone)
    assert runtimes == _runtimes_of_files() and items > 10_000


def _runtimes_of_files() -> set[str]:
    """The runtimes whose folders of the generated set hold trace files of their own."""
    found = set()
    for name in names():
        runtime = RUNTIMES[name]
        if getattr(runtime, "folders", ()):
            continue  # its sessions are folders
        for folder in runtime.fixtures:
            files = (CORPUS / "generated" / folder).rglob("*")
            if any(p.name.endswith(SUFFIXES) and "_gen" not in p.parts for p in files):
                found.add(name)
    return found


def _assert_grouped_by_shape(table: pa.Table, runs: list[ItemColumns]) -> None:
    """The rows are the runs' rows, run after run; within a run, grouped by the shape of
    their value (in the schema's order of shapes), in emission order within a shape."""
    expected: list[int] = []
    for run in runs:
        ranks = [SHAPES.index(SHAPE_BY_ROLE[role]) for role in run.roles]
        order = sorted(range(len(run)), key=ranks.__getitem__)
        expected += [run.item_ids[at] for at in order]
    assert table["item_id"].to_pylist() == expected
