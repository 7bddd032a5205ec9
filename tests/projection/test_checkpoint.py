"""An appended long source resumes from its checkpoint and publishes what a re-read would.

For the largest public file of every runtime (without the shared corpus, the largest committed
trace of the runtime, decoded: `tests.support.facts.long_trace`), the file is written in three steps
(the second ending in the middle of a line) and built after each; the builds after the first
resume from the checkpoint. The dataset must then equal a cold build of the whole file, table
by table.
The checkpoint threshold and the drain cadence are lowered so these small files exercise it.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import traceidx.projection.ingest as ingest_module
from tests.support.facts import long_trace
from tests.support.files import fixture_path
from traceidx.adapters import adapters
from traceidx.domain.drafts import Draft, DraftItem, DraftLoop, DraftSession
from traceidx.domain.model import TABLES
from traceidx.pipeline.job import build
from traceidx.store.dataset import read_manifest
from traceidx.tables.encode import ID_COLUMNS
from traceidx.tables.schema import table_schema

RUNTIMES = ("claude", "codex", "pi", "dsh")


def largest_of(runtime: str, folder: Path) -> Path:
    """The largest public trace file of a runtime, or without the shared corpus the largest
    committed one (a plain copy written in `folder`)."""
    return long_trace(runtime, folder)


@pytest.fixture(autouse=True)
def _small_checkpoints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACEIDX_CHECKPOINT_KEY", str(tmp_path / "key"))
    monkeypatch.setattr(ingest_module, "MIN_BYTES", 0)
    monkeypatch.setattr(ingest_module, "DRAIN_EVERY", 7)
    monkeypatch.setattr(ingest_module, "FLUSH_BYTES", 4096)


def _tables(dataset: Path) -> dict[str, pa.Table]:
    manifest = read_manifest(dataset)
    assert manifest is not None
    out = {}
    for table in TABLES:
        paths = [dataset / p[table].path for p in manifest.parts.values() if table in p]
        # a table no source has rows for (model calls of a trace without usage) has no part
        tables = [pq.read_table(p) for p in paths] or [table_schema(table).empty_table()]
        data = pa.concat_tables(tables)
        out[table] = data.sort_by(ID_COLUMNS.get(table, "session_id"))
    return out


def _checkpoints(dataset: Path) -> list[str]:
    return sorted(p.name for p in (dataset / "checkpoints").iterdir())


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_resumed_appends_equal_a_cold_build(tmp_path: Path, runtime: str) -> None:
    _resumed_appends_equal_a_cold_build(tmp_path, largest_of(runtime, tmp_path / "source"))


def test_an_item_held_at_the_checkpoint_is_still_held_when_resumed(tmp_path: Path) -> None:
    # The first step of this committed transcript ends with a turn's answer, which the Claude
    # Code adapter holds (it becomes the final answer once the turn is settled): the resumed
    # adapter must still hold it, not hand it over as commentary.
    source = fixture_path(
        "generated",
        "claude",
        "s1-sierra",
        "projects",
        "-home-dev-projects-sierra",
        "10abc150-4ec9-4546-ac31-26c14714bd68.jsonl",
    )
    lines = source.read_bytes().splitlines()
    assert b'"stop_reason":"end_turn"' in lines[len(lines) * 2 // 5 - 1]
    _resumed_appends_equal_a_cold_build(tmp_path, source)


def _resumed_appends_equal_a_cold_build(tmp_path: Path, source: Path) -> None:
    data = source.read_bytes()
    lines = data.splitlines(keepends=True)
    first = b"".join(lines[: len(lines) * 2 // 5])
    middle = len(first) + len(b"".join(lines[len(lines) * 2 // 5 : len(lines) * 3 // 4])) + 9
    trace = tmp_path / "traces" / source.name
    trace.parent.mkdir()
    dataset = tmp_path / "dataset"

    trace.write_bytes(first)
    assert build([trace.parent], dataset, jobs=1).totals()["resumed"] == 0
    assert len(_checkpoints(dataset)) == 1
    trace.write_bytes(data[:middle])  # ends inside a line: that line waits
    report = build([trace.parent], dataset, jobs=1)
    assert report.exit_code == 0 and report.totals()["resumed"] == 1
    trace.write_bytes(data)
    report = build([trace.parent], dataset, jobs=1)
    assert report.exit_code == 0 and report.totals()["resumed"] == 1
    assert len(_checkpoints(dataset)) == 1  # the superseded checkpoints are collected

    cold = tmp_path / "cold"
    build([trace.parent], cold, jobs=1)
    resumed, expected = _tables(dataset), _tables(cold)
    for table in TABLES:
        assert resumed[table].equals(expected[table]), table
    entry = read_manifest(dataset).sources[str(trace.resolve())]  # type: ignore[union-attr]
    assert entry.records == len(lines)


def test_an_untrusted_checkpoint_is_never_loaded(tmp_path: Path) -> None:
    data = largest_of("claude", tmp_path / "source").read_bytes()
    lines = data.splitlines(keepends=True)
    trace = tmp_path / "traces" / "t.jsonl"
    trace.parent.mkdir()
    dataset = tmp_path / "dataset"
    trace.write_bytes(b"".join(lines[: len(lines) // 2]))
    build([trace.parent], dataset, jobs=1)
    (tmp_path / "key").write_bytes(b"another user's key, 32 bytes ok")  # not its signer
    trace.write_bytes(data)
    report = build([trace.parent], dataset, jobs=1)
    assert report.exit_code == 0 and report.totals()["resumed"] == 0  # re-read instead
    cold = tmp_path / "cold"
    build([trace.parent], cold, jobs=1)
    assert _tables(dataset)["items"].equals(_tables(cold)["items"])


def test_a_source_rewritten_behind_its_checkpoint_is_re_read(tmp_path: Path) -> None:
    data = largest_of("codex", tmp_path / "source").read_bytes()
    lines = data.splitlines(keepends=True)
    half = b"".join(lines[: len(lines) // 2])
    trace = tmp_path / "traces" / "t.jsonl"
    trace.parent.mkdir()
    dataset = tmp_path / "dataset"
    trace.write_bytes(half)
    build([trace.parent], dataset, jobs=1)
    # same first bytes, grown, but the last line before the checkpoint changed
    last = lines[len(lines) // 2 - 1]
    edited = half[: -len(last)] + last.replace(b'"', b'"', 1)[:-2] + b" \n"
    assert len(edited) == len(half) and edited != half
    trace.write_bytes(edited + b"".join(lines[len(lines) // 2 :]))
    report = build([trace.parent], dataset, jobs=1)
    assert report.exit_code == 0 and report.totals()["resumed"] == 0
    cold = tmp_path / "cold"
    build([trace.parent], cold, jobs=1)
    for table in TABLES:
        assert _tables(dataset)[table].equals(_tables(cold)[table]), table


def test_pruning_a_source_collects_its_checkpoint(tmp_path: Path) -> None:
    from traceidx.pipeline.job import prune

    trace = tmp_path / "traces" / "t.jsonl"
    trace.parent.mkdir()
    trace.write_bytes(largest_of("pi", tmp_path / "source").read_bytes())
    dataset = tmp_path / "dataset"
    build([trace.parent], dataset, jobs=1)
    assert len(_checkpoints(dataset)) == 1
    trace.unlink()
    build([trace.parent], dataset, jobs=1)  # missing: facts and checkpoint are kept
    assert len(_checkpoints(dataset)) == 1
    assert prune(dataset).removed == [str(trace.resolve())]
    assert _checkpoints(dataset) == []


def test_a_resumed_source_whose_month_is_split_equals_a_cold_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from traceidx.demo import copy_ids

    data = largest_of("claude", tmp_path / "source").read_bytes()
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "other.jsonl").write_bytes(copy_ids(data, 1))  # another session, same month
    # a copy whose session id is odd: in a bucket other than the first once the month splits
    data = next(c for k in range(2, 99) if _session_id(c := copy_ids(data, k)) % 2 == 1)
    lines = data.splitlines(keepends=True)
    cuts = [len(lines) // 3, 2 * len(lines) // 3, len(lines)]
    trace = folder / "long.jsonl"
    trace.write_bytes(b"".join(lines[: cuts[0]]))
    dataset = tmp_path / "dataset"
    build([folder], dataset, jobs=1)
    assert set(read_manifest(dataset).buckets.values()) == {1}  # type: ignore[union-attr]
    monkeypatch.setattr("traceidx.pipeline.publish.PART_RECORDS", 1)  # the month must split now
    for cut in cuts[1:]:
        trace.write_bytes(b"".join(lines[:cut]))
        report = build([folder], dataset, jobs=1)
        assert report.exit_code == 0
        # each resumes: after the split too (its checkpoint was made in the month's one part,
        # its rows now are in a bucket of it), without reading the file from byte 0 again
        assert report.totals()["resumed"] == 1
    manifest = read_manifest(dataset)
    assert manifest is not None and max(manifest.buckets.values()) >= 2
    assert not manifest.sources[str(trace)].partition.endswith("/0")  # type: ignore[union-attr]
    cold = tmp_path / "cold"
    build([folder], cold, jobs=1)
    resumed, expected = _tables(dataset), _tables(cold)
    for table in TABLES:
        assert resumed[table].equals(expected[table]), table


def _session_id(data: bytes) -> int:
    """The Session id of a Claude Code transcript (from the first line naming its session)."""
    import json

    from traceidx.domain import ids

    line = next(line for line in data.splitlines() if b'"sessionId"' in line)
    return ids.session_id("claude_code", json.loads(line)["sessionId"])


def test_adapters_and_drafts_made_from_python_are_whole_and_pickle() -> None:
    # checkpoints pickle the adapter's state with its drafts
    for runtime, cls in adapters().items():
        adapter = cls()
        assert adapter.items == [] and adapter.session is None, runtime
        again = pickle.loads(pickle.dumps(adapter))
        assert type(again) is cls and again.items == [] and again.session is None, runtime
    loop = DraftLoop(3, model_id="m")
    item = DraftItem("agent.commentary", "structural", {"text": "x"}, [3], loop, call_id="c")
    assert (item.loop, item.records, item.occurred_at, item.call_id) == (loop, [3], None, "c")
    session = DraftSession("s", 0, name="n")
    draft = Draft(session, [loop], [item])
    assert pickle.loads(pickle.dumps(draft)) == draft and draft.unknown_types == {}


def test_a_copy_that_grows_is_read_whole_and_wins(tmp_path: Path) -> None:
    """A copy published none of the rows its checkpoint settled: appended to, it is read
    from its first byte (not resumed), and as the longer file it becomes the original."""
    source = largest_of("codex", tmp_path / "source")
    lines = source.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    original, copy = tmp_path / "a" / source.name, tmp_path / "c" / source.name
    for path in (original, copy):
        path.parent.mkdir()
        path.write_bytes(b"".join(lines[:half]))
    dataset = tmp_path / "dataset"
    build([original], dataset, jobs=1, origin="one")
    report = build([copy], dataset, jobs=1, origin="two")
    assert report.copies == {str(copy): str(original)}
    manifest = read_manifest(dataset)
    assert manifest is not None and manifest.sources[str(copy)].checkpoint is not None

    with copy.open("ab") as out:
        out.writelines(lines[half:])
    report = build([copy], dataset, jobs=1)
    assert not any(r.resumed for r in report.results)
    assert report.copies == {str(original): str(copy)}
    cold = tmp_path / "cold"
    build([source], cold, jobs=1)
    grown, alone = _tables(dataset), _tables(cold)
    for table in ("loops", "items", "records"):
        assert grown[table].num_rows == alone[table].num_rows, table
    sources = grown["sources"].to_pydict()
    origins = dict(zip(sources["locator"], sources["origin"], strict=True))
    assert origins == {str(original): "one", str(copy): "two"}
