"""Bad input loses nothing: every problem is reported with its file (and line), good facts stay."""

from __future__ import annotations

import builtins
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import traceidx.projection.ingest as ingest_module
from tests.support.files import WITH_CORPUS, fixture_path
from tests.support.mutation import recognised_files, write_variants
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.store.dataset import read_manifest


def _transcript() -> Path:
    folder = fixture_path("generated", "claude", "s1-aurora", "projects")
    return next(p for p in sorted(folder.rglob("*.jsonl")) if "subagents" not in p.parts)


def _cli_build(dataset: Path, *paths: Path) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "traceidx.cli.main",
            "build",
            "--format",
            "json",
            "--jobs",
            "1",
            "--dataset",
            str(dataset),
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, json.loads(done.stdout), done.stderr


@pytest.fixture
def good(tmp_path: Path) -> Path:
    target = tmp_path / "traces" / "good.jsonl"
    target.parent.mkdir()
    shutil.copy(_transcript(), target)
    return target


def _items(dataset: Path) -> int:
    return int(connect(dataset).execute("SELECT count(*) FROM items").fetchall()[0][0])


def test_junk_empty_and_foreign_files_are_skipped_with_reasons(tmp_path: Path, good: Path) -> None:
    folder = good.parent
    (folder / "junk.jsonl").write_bytes(os.urandom(4096) + b"\n")
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "partial.jsonl").write_bytes(b'{"type": "user"')
    (folder / "other.jsonl").write_text('{"hello": "world"}\n')
    code, summary, _ = _cli_build(tmp_path / "ds", folder)
    assert code == 0 and summary["indexed"] == 1 and summary["skipped"] == 4
    reasons = " | ".join(summary["skipped_reasons"])
    assert "no complete line" in reasons and "no adapter recognises" in reasons
    assert _items(tmp_path / "ds") > 10


def test_damaged_lines_are_records_and_reported_by_line(tmp_path: Path, good: Path) -> None:
    lines = good.read_bytes().splitlines(keepends=True)
    lines.insert(3, b'{"type": "user", "message": \xff\xfe broken}\n')  # invalid UTF-8, not JSON
    big = {"type": "assistant", "padding": "x" * (50 * 1024 * 1024)}
    lines.insert(6, json.dumps(big).encode() + b"\n")  # a 50 MB line
    lines.insert(8, b'{"type": "some-future-record", "sessionId": "x"}\n')
    good.write_bytes(b"".join(lines))
    code, summary, stderr = _cli_build(tmp_path / "ds", good)
    assert code == 0, stderr
    assert f"{good}:4: line is not valid JSON" in stderr
    assert f"{good}:7: line is longer than the record limit" in stderr
    assert summary["unknown_record_types"] == {"some-future-record": 1}
    con = connect(tmp_path / "ds")
    statuses = dict(con.execute("SELECT parse_status, count(*) FROM records GROUP BY 1").fetchall())
    assert statuses["malformed"] == 1 and statuses["oversized"] == 1
    assert statuses["ok"] == len(lines) - 2
    assert _items(tmp_path / "ds") > 10


