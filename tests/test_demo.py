"""The demo corpus as a whole: every runtime has a generator, and the CLI writes them all."""

from __future__ import annotations

from pathlib import Path

import pytest

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
