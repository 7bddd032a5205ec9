"""Fuzzing: real trace lines of every runtime, damaged by hypothesis, go through the pipeline.

The mutations (``tests/fuzzing.py``): keys dropped, values retyped, keys duplicated, strings
truncated, bytes that are not UTF-8 (inside strings and outside), odd escapes, integers past
int64, a whole line retyped (valid JSON, not an object), lines truncated, joined (sometimes
holding JSON only a lenient decoder takes: NaN, a lone surrogate escape), split, doubled,
blank lines, an unterminated tail; at any depth of a record, mostly after a source's first
lines, sometimes on its header. ``TRACEIDX_FUZZ_EXAMPLES=2000`` runs a longer hunt.

What must hold, per source (`ingest`) and per build (`build`):

* nothing raises: a source an adapter trips over is ``failed``, with a reason that names the
  line ("line N"), and only that source;
* the state is ``indexed``, ``skipped`` or ``failed``; a source whose header is intact is
  claimed by its runtime's adapter;
* an indexed source has exactly one Record per complete line, by the framing rules
  (``traceidx/sources/frame.py``): a Record is the bytes up to each ``\\n`` (``\\r`` kept); a blank
  line (even an empty one) is a Record too, whose line is not JSON (``malformed``); bytes after
  the last ``\\n`` are an unterminated tail, not a Record. Each Record's byte range,
  fingerprint and parse status are what the line's bytes say: ``ok`` when they are one JSON
  value, ``joined`` when they are several JSON objects back to back, ``malformed`` otherwise;
* a build publishes every source it does not fail, and counts its records exactly.

The reproducers at the end are what the fuzzing found: each once failed a source without
naming its line, or ended the build.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import msgspec
import pytest
import zstandard
from hypothesis import HealthCheck, currently_in_test_context, event, given, note, settings
from hypothesis import strategies as st

from tests.support.fuzzing import (
    ALL_SEEDS,
    RUNTIMES,
    SEEDS,
    Mutated,
    Obj,
    Raw,
    Seed,
    dump,
    get,
    mutated_sources,
    put,
    slots,
    tree,
)
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.projection.ingest import Settings, SourceResult, ingest, split_joined
from traceidx.sources.frame import fingerprint

SKIP_REASONS = (
    "no complete line",
    "no adapter recognises its structure",
    "no record states a session identity",
)
LINE_REASON = re.compile(r"\bon line (\d+)\b")

#: examples per runtime (``TRACEIDX_FUZZ_EXAMPLES`` raises it for a longer hunt)
EXAMPLES = int(os.environ.get("TRACEIDX_FUZZ_EXAMPLES", "150"))
fuzz = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def framed(data: bytes) -> list[tuple[int, int, bytes]]:
    """(start, end, bytes) of each complete line, counted independently of traceidx."""
    out, start = [], 0
    while (nl := data.find(b"\n", start)) >= 0:
        out.append((start, nl, data[start:nl]))
        start = nl + 1
    return out


def parse_status(line: bytes) -> str:
    try:
        msgspec.json.decode(line)
    except msgspec.DecodeError:
        return "joined" if split_joined(line) else "malformed"
    return "ok"


def check_source(result: SourceResult, source: Mutated) -> None:
    """Everything a source's result must satisfy, whatever its bytes."""
    data = source.data
    lines = framed(data)
    if currently_in_test_context():
        note(f"{source.seed.name}: {source.steps} -> {result.state}: {result.reason}")
        event(result.state)
    assert result.state in ("indexed", "skipped", "failed")
    if source.header_intact:
        assert result.runtime == source.seed.runtime, result.reason
    if result.state == "failed":
        assert result.reason is not None
        found = LINE_REASON.search(result.reason)
        assert found, f"a failure must name its line: {result.reason}"
        assert 1 <= int(found.group(1)) <= len(lines)
        return
    if result.state == "skipped":
        assert result.reason is not None
        assert any(known in result.reason for known in SKIP_REASONS), result.reason
        return
    assert result.reason is None
    assert result.record_count == len(lines)
    assert result.indexed_bytes == (lines[-1][1] + 1 if lines else 0)
    assert result.tail_bytes == len(data) - result.indexed_bytes
    records = result.records.objects()
    assert len(records) == len(lines)
    statuses = []
    for position, (record, (start, end, line)) in enumerate(zip(records, lines, strict=True)):
        assert record.source_position == position
        assert (record.content_range.start, record.content_range.end) == (start, end)
        assert record.fingerprint == fingerprint(line)
        assert record.parse_status == parse_status(line), line[:200]
        statuses.append(record.parse_status)
    assert result.malformed == statuses.count("malformed")
    assert result.joined == statuses.count("joined")
    assert result.oversized == 0
    assert result.projection is not None and result.source is not None


