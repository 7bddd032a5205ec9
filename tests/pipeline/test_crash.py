"""Crash safety: a build killed at any point leaves the previous dataset whole; the next recovers.

Each case runs a real `traceidx build` subprocess that SIGKILLs itself at a named fault point
(``TRACEIDX_FAULT``): while reading a source, after writing a part, just before the manifest
swap, and just after it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.files import fixture_path, traceidx_cli
from traceidx.analysis.query import connect
from traceidx.pipeline.job import build
from traceidx.store.dataset import read_manifest


def _rows(dataset: Path) -> dict[str, int]:
    con = connect(dataset)
    return {
        v: con.execute(f"SELECT count(*) FROM {v}").fetchall()[0][0]
        for v in ("sources", "records", "sessions", "loops", "items")
    }


def _files_on_disk(dataset: Path) -> set[str]:
    return {str(p.relative_to(dataset)) for p in dataset.rglob("*.parquet")}


@pytest.mark.parametrize("point", ["ingest", "write", "swap", "collect"])
def test_a_killed_build_keeps_the_previous_generation(tmp_path: Path, point: str) -> None:
    traces = tmp_path / "traces"
    shutil.copytree(fixture_path("generated", "claude", "s1-aurora"), traces / "a")
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    before, generation = _rows(dataset), read_manifest(dataset).generation  # type: ignore[union-attr]
    shutil.copytree(fixture_path("generated", "claude", "s1-fjord"), traces / "b")
    done = traceidx_cli(
        "build",
        "--dataset",
        str(dataset),
        "--jobs",
        "1",
        str(traces),
        env={"TRACEIDX_FAULT": point},
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    manifest = read_manifest(dataset)
    assert manifest is not None
    if point == "collect":  # killed after the swap: the new generation is complete
        assert manifest.generation == generation + 1
        assert _rows(dataset)["sessions"] > before["sessions"]
    else:
        assert manifest.generation == generation and _rows(dataset) == before
    for files in manifest.tables().values():
        for f in files:
            pq.read_metadata(dataset / f)  # every listed part is complete
    report = build([traces], dataset, jobs=1)  # recovers and cleans up
    assert report.exit_code == 0
    fresh = tmp_path / "fresh"
    build([traces], fresh, jobs=1)
    assert _rows(dataset) == _rows(fresh)
    manifest = read_manifest(dataset)
    assert manifest is not None
    kept = {f.path for f in manifest.part_files()} | set(manifest.previous)
    assert _files_on_disk(dataset) <= kept
    assert not list(dataset.glob(".staging-*"))


def test_a_concurrent_build_is_refused(tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    dataset.mkdir()
    fd = os.open(dataset / ".lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = traceidx_cli(
            "build", "--dataset", str(dataset), str(fixture_path("generated", "claude"))
        )
    finally:
        os.close(fd)
    assert done.returncode == 3
    assert "being built by another traceidx process" in done.stderr
    assert done.stderr.count("\n") == 1
    assert done.stderr.count("wait") == 1  # the next step, said once


def test_a_reader_keeps_its_generation_while_a_build_publishes(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    shutil.copytree(fixture_path("generated", "claude", "s1-aurora"), traces / "a")
    dataset = tmp_path / "ds"
    build([traces], dataset, jobs=1)
    reader = connect(dataset)
    count = "SELECT count(*) FROM items"
    before = reader.execute(count).fetchall()[0][0]
    shutil.copytree(fixture_path("generated", "claude", "s1-fjord"), traces / "b")
    build([traces], dataset, jobs=1)
    assert reader.execute(count).fetchall()[0][0] == before  # old generation, still readable
    assert connect(dataset).execute(count).fetchall()[0][0] > before
