"""Shared pytest fixtures: datasets built from the committed traces, the demo and the corpus,
and the suite's options (paths and helpers live in `tests.support.files`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import traceidx
from tests.support.files import CORPUS, DATA, FIXTURES, WITH_CORPUS


@pytest.fixture(scope="session")
def demo_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset built from the demo's sample traces (every runtime of the demo)."""
    from traceidx.demo import write_demo
    from traceidx.pipeline.job import build

    root = tmp_path_factory.mktemp("demo")
    write_demo(root / "traces")
    report = build([root / "traces"], root / "dataset", jobs=2)
    assert report.exit_code == 0
    return root / "dataset"


@pytest.fixture(scope="session")
def traces_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset built from every trace at hand (every runtime an adapter supports): the
    committed fixtures, and the whole shared corpus when it is present (then without the
    committed copies of its generated traces, which are the same files)."""
    from traceidx.pipeline.job import build

    roots = [FIXTURES / "handwritten", DATA]
    roots += [CORPUS] if WITH_CORPUS else [FIXTURES / "generated"]
    dataset = tmp_path_factory.mktemp("traces") / "dataset"
    report = build([r for r in roots if r.exists()], dataset, jobs=2)
    assert report.exit_code == 0, [r.reason for r in report.results if r.state == "failed"]
    return dataset


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the expected golden files from the current output",
    )


def pytest_sessionstart(session: pytest.Session) -> None:
    """`TRACEIDX_BUILD=compiled|pure` says which build the suite must be testing."""
    wanted = os.environ.get("TRACEIDX_BUILD")
    have = "compiled" if traceidx.compiled() else "pure"
    if wanted and wanted != have:
        raise pytest.UsageError(
            f"TRACEIDX_BUILD={wanted}, but the traceidx imported ({traceidx.__file__}) is {have}"
        )
