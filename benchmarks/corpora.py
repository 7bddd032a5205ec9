"""Benchmark corpora: real traces copied until a target size, each copy made unique.

* ``scaled(root, megabytes, short_sessions)`` copies the demo's sample (real traces of all four
  runtimes, shipped in ``traceidx/demo/sample``) until the target size is reached; copy *k* has
  every id rewritten (`traceidx.demo.copy_ids`) and every time moved back *k* days
  (`traceidx.demo.shift`), so sessions, requests and calls are unique across copies while every
  line keeps its real shape and size. With ``short_sessions``, only the sample's smaller half of
  files is copied: many small sources.
* ``real_shaped(root, public_claude, copies)`` copies the public Claude Code transcripts
  ``copies`` times, ids rewritten the same way.
"""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path

from traceidx.demo import SAMPLE, copy_ids, copy_sample, is_trace, sample_files


def trace_files(root: Path) -> list[Path]:
    """Every trace file under `root` (plain or zstd), sorted."""
    suffixes = (".jsonl", ".jsonl.zst", ".jsonl.zstd")
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith(suffixes))


def size_of(files: list[Path]) -> int:
    return sum(p.stat().st_size for p in files)


def sample_subset(short_sessions: bool) -> list[Path]:
    """The sample's files to copy: all of them, or the smaller half of its trace files."""
    files = sample_files()
    if not short_sessions:
        return files
    traces = [f for f in files if is_trace(f)]
    median = statistics.median((SAMPLE / f).stat().st_size for f in traces)
    return [f for f in traces if (SAMPLE / f).stat().st_size <= median]


def scaled(root: Path, megabytes: float, short_sessions: bool = False) -> list[Path]:
    """Copies of the sample under `root`/copy-NNNN, at least `megabytes` MB of trace files."""
    shutil.rmtree(root, ignore_errors=True)
    chosen = sample_subset(short_sessions)
    target, size, k = megabytes * 1e6, 0, 0
    while size < target:
        k += 1
        written = copy_sample(
            root / f"copy-{k:04d}", -k, edit=lambda data, k=k: copy_ids(data, k), only=chosen
        )
        size += size_of([p for paths in written.values() for p in paths])
    return trace_files(root)


def real_shaped(root: Path, public_claude: Path, copies: int) -> list[Path]:
    """`copies` id-unique copies of the public Claude Code transcripts under `root`."""
    sources = sorted(public_claude.glob("*.jsonl"))
    for k in range(copies):
        folder = root / f"copy-{k:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        for source in sources:
            (folder / source.name).write_bytes(copy_ids(source.read_bytes(), k + 1))
    return trace_files(root)
