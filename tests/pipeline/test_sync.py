"""Incremental sync: only changed sources are re-read and rewritten, as a fresh build would."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import traceidx.pipeline.job
import traceidx.pipeline.plan
import traceidx.pipeline.staging
import traceidx.pipeline.worker
import traceidx.projection.ingest
import traceidx.sources.records
import traceidx.sources.stream
from tests.support.facts import main_transcripts, published_facts
from tests.support.files import fixture_path
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build, prune
from traceidx.pipeline.sync import Decision
from traceidx.pipeline.worker import BATCH_BYTES, BATCH_SOURCES, TAIL_BYTES, TAIL_SPLIT
from traceidx.projection.ingest import Settings
from traceidx.runtimes import RUNTIMES
from traceidx.sources.frame import LEGACY_ALGORITHM, fingerprint
from traceidx.sources.sourceio import read_range
from traceidx.store.dataset import read_manifest


def _copy(tmp_path: Path, *parts: str) -> Path:
    target = tmp_path / "traces" / parts[-1]
    shutil.copytree(fixture_path(*parts), target)
    return target


def _parts(dataset: Path) -> dict[str, bytes]:
    manifest = read_manifest(dataset)
    assert manifest is not None
    return {f: (dataset / f).read_bytes() for fs in manifest.tables().values() for f in fs}


def test_a_noop_rebuild_reads_nothing_and_publishes_nothing(tmp_path: Path) -> None:
    traces = _copy(tmp_path, "generated", "claude", "s1-fjord")
    dataset = tmp_path / "ds"
    first = build([traces], dataset, jobs=1)
    parts = _parts(dataset)
    second = build([traces], dataset, jobs=1)
    assert not second.changed and second.generation == first.generation
    assert second.actions["unchanged"] == len(first.results)
    assert set(second.actions) == {"unchanged"}
    assert _parts(dataset) == parts


def test_appending_rewrites_only_the_partition_of_that_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "traceidx.pipeline.publish.PART_RECORDS", 20
    )  # these sessions fill many buckets
    traces = tmp_path / "traces"
    for name in ("s1-fjord", "s1-aurora", "s1-vega", "s1-sierra", "s1-xenon"):
        shutil.copytree(fixture_path("generated", "claude", name), traces / name)
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    before = _parts(dataset)
    target = main_transcripts(traces / "s1-vega")[0]
    lines = target.read_bytes().splitlines(keepends=True)
    head, tail = b"".join(lines[:-3]), b"".join(lines[-3:])
    # start from a shorter file, then append its real last lines
    target.write_bytes(head)
    build([traces], dataset, jobs=1)
    before = _parts(dataset)
    with open(target, "ab") as out:
        out.write(tail)
    report = build([traces], dataset, jobs=1)
    assert report.changed and report.actions["appended"] == 1
    after = _parts(dataset)
    manifest = read_manifest(dataset)
    assert manifest is not None
    entry = manifest.sources[str(target.resolve())]
    assert manifest.buckets[entry.partition.rsplit("/", 1)[0]] > 2
    rewritten = {f for f in after if f not in before}
    assert rewritten and all(f"/month={entry.partition.split('/')[1]}/" in f for f in rewritten)
    assert all(f.endswith(f"-{entry.partition.split('/')[2]}.parquet") for f in rewritten)
    untouched = set(after) - rewritten
    assert untouched and all(after[f] == before[f] for f in untouched)
    fresh = tmp_path / "fresh"
    build([traces], fresh, jobs=1)
    assert published_facts(dataset) == published_facts(fresh)


def test_an_unterminated_tail_waits_for_its_newline(tmp_path: Path) -> None:
    traces = _copy(tmp_path, "generated", "claude", "s1-aurora")
    target = main_transcripts(traces)[0]
    data = target.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    target.write_bytes(data[: last_start + 10])  # half of the last line
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    con = connect(dataset)
    lines = data.count(b"\n")
    assert con.execute("SELECT count(*) FROM records").fetchall()[0][0] == lines - 1
    target.write_bytes(data)
    build([traces], dataset, jobs=1)
    con = connect(dataset)
    assert con.execute("SELECT count(*) FROM records").fetchall()[0][0] == lines


def test_a_rewritten_file_is_reprojected_from_scratch(tmp_path: Path) -> None:
    traces = _copy(tmp_path, "generated", "claude", "s1-fjord")
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    target = main_transcripts(traces)[0]
    lines = target.read_bytes().splitlines(keepends=True)
    target.write_bytes(b"".join(lines[: len(lines) // 2]))  # truncated
    report = build([traces], dataset, jobs=1)
    assert report.actions["rewritten"] == 1
    fresh = tmp_path / "fresh"
    build([traces], fresh, jobs=1)
    assert published_facts(dataset) == published_facts(fresh)


def test_a_vanished_source_keeps_its_facts_until_pruned(tmp_path: Path) -> None:
    traces = _copy(tmp_path, "generated", "claude", "s1-vega")
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    facts = published_facts(dataset)
    target = main_transcripts(traces)[0]
    target.unlink()
    report = build([traces], dataset, jobs=1)
    assert report.actions["missing"] == 1 and report.exit_code == 0
    assert published_facts(dataset) == facts
    manifest = read_manifest(dataset)
    assert manifest and manifest.sources[str(target)].missing is True
    assert prune(dataset, dry_run=True).removed == [str(target)]
    assert published_facts(dataset) == facts
    pruned = prune(dataset)
    assert pruned.removed == [str(target)]
    con = connect(dataset)
    assert con.execute("SELECT count(*) FROM sources").fetchall()[0][0] == 0
    assert con.execute("SELECT count(*) FROM items").fetchall()[0][0] == 0


def test_a_moved_source_is_not_counted_twice(tmp_path: Path) -> None:
    traces = _copy(tmp_path, "generated", "claude", "s1-aurora")
    archive = tmp_path / "archive"
    archive.mkdir()
    dataset = tmp_path / "ds"
    build([traces, archive], dataset, jobs=1)
    facts = published_facts(dataset)
    items = len(facts["items"])
    target = main_transcripts(traces)[0]
    moved = archive / target.name
    target.rename(moved)
    report = build([traces, archive], dataset, jobs=1)
    assert report.actions["moved"] == 1
    con = connect(dataset)
    assert con.execute("SELECT count(*) FROM items").fetchall()[0][0] == items
    assert con.execute("SELECT list(locator) FROM sources").fetchall()[0][0] == [str(moved)]


def test_an_older_log_generation_is_superseded(tmp_path: Path) -> None:
    source = main_transcripts(fixture_path("generated", "claude", "s1-aurora"))[0]
    folder = tmp_path / "sessions" / "p" / "s"
    folder.mkdir(parents=True)
    shutil.copy(source, folder / "session.jsonl")
    dataset = tmp_path / "ds"
    build([tmp_path / "sessions"], dataset, jobs=1)
    shutil.copy(source, folder / "session.v1.jsonl")
    report = build([tmp_path / "sessions"], dataset, jobs=1)
    assert report.actions["superseded"] == 1
    con = connect(dataset)
    locators = con.execute("SELECT list(locator) FROM sources").fetchall()[0][0]
    assert locators == [str(folder / "session.v1.jsonl")]


def test_links_stay_resolved_when_only_the_child_changes(tmp_path: Path) -> None:
    traces = _copy(tmp_path, "generated", "claude", "s1-fjord")
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    linked = (
        "SELECT count(*) FROM items WHERE semantic.delegation.child_session_id IS NOT NULL "
        "OR semantic.subagent_report.source_session_id IS NOT NULL"
    )
    before = connect(dataset).execute(linked).fetchall()[0][0]
    assert before > 0
    child = next(p for p in sorted(traces.rglob("*.jsonl")) if "subagents" in p.parts)
    os.utime(child, ns=(1, 1))  # touched: re-read, same facts
    report = build([traces], dataset, jobs=1)
    assert report.changed and report.actions["appended"] == 1
    assert connect(dataset).execute(linked).fetchall()[0][0] == before


def test_other_settings_reproject_everything(tmp_path: Path) -> None:
    traces = _copy(tmp_path, "generated", "claude", "s1-aurora")
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    report = build([traces], dataset, jobs=1, settings=Settings(text_limit=100))
    assert report.actions["new"] == len(report.results)
    longest = "SELECT max(strlen(i.semantic.tool_output.text.value)) FROM items AS i"
    assert connect(dataset).execute(longest).fetchall()[0][0] <= 100


@pytest.mark.parametrize("jobs", [1, 2])
def test_parallel_and_serial_builds_agree(
    tmp_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # batches of four sources: the fixture's are several, so two jobs go through the pool
    monkeypatch.setattr(traceidx.pipeline.worker, "BATCH_SOURCES", 4)
    traces = fixture_path("generated", "claude")
    decisions = [Decision(str(p), "new", p.stat().st_size) for p in traces.rglob("*.jsonl")]
    assert len(traceidx.pipeline.worker.plan_batches(decisions, {})) > 2
    serial, other = tmp_path / "serial", tmp_path / f"jobs{jobs}"
    build([traces], serial, jobs=1)
    build([traces], other, jobs=jobs)
    assert _parts(serial) == _parts(other)


@given(
    st.lists(st.integers(0, 12 << 20) | st.sampled_from([0, 40 << 20]), max_size=80),
)
def test_batches_take_every_source_once_and_shrink_at_the_end(sizes: list[int]) -> None:
    """Sources go to batches in order, each once; a batch holds at most `BATCH_SOURCES`
    sources and `BATCH_BYTES` bytes (or one larger source), and at most a `TAIL_SPLIT`th of
    those bytes once only `TAIL_BYTES` bytes are left."""
    decisions = [Decision(f"s{i:03d}", "new", size) for i, size in enumerate(sizes)]
    decisions.insert(len(decisions) // 2, Decision("kept", "unchanged", 1 << 20))
    batches = traceidx.pipeline.worker.plan_batches(decisions, {"s000": "checkpoint"})
    flat = [item for batch in batches for item in batch]
    assert [work.decision.locator for work in flat] == [f"s{i:03d}" for i in range(len(sizes))]
    assert all(
        work.checkpoint == ("checkpoint" if work.decision.locator == "s000" else None)
        for work in flat
    )
    size = dict(zip((d.locator for d in decisions), (d.size for d in decisions), strict=True))
    left = sum(sizes)
    for batch in batches:
        small = left <= TAIL_BYTES  # (left: the bytes of this batch and of those after it)
        sources, most = (BATCH_SOURCES, BATCH_BYTES)
        if small:
            most = most // TAIL_SPLIT
        total = sum(size[work.decision.locator] for work in batch)
        assert len(batch) <= sources and (total <= most or len(batch) == 1)
        left -= total


def test_small_sources_at_the_end_go_in_full_batches() -> None:
    """The tail shrinks a batch's bytes, not its count of sources: many small files (as Pi
    and dsh write) are read `BATCH_SOURCES` to a batch to the end, each batch's fixed cost
    paid once per that many sources."""
    decisions = [Decision(f"s{i:04d}", "new", 4096) for i in range(3 * BATCH_SOURCES + 5)]
    batches = traceidx.pipeline.worker.plan_batches(decisions, {})
    assert sum(d.size for d in decisions) <= TAIL_BYTES  # all of it is the tail
    assert [len(batch) for batch in batches] == [BATCH_SOURCES] * 3 + [5]


def test_links_follow_the_linked_session_appearing_and_going(tmp_path: Path) -> None:
    traces = _copy(tmp_path, "generated", "claude", "s1-fjord")
    children = sorted(p for p in traces.rglob("*.jsonl") if "subagents" in p.parts)
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    for child in children:
        child.rename(hidden / child.name)
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    links = (
        "SELECT count(linked_session_id), count(semantic.delegation.child_session_id) "
        "FROM items WHERE semantic.role = 'agent.delegation' "
        "AND linked_session_id <> session_id"  # the parent's delegations, not a child's own
    )
    stated, resolved = connect(dataset).execute(links).fetchall()[0]
    assert stated > 0 and resolved == 0  # the children are not in the dataset yet
    for child in children:
        (hidden / child.name).rename(child)
    report = build([traces], dataset, jobs=1)
    assert report.actions["new"] == len(children)
    assert connect(dataset).execute(links).fetchall()[0] == (stated, stated)
    for child in children:
        child.unlink()
    build([traces], dataset, jobs=1)
    assert connect(dataset).execute(links).fetchall()[0] == (stated, stated)  # kept: missing
    prune(dataset)
    assert connect(dataset).execute(links).fetchall()[0] == (stated, 0)


def test_a_dataset_of_the_older_fingerprint_algorithm_upgrades(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Built by a version that fingerprinted with BLAKE2b-128; then one source moves and one
    # vanishes before the first build of this version.
    traces = _copy(tmp_path, "generated", "claude", "s1-aurora")
    _copy(tmp_path, "generated", "claude", "s1-beacon")
    archive = tmp_path / "archive"
    archive.mkdir()
    dataset = tmp_path / "ds"
    with monkeypatch.context() as older:
        older.setattr(traceidx.sources.stream, "FINGERPRINT_ALGORITHM", LEGACY_ALGORITHM)
        older.setattr(traceidx.pipeline.plan, "FINGERPRINT_ALGORITHM", LEGACY_ALGORITHM)
        build([traces.parent, archive], dataset, jobs=1)
    before = published_facts(dataset)
    mains = main_transcripts(traces.parent)
    assert len(mains) == 2
    moved = archive / mains[0].name
    mains[0].rename(moved)
    mains[1].unlink()
    report = build([traces.parent, archive], dataset, jobs=1)
    assert report.exit_code == 0
    assert report.actions["moved"] == 1  # recognised under the algorithm it was indexed with
    entries = read_manifest(dataset).sources  # type: ignore[union-attr]
    assert entries[str(mains[1])].missing is True
    assert entries[str(mains[1])].fingerprint == LEGACY_ALGORITHM
    assert entries[str(moved)].fingerprint is None
    con = connect(dataset)
    rows = con.execute(
        "SELECT s.locator, r.content_range.start, r.content_range.end, r.fingerprint "
        "FROM records r JOIN sources s USING (source_id)"
    ).fetchall()
    gone = [row for row in rows if row[0] == str(mains[1])]
    assert gone and len(rows) == len(before["records"])  # nothing lost, nothing doubled
    for locator, start, end, expected in rows:
        if locator != str(mains[1]):  # re-read: the current algorithm
            assert expected == fingerprint(read_range(locator, start, end))
    old_prints = {r for r in before["records"]}
    assert all(any(repr(fp) in r for r in old_prints) for *_, fp in gone)  # kept as they were


def test_a_dataset_of_the_older_id_scheme_upgrades(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Built by a version that hashed every record id with BLAKE2b; then one source vanishes.
    from traceidx.domain import ids

    def blake2b_ids(source: int, first: int, count: int) -> list[int]:
        return [ids._h("record", source, p) for p in range(first, first + count)]

    traces = _copy(tmp_path, "generated", "claude", "s1-aurora")
    dataset = tmp_path / "ds"
    with monkeypatch.context() as older:
        older.setattr(traceidx.sources.records, "record_ids", blake2b_ids)
        older.setattr(traceidx.pipeline.plan, "ID_SCHEME", "blake2b64-v1")
        build([traces], dataset, jobs=1)
    before = published_facts(dataset)
    gone = main_transcripts(traces)[0]
    gone.unlink()
    report = build([traces], dataset, jobs=1)
    assert report.exit_code == 0 and report.actions["new"] == len(report.results) - 1
    con = connect(dataset)
    rows = con.execute(
        "SELECT s.locator, r.source_id, r.source_position, r.record_id "
        "FROM records r JOIN sources s USING (source_id)"
    ).fetchall()
    assert len(rows) == len(before["records"])  # nothing lost, nothing doubled
    for locator, source, position, record_id in rows:
        kept = locator == str(gone)  # the vanished source's rows stay as they were
        old = ids._h("record", source, position)
        assert record_id == (old if kept else ids.record_id(source, position))
    orphans = con.execute(
        "SELECT count(*) FROM (SELECT unnest(record_ids) AS rid FROM items) "
        "WHERE rid NOT IN (SELECT record_id FROM records)"
    ).fetchall()[0][0]
    assert orphans == 0  # the vanished source's items still point at its records


def test_a_part_whose_sources_all_changed_is_not_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traces = _copy(tmp_path, "generated", "claude", "s1-vega")
    dataset = tmp_path / "ds"
    cut = {}
    for path in sorted(traces.rglob("*.jsonl")):  # start from shorter files...
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:-2]))
        cut[path] = b"".join(lines[-2:])
    build([traces], dataset, jobs=1)
    for path, tail in cut.items():  # ...then append their real last lines to every one
        with open(path, "ab") as out:
            out.write(tail)
    read_back: list[str | None] = []
    kept = traceidx.pipeline.staging.Stage.previous

    def spy(self: Any, table: str, previous: str | None, *rest: Any) -> Any:
        read_back.append(previous)
        return kept(self, table, previous, *rest)

    monkeypatch.setattr(traceidx.pipeline.staging.Stage, "previous", spy)
    report = build([traces], dataset, jobs=1)
    assert report.actions["appended"] == len(cut) and read_back
    assert read_back == [None] * len(read_back)  # every old row was replaced: none re-read
    fresh = tmp_path / "fresh"
    build([traces], fresh, jobs=1)
    assert published_facts(dataset) == published_facts(fresh)


def test_a_dataset_of_another_schema_is_re_projected(tmp_path: Path) -> None:
    # parts written under another schema (an older traceidx) cannot be read beside new ones
    traces = _copy(tmp_path, "generated", "claude", "s1-vega")
    dataset = tmp_path / "ds"
    first = build([traces], dataset, jobs=1)
    path = dataset / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["settings"]["schema"] = "written by an older traceidx"
    path.write_text(json.dumps(manifest))
    again = build([traces], dataset, jobs=1)
    assert again.changed and again.actions["new"] == first.actions["new"] > 0
    assert build([traces], dataset, jobs=1).actions["unchanged"] == first.actions["new"]


def test_an_adapter_that_projects_otherwise_re_projects_the_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an upgrade whose adapter version changed re-projects what older code projected
    traces = _copy(tmp_path, "generated", "claude", "s1-vega")
    dataset = tmp_path / "ds"
    first = build([traces], dataset, jobs=1)
    assert build([traces], dataset, jobs=1).actions["unchanged"] == first.actions["new"]
    bumped = dataclasses.replace(
        RUNTIMES["claude_code"], version=RUNTIMES["claude_code"].version + 1
    )
    monkeypatch.setitem(RUNTIMES, "claude_code", bumped)
    again = build([traces], dataset, jobs=1)
    assert again.changed and again.actions["new"] == first.actions["new"] > 0
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["settings"]["adapters"]["claude_code"] == bumped.version
    assert build([traces], dataset, jobs=1).actions["unchanged"] == first.actions["new"]
