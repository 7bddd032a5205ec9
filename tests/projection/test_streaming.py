"""Long sources stream: settled rows leave the worker while the file is read, changing nothing.

The shared corpus's public traces (without it, the committed fixtures) are built twice in
process: once with the defaults (no such file reaches the flush threshold) and once draining
every record and flushing at every drain, so that every source's rows reach the dataset in many
pieces through spool files. Both datasets must hold exactly the same facts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import traceidx.pipeline.worker as worker_module
import traceidx.projection.ingest as ingest_module
from tests.support.files import FIXTURES, WITH_CORPUS, corpus_path
from traceidx.domain.model import TABLES
from traceidx.pipeline.job import build
from traceidx.store.dataset import read_manifest
from traceidx.tables.encode import ID_COLUMNS


def _table(dataset: Path, table: str) -> pa.Table:
    manifest = read_manifest(dataset)
    assert manifest is not None
    paths = [dataset / part[table].path for part in manifest.parts.values() if table in part]
    data = pa.concat_tables([pq.read_table(p) for p in paths])
    key = ID_COLUMNS.get(table, "session_id")
    return data.sort_by(key)


def test_streamed_sources_publish_the_same_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = (
        [corpus_path("public", rt) for rt in ("claude", "codex", "pi", "dsh")]
        if WITH_CORPUS
        else [FIXTURES / "generated", FIXTURES / "handwritten"]
    )
    whole = build(roots, tmp_path / "whole", jobs=1)
    spilled: list[Any] = []
    spool = worker_module.spool

    def counting(path: Path, table: str, runs: list[tuple[str, pa.Table]]) -> Any:
        if path.name.startswith("source-"):
            spilled.append(path)
        return spool(path, table, runs)

    monkeypatch.setattr(ingest_module, "DRAIN_EVERY", 1)
    monkeypatch.setattr(ingest_module, "FLUSH_BYTES", 1)
    monkeypatch.setattr(worker_module, "spool", counting)
    streamed = build(roots, tmp_path / "streamed", jobs=1)
    assert whole.exit_code == streamed.exit_code == 0
    assert len(spilled) > 1000  # rows really went through spool files, piece by piece
    assert whole.totals() == streamed.totals()
    for table in TABLES:
        assert _table(tmp_path / "whole", table).equals(_table(tmp_path / "streamed", table)), table
    assert not list((tmp_path / "streamed").glob(".staging-*"))  # spool files are cleaned up