def _lock(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `path` unreadable (`monkeypatch.undo()` and a chmod make it readable again)."""
    if os.geteuid() != 0:
        path.chmod(0)
        return
    real_open = open

    def guarded(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    real_os_open = os.open

    def guarded_fd(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)  # root reads any file: refuse it here
    monkeypatch.setattr(os, "open", guarded_fd)


def test_an_unreadable_file_fails_alone(
    tmp_path: Path, good: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = good.parent / "locked.jsonl"
    shutil.copy(good, locked)
    _lock(locked, monkeypatch)
    report = build([good.parent], tmp_path / "ds", jobs=1)
    assert report.exit_code == 1
    failed = [r for r in report.results if r.state == "failed"]
    assert [r.locator for r in failed] == [str(locked)]
    assert failed[0].reason == "cannot read: Permission denied; check its permissions"
    assert _items(tmp_path / "ds") > 10  # the good file is published
    monkeypatch.undo()
    locked.chmod(0o644)
    again = build([good.parent], tmp_path / "ds", jobs=1)  # readable again: retried
    assert again.exit_code == 0 and again.actions["retried"] == 1


def test_an_indexed_file_that_becomes_unreadable_keeps_its_facts(
    tmp_path: Path, good: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = tmp_path / "ds"
    assert build([good.parent], dataset, jobs=1).exit_code == 0
    before = _items(dataset)
    with open(good, "ab") as out:  # it changed (an unchanged file is not opened at all)
        out.write(good.read_bytes().splitlines(keepends=True)[-1])
    _lock(good, monkeypatch)
    report = build([good.parent], dataset, jobs=1)
    assert report.exit_code == 1 and [r.state for r in report.results] == ["failed"]
    assert _items(dataset) == before  # its facts as last published
    entry = read_manifest(dataset).sources[str(good)]  # type: ignore[union-attr]
    assert entry.state == "indexed" and entry.failed.startswith("cannot read")
    monkeypatch.undo()
    good.chmod(0o644)
    again = build([good.parent], dataset, jobs=1)
    assert again.exit_code == 0 and again.actions["retried"] == 1
    assert read_manifest(dataset).sources[str(good)].failed is None  # type: ignore[union-attr]
    assert _items(dataset) >= before


def test_a_file_vanishing_mid_build_is_not_a_failure(
    tmp_path: Path, good: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doomed = good.parent / "doomed.jsonl"
    shutil.copy(good, doomed)
    real_ingest = ingest_module.ingest

    def vanish_first(locator: str, settings: Any, *rest: Any) -> Any:
        if locator == str(doomed):
            doomed.unlink()
        return real_ingest(locator, settings, *rest)

    monkeypatch.setattr("traceidx.pipeline.worker.ingest", vanish_first)
    report = build([good.parent], tmp_path / "ds", jobs=1)
    assert report.exit_code == 0 and report.actions["missing"] == 1
    assert report.totals()["dataset_sources"] == 1


def _odd_batch(good: Path) -> Path:
    """A copy of `good` whose line 41 is marked `trigger` (for a patched adapter to trip over),
    beside three plain copies (so that a batch holds several sources)."""
    odd = good.parent / "odd.jsonl"
    lines = good.read_bytes().splitlines(keepends=True)
    marked = json.loads(lines[40])
    marked["trigger"] = True
    odd.write_bytes(b"".join([*lines[:40], json.dumps(marked).encode() + b"\n", *lines[41:]]))
    for many in (good.parent / f"copy{n}.jsonl" for n in range(3)):
        shutil.copy(good, many)
    return odd


def _raise(adapter: Any) -> None:
    raise KeyError("message")


def _misfit(adapter: Any) -> None:  # a text that is not one: the rows cannot be encoded
    adapter.emit("agent.commentary", "structural", {"text": 1.5, "has_images": False}, None)


#: a bug an adapter may have on the marked record, and how the source's failure reads
BUGS = {
    "raises": (
        _raise,
        "the claude_code adapter failed on line 41: KeyError: 'message'. This is a traceidx "
        "bug: please report it with that line.",
    ),
    "misfits": (
        _misfit,
        "the claude_code adapter failed while its rows were encoded: ArrowTypeError: ",
    ),
}


@pytest.mark.parametrize("bug", sorted(BUGS))
@pytest.mark.parametrize("jobs", [1, 2])
def test_an_adapter_bug_fails_its_source_alone(
    tmp_path: Path, good: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, bug: str
) -> None:
    from traceidx.adapters import _LOADED, adapters
    from traceidx.adapters.claude_code import ClaudeCodeAdapter

    odd = _odd_batch(good)
    trip, reason = BUGS[bug]

    class Buggy(ClaudeCodeAdapter):  # the Claude Code adapter, with a bug on marked records
        record_type = None  # records decoded whole: the marker is no member the adapter reads

        def feed(self, position: int, obj: Any) -> Any:
            if isinstance(obj, dict) and obj.get("trigger"):
                trip(self)
            return super().feed(position, obj)

    assert adapters()["claude_code"] is ClaudeCodeAdapter
    monkeypatch.setitem(_LOADED, "claude_code", Buggy)
    report = build([good.parent], tmp_path / "ds", jobs=jobs)
    assert report.exit_code == 1
    failed = [r for r in report.results if r.state == "failed"]
    assert [r.locator for r in failed] == [str(odd)]
    assert failed[0].reason is not None and failed[0].reason.startswith(reason)
    assert report.count("indexed") == 4 and _items(tmp_path / "ds") > 10  # the rest is published
    entry = read_manifest(tmp_path / "ds").sources[str(odd)]  # type: ignore[union-attr]
    assert entry.state == "failed" and entry.partition is None
    monkeypatch.undo()
    again = build([good.parent], tmp_path / "ds", jobs=jobs)  # fixed: retried, and indexed
    assert again.exit_code == 0 and again.actions["retried"] == 1


def test_values_of_unexpected_types_fail_no_source(tmp_path: Path) -> None:
    # Every recognised corpus trace, with values swapped for other JSON types (a list where a
    # type tag was, a number for a text…): odd evidence, which adapters must take as it is.
    files = recognised_files(400_000)
    assert len(files) > (100 if WITH_CORPUS else 40)
    write_variants(files, tmp_path / "traces", 3)
    report = build([tmp_path / "traces"], tmp_path / "ds", jobs=2)
    assert [(r.locator, r.reason) for r in report.results if r.state == "failed"] == []
    assert report.exit_code == 0
    assert report.count("indexed") > 2 * len(files)