def write(folder: Path, name: str, source: Mutated, compress: bool = False) -> Path:
    if compress:  # as dsh writes its logs
        path = folder / f"{name}.zstd"
        path.write_bytes(zstandard.ZstdCompressor().compress(source.data))
    else:
        path = folder / name
        path.write_bytes(source.data)
    return path


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=lambda s: f"{s.runtime}:{s.name}")
def test_every_seed_is_indexed_whole(seed: Seed) -> None:
    """The seeds themselves: claimed by their runtime's adapter, every line a clean Record."""
    result = ingest(str(seed.path.resolve()), Settings())
    check_source(result, Mutated(seed, seed.data(), []))
    assert result.state == "indexed" and result.malformed == 0 and result.joined == 0
    assert result.loop_count >= 1 and result.item_count >= 1


@pytest.mark.parametrize("runtime", RUNTIMES)
@fuzz
@given(data=st.data())
def test_a_mutated_source_is_ingested_or_fails_on_its_line(
    runtime: str, data: st.DataObject
) -> None:
    seed = data.draw(st.sampled_from(SEEDS[runtime]), label="seed")
    source = data.draw(mutated_sources(seed), label="source")
    compress = runtime == "dsh" and data.draw(st.booleans(), label="zstd")
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), seed.name, source, compress)
        result = ingest(str(path.resolve()), Settings())
    check_source(result, source)
    if compress and result.state == "indexed":
        assert result.stream.compression == "zstd"


@st.composite
def folders(draw: st.DrawFn) -> list[Mutated]:
    """Mutated sources of every runtime (one to two each)."""
    out = []
    for runtime in RUNTIMES:
        for _ in range(draw(st.integers(1, 2))):
            seed = draw(st.sampled_from(SEEDS[runtime]))
            out.append(draw(mutated_sources(seed)))
    return out


