"""Partition layout: a group's buckets double as it grows, and the facts never depend on it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.facts import main_transcripts, published_facts
from tests.support.files import fixture_path
from traceidx.pipeline.job import build
from traceidx.store.dataset import Partition, read_manifest
from traceidx.store.manifest import LEGACY_BUCKETS

SESSIONS = ("s1-fjord", "s1-aurora", "s1-vega", "s1-sierra", "s1-xenon")


def _traces(tmp_path: Path, names: tuple[str, ...]) -> Path:
    traces = tmp_path / "traces"
    for name in names:
        shutil.copytree(fixture_path("generated", "claude", name), traces / name)
    return traces


def _check_layout(dataset: Path) -> dict[str, int]:
    """Every source sits in bucket session_id % n of its group, and every row of it in that
    partition's parts; every part is a bucket < n."""
    manifest = read_manifest(dataset)
    assert manifest is not None
    layout: dict[str, int] = manifest.buckets
    home = {}
    for entry in manifest.sources.values():
        if entry.state == "indexed":
            assert entry.partition is not None and entry.session_id is not None
            where = Partition.from_key(entry.partition)
            assert where.bucket == entry.session_id % layout[where.group]
            home[entry.source_id] = entry.partition
    for key, tables in manifest.parts.items():
        where = Partition.from_key(key)
        assert where.bucket < layout[where.group]
        for table, part in tables.items():
            rows = pq.read_table(dataset / part.path).to_pylist()
            sources = [r["source_ids"][0] if table == "sessions" else r["source_id"] for r in rows]
            assert rows and all(home[source] == key for source in sources), (key, table)
    return layout


def test_a_small_group_is_one_partition(tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    build([_traces(tmp_path, SESSIONS)], dataset, jobs=1)
    layout = _check_layout(dataset)
    manifest = read_manifest(dataset)
    assert manifest is not None
    assert set(layout.values()) == {1}
    assert len(manifest.parts) == len(layout)


@pytest.mark.parametrize("route_targets", [1, 4])
def test_a_group_that_outgrows_its_buckets_is_split_and_keeps_its_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route_targets: int
) -> None:
    monkeypatch.setattr(
        "traceidx.pipeline.publish.ROUTE_TARGETS", route_targets
    )  # new parts per read
    traces = _traces(tmp_path, SESSIONS[:2])
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    assert set(_check_layout(dataset).values()) == {1}
    monkeypatch.setattr("traceidx.pipeline.publish.PART_RECORDS", 40)
    for name in SESSIONS[2:]:
        shutil.copytree(fixture_path("generated", "claude", name), traces / name)
    report = build([traces], dataset, jobs=2)
    assert report.changed
    layout = _check_layout(dataset)
    assert max(layout.values()) >= 4
    fresh = tmp_path / "fresh"
    build([traces], fresh, jobs=1)
    assert published_facts(dataset) == published_facts(fresh)
    again = build([traces], dataset, jobs=1)  # the grown layout is stable
    assert not again.changed and _check_layout(dataset) == layout


@pytest.mark.parametrize("route_targets", [1, 4])
def test_a_first_build_that_needs_many_buckets_writes_them_from_the_spool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route_targets: int
) -> None:
    traces = _traces(tmp_path, SESSIONS)
    reference = tmp_path / "reference"
    build([traces], reference, jobs=1)  # one bucket per group
    monkeypatch.setattr("traceidx.pipeline.publish.ROUTE_TARGETS", route_targets)
    monkeypatch.setattr("traceidx.pipeline.publish.PART_RECORDS", 40)
    for jobs in (1, 2):
        dataset = tmp_path / f"ds-{jobs}"
        build([traces], dataset, jobs=jobs)
        assert max(_check_layout(dataset).values()) >= 4
        assert published_facts(dataset) == published_facts(reference)
    assert _parts(tmp_path / "ds-1") == _parts(tmp_path / "ds-2")  # row for row


def _parts(dataset: Path) -> dict[str, list[dict[str, object]]]:
    manifest = read_manifest(dataset)
    assert manifest is not None
    return {
        f"{key}/{table}": pq.read_table(dataset / part.path).to_pylist()
        for key, tables in manifest.parts.items()
        for table, part in tables.items()
    }


def test_a_manifest_without_bucket_counts_reads_as_the_legacy_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traces = _traces(tmp_path, SESSIONS)
    dataset = tmp_path / "ds"
    monkeypatch.setattr(
        "traceidx.pipeline.publish.Publication._grown",
        lambda self: {
            Partition.from_key(e.partition).group: LEGACY_BUCKETS
            for e in self.entries.values()
            if e.partition is not None
        },
    )
    build([traces], dataset, jobs=1)
    monkeypatch.undo()
    manifest_path = dataset / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert set(manifest.pop("buckets").values()) == {LEGACY_BUCKETS}
    manifest_path.write_text(json.dumps(manifest))  # as a dataset written before buckets were kept
    with open(main_transcripts(traces)[0], "ab") as out:
        out.write(b'{"type":"unknown-kind"}\n')
    report = build([traces], dataset, jobs=1)
    assert report.changed and report.actions["appended"] == 1
    assert set(_check_layout(dataset).values()) == {LEGACY_BUCKETS}
    fresh = tmp_path / "fresh"
    build([traces], fresh, jobs=1)
    assert published_facts(dataset) == published_facts(fresh)


def test_one_session_larger_than_a_part_stays_one_bucket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("traceidx.pipeline.publish.PART_RECORDS", 1)
    source = main_transcripts(fixture_path("generated", "claude", "s1-vega"))[0]
    traces = tmp_path / "traces"
    traces.mkdir()
    shutil.copy(source, traces / source.name)
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    assert set(_check_layout(dataset).values()) == {1}
