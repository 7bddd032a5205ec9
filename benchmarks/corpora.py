"""Benchmark corpora: the demo generator at a target size, and a real-shaped Claude corpus.

* ``generated(root, megabytes, seed, long_sessions)`` writes the demo corpus (every runtime
  the demo supports, deterministic by seed), growing the number of sessions until the target
  size is reached; without long sessions it is many small sources.
* ``real_shaped(root, public_claude, copies)`` copies the public Claude Code transcripts
  ``copies`` times; in copy *k* every UUID and every ``msg_``/``req_`` id is rewritten
  deterministically, so sessions, requests and messages are unique across copies while the
  shape of every line (and its size, to the byte) stays real.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from traceidx.demo import generate_corpus

_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_NATIVE = re.compile(rb"\b(msg_|req_|toolu_)([A-Za-z0-9]{6})")


def trace_files(root: Path) -> list[Path]:
    """Every trace file under `root` (plain or zstd), sorted."""
    suffixes = (".jsonl", ".jsonl.zst", ".jsonl.zstd")
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith(suffixes))


def size_of(files: list[Path]) -> int:
    return sum(p.stat().st_size for p in files)


def generated(
    root: Path, megabytes: float, seed: int = 1, long_sessions: bool = True
) -> list[Path]:
    """A demo corpus of at least `megabytes` MB of trace files under `root` (without
    `long_sessions`, short sessions only: many small sources)."""
    probe = root / "_probe"
    count = 16
    written = generate_corpus(probe, sessions=count, seed=seed, long_sessions=long_sessions)
    per_session = size_of([p for ps in written.values() for p in ps]) / (count * len(written))
    shutil.rmtree(probe)
    target = megabytes * 1e6
    sessions = max(1, int(target / per_session / len(written)) + 1)
    while True:  # the probe only estimates: grow until the target is reached
        files = _generate(root / "corpus", sessions, seed, long_sessions)
        size = size_of(files)
        if size >= target:
            return files
        sessions = int(sessions * target / size * 1.02) + 1


def _generate(folder: Path, sessions: int, seed: int, long_sessions: bool) -> list[Path]:
    shutil.rmtree(folder, ignore_errors=True)
    generate_corpus(folder, sessions=sessions, seed=seed, long_sessions=long_sessions)
    return trace_files(folder)


def copy_line_ids(data: bytes, k: int) -> bytes:
    """Claude Code lines with every UUID and native id made unique to copy `k` (same sizes)."""
    tag = b"%04x" % k
    data = _UUID.sub(lambda m: tag + m.group(0)[4:], data)
    return _NATIVE.sub(lambda m: m.group(1) + tag[:2] + m.group(2)[2:], data)


def real_shaped(root: Path, public_claude: Path, copies: int) -> list[Path]:
    """`copies` id-unique copies of the public Claude Code transcripts under `root`."""
    sources = sorted(public_claude.glob("*.jsonl"))
    for k in range(copies):
        folder = root / f"copy-{k:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        for source in sources:
            (folder / source.name).write_bytes(copy_line_ids(source.read_bytes(), k + 1))
    return trace_files(root)