@settings(fuzz, max_examples=max(EXAMPLES // 8, 4))
@given(sources=folders())
def test_a_build_of_mutated_and_untouched_sources_publishes_all_it_does_not_fail(
    sources: list[Mutated],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "traces"
        untouched = {}
        for seed in ALL_SEEDS:
            target = root / "untouched" / seed.runtime / seed.name
            seed.copy_to(target)
            untouched[str(target.resolve())] = seed
        mutated = {}
        (root / "mutated").mkdir()
        for index, source in enumerate(sources):
            path = write(root / "mutated", f"{index:02d}-{source.seed.name}", source)
            mutated[str(path.resolve())] = source
        report = build([root], Path(tmp) / "dataset", jobs=1)
        results = {r.locator: r for r in report.results}
        assert set(results) == set(untouched) | set(mutated)
        for locator, seed in untouched.items():
            outcome = results[locator]
            assert outcome.state == "indexed", (seed.name, outcome.reason)
            assert report.sources[locator].records == len(seed.lines)
        for locator, source in mutated.items():
            outcome = results[locator]
            note(f"{source.seed.name}: {source.steps} -> {outcome.state}: {outcome.reason}")
            assert outcome.state in ("indexed", "skipped", "failed")
            if outcome.state == "failed":
                assert outcome.reason and LINE_REASON.search(outcome.reason), outcome.reason
            if outcome.state == "indexed":
                assert report.sources[locator].records == len(framed(source.data))
        assert report.exit_code == (1 if report.count("failed") else 0)
        indexed = [e for e in report.sources.values() if e.state == "indexed"]
        assert len(indexed) == report.count("indexed")
        # a mutated source whose records are all a seed's first ones is a copy, counted once
        counted = [e for e in indexed if e.counted]
        for entry in indexed:
            if not entry.counted:
                assert entry.duplicate_of is not None
                assert report.sources[entry.duplicate_of].records >= entry.records
        published = connect(Path(tmp) / "dataset").execute("SELECT count(*) FROM records")
        assert published.fetchall()[0][0] == sum(e.records for e in counted)


# --- reproducers of what the fuzzing found ---------------------------------------------------


def _with(seed: Seed, index: int, key: str, value: object) -> bytes:
    """Line `index` of a seed with every member named `key` (at any depth) set to `value`."""
    root = tree(msgspec.json.decode(seed.lines[index]))
    places = [p for p in slots(root) if isinstance(p[0], Obj) and p[0].pairs[p[1]][0] == key]
    assert places, (seed.name, index, key)
    for place in places:
        put(place, value)
    return dump(root)


def _build_one(tmp_path: Path, seed: Seed, lines: list[bytes]) -> tuple[Mutated, str, str | None]:
    """Build a folder holding `lines` as a copy of `seed`: (the source, its state, reason)."""
    source = Mutated(seed, b"".join(line + b"\n" for line in lines), ["reproducer"])
    (tmp_path / "traces").mkdir()
    path = write(tmp_path / "traces", seed.name, source)
    report = build([tmp_path / "traces"], tmp_path / "dataset", jobs=1)
    (outcome,) = [r for r in report.results if r.locator == str(path.resolve())]
    return source, outcome.state, outcome.reason


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_joined_line_with_a_lone_surrogate_escape_is_a_malformed_record(
    runtime: str, tmp_path: Path
) -> None:
    """Found by fuzzing (fixed in `split_joined`): two records on one line, one holding
    ``"\\ud800"``. Python's decoder took it (msgspec refuses it on a line of its own), so a
    lone surrogate reached the adapters: the pi and dsh adapters raised UnicodeEncodeError,
    the claude and codex sources failed "while its rows were encoded" (no column can hold it)."""
    seed = SEEDS[runtime][0]
    root = tree(msgspec.json.decode(seed.lines[3]))
    for place in slots(root):
        if isinstance(get(place), str):
            put(place, Raw(b'"\\ud800"'))
    lines = list(seed.lines)
    lines[3:5] = [dump(root) + lines[4]]
    source, state, reason = _build_one(tmp_path, seed, lines)
    assert state == "indexed", reason
    result = ingest(str((tmp_path / "traces" / seed.name).resolve()), Settings())
    check_source(result, source)
    assert result.records.objects()[3].parse_status == "malformed"


def test_a_session_created_past_year_9999_does_not_crash_the_build(tmp_path: Path) -> None:
    """Found by fuzzing (fixed in `partition_of`): a dsh header with ``"createdAt": 2**64``
    raised ValueError (year out of range) out of `build` itself, ending the whole build."""
    seed = SEEDS["dsh"][0]
    lines = [_with(seed, 0, "createdAt", 2**64), *seed.lines[1:]]
    _, state, _ = _build_one(tmp_path, seed, lines)
    assert state in ("indexed", "skipped", "failed")


#: (runtime, seed, line index, member set past int64 at any depth in that line)
PAST_INT64 = [
    ("claude_code", "files-edit-tools", 18, "input_tokens"),
    ("codex", "failing_commands", 10, "input_tokens"),
    ("dsh", "shell-headless", 1, "time"),
    ("dsh", "shell-headless", 0, "createdAt"),
    ("pi", "continue_multiturn", 4, "input"),
]


@pytest.mark.parametrize(("runtime", "name", "index", "key"), PAST_INT64)
def test_an_integer_past_int64_reads_as_absent(
    runtime: str, name: str, index: int, key: str, tmp_path: Path
) -> None:
    """Past int64 a count or time is not believable evidence: the value is absent (the Record
    keeps it); a session header whose creation time is such a value is not claimed."""
    (seed,) = [s for s in SEEDS[runtime] if s.name.startswith(name)]
    lines = list(seed.lines)
    lines[index] = _with(seed, index, key, 2**64)
    _, state, reason = _build_one(tmp_path, seed, lines)
    expected = "skipped" if index == 0 else "indexed"
    assert state == expected, reason
