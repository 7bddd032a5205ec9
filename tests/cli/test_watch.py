"""traceidx watch, as a user runs it: an appended line, a new file and a deleted file (whose
history stays) are each published within seconds; SIGTERM stops it between publishes with
the dataset at a published generation."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.files import ROOT, fixture_path, traceidx_cli
from traceidx.analysis import summary

ROOT = ROOT


def _count(dataset: Path, sql: str) -> int:
    done = traceidx_cli("sql", "--dataset", str(dataset), "--format", "json", sql)
    assert done.returncode == 0, done.stderr
    return int(next(iter(json.loads(done.stdout)[0].values())))


def _until(check: Callable[[], bool], seconds: float = 30) -> float:
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        try:
            if check():
                return time.monotonic() - start
        except AssertionError:  # no dataset yet, or a query between generations
            pass
        time.sleep(0.3)
    raise AssertionError("not published in time")


def test_watch_publishes_appends_new_and_deleted_files_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    files = sorted(fixture_path("generated", "pi").glob("*.jsonl"))[:3]
    for path in files[:2]:
        shutil.copy(path, traces / path.name)
    dataset = tmp_path / "dataset"
    command = [sys.executable, "-m", "traceidx.cli.main", "watch", "--dataset", str(dataset)]
    watcher = subprocess.Popen(
        [*command, "--debounce-ms", "300", "--jobs", "1", str(traces)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _until(lambda: (dataset / "manifest.json").exists() and _sources(dataset) == 2, 60)
        records = _count(dataset, "SELECT count(*) FROM records")
        first = traces / files[0].name
        last_line = first.read_bytes().splitlines(keepends=True)[-1]
        with open(first, "ab") as sink:  # an agent appends a line
            sink.write(last_line)
        _until(lambda: _count(dataset, "SELECT count(*) FROM records") == records + 1)
        shutil.copy(files[2], traces / files[2].name)  # a new session
        _until(lambda: _sources(dataset) == 3)
        sessions = _count(dataset, "SELECT count(*) FROM sessions")
        (traces / files[1].name).unlink()  # the runtime deletes an old transcript
        _until(lambda: _missing(dataset) == 1)
        assert _count(dataset, "SELECT count(*) FROM sessions") == sessions  # history stays
    finally:
        watcher.send_signal(signal.SIGTERM)
        out, err = watcher.communicate(timeout=60)
    assert watcher.returncode == 0, err
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) >= 4 and all("published generation" in line for line in lines)
    assert "Traceback" not in err
    status = traceidx_cli("status", "--dataset", str(dataset), "--format", "json")
    assert status.returncode == 0  # the dataset is at a published generation
    left = summary.read(dataset)  # the statusline's summary follows each publish
    assert left is not None and left["manifest"] == summary.manifest_stamp(dataset)
    assert not list(dataset.glob("**/*.partial")) and not list(dataset.glob("staging*"))


def _sources(dataset: Path) -> int:
    return _count(dataset, "SELECT count(*) FROM sources")


def _missing(dataset: Path) -> int:
    done = traceidx_cli("status", "--dataset", str(dataset), "--format", "json")
    assert done.returncode == 0, done.stderr
    return sum(r["sources"] for r in json.loads(done.stdout) if r["state"] == "missing")
