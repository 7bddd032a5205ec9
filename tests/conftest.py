"""Shared pytest fixtures: datasets built from the committed traces, the demo and the corpus,
and the suite's options (paths and helpers live in `tests.support.files`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

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


#: the test modules that start a service or a browser, build a wheel or run benchmarks: marked
#: `slow` (`make check` leaves them out; `make test`, which CI runs, runs everything)
SLOW_MODULES = frozenset(
    {
        "tests/analysis/test_html.py",  # Chromium renders every report
        "tests/analysis/test_otel_phoenix.py",  # a Phoenix server ingests the whole export
        "tests/cli/test_mcp_inspector.py",  # the MCP Inspector (Node) drives the server
        "tests/pipeline/test_engines.py",  # a local Ray cluster
        "tests/store/test_object_storage.py",  # moto's S3 server
        "tests/store/test_store.py",  # both stores against moto's S3 server
        "tests/test_benchmarks.py",  # the benchmark runners' smoke runs
        "tests/test_notebooks.py",  # the notebooks executed in a kernel
    }
)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Every test starts without ``COLUMNS``: the width a table fits is the test's to set, not
    the environment's (a library a test loads may set it, and a worker runs many modules)."""
    os.environ.pop("COLUMNS", None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of `SLOW_MODULES` slow (a test may also carry the mark itself)."""
    root = Path(str(config.rootpath))
    for item in items:
        if str(item.path.relative_to(root)) in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


# -- object storage: moto's standalone S3 server ------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """A moto S3 server on a free port of 127.0.0.1; the AWS variables that reach it (also set
    in this process while the module runs). Skips without moto's server or boto3."""
    pytest.importorskip("moto", reason="the dev extra (moto[server]) is not installed")
    pytest.importorskip("boto3", reason="the s3 extra (boto3) is not installed")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{env['AWS_ENDPOINT_URL']}/moto-api/", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("moto's S3 server did not start") from None
                time.sleep(0.2)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            yield env
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    finally:
        server.terminate()
        server.wait(timeout=30)
