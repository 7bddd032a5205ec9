"""The demo corpus as a whole: every runtime has a generator, and the CLI writes them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import corpus_path
from traceidx.demo import GENERATORS, generate_corpus, main
from traceidx.model import RUNTIMES


def test_generators_are_known_runtimes() -> None:
    assert set(GENERATORS) <= set(RUNTIMES)


def test_corpus_is_one_folder_per_runtime(tmp_path: Path) -> None:
    written = generate_corpus(tmp_path, sessions=2, seed=1)
    assert set(written) == set(GENERATORS)
    for runtime, paths in written.items():
        assert paths, runtime
        assert all(p.is_relative_to(tmp_path / runtime) for p in paths)


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "cli"), "--sessions", "2", "--seed", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    again = generate_corpus(tmp_path / "api", sessions=2, seed=5)
    assert [line.split(":")[0] for line in out] == list(again)
    for line, paths in zip(out, again.values(), strict=True):
        size = sum(p.stat().st_size for p in paths)
        assert f": {len(paths)} files, {size} bytes" in line


# The public corpus folder holding each runtime's real transcripts (dsh has only test snapshots
# there, so its session lengths have nothing real to be held against).
REAL_FOLDERS = {"claude_code": "claude", "codex": "codex", "pi": "pi"}


def _session_lengths(paths: list[Path]) -> list[tuple[int, int]]:
    """(lines, bytes) of each session file."""
    rows = []
    for path in paths:
        data = path.read_bytes()
        rows.append((data.count(b"\n"), len(data)))
    return rows


def _long_share(rows: list[tuple[int, int]]) -> float:
    """The share of the bytes that lie in sessions of 500 lines or more."""
    return sum(size for lines, size in rows if lines >= 500) / sum(size for _, size in rows)


@pytest.mark.parametrize("runtime", sorted(REAL_FOLDERS))
def test_session_lengths_calibrated_to_real_transcripts(runtime: str, tmp_path: Path) -> None:
    # Most real sessions are short, yet most of the bytes lie in long working sessions.
    real = _session_lengths(sorted(corpus_path("public", REAL_FOLDERS[runtime]).rglob("*.jsonl")))
    made = _session_lengths(
        generate_corpus(tmp_path, sessions=64, seed=2, runtimes=[runtime])[runtime]
    )
    assert abs(_long_share(made) - _long_share(real)) <= 0.2, (_long_share(made), _long_share(real))
    median = sorted(lines for lines, _ in made)[len(made) // 2]
    assert median < 100, median
