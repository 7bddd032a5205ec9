"""Where test inputs live, and the command as a user runs it.

``tests/fixtures/`` is committed and always present: ``generated/`` holds byte-identical copies
of a few traces of the shared corpus's ``generated/`` (same layout, so a test reads a fixture the
way it would read the corpus), ``handwritten/`` small traces typed for shapes that only
``public/`` shows, ``golden/`` the golden cases, ``data/`` small inputs of single tests. The
shared corpus (``TRACEIDX_CORPUS`` or ``../shared/corpus``) is optional: only the corpus-wide
tests read it, and they skip without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: the repository's root (the checkout the tests run in)
ROOT = Path(__file__).resolve().parents[2]
#: the shared corpus: ``TRACEIDX_CORPUS``, else ``../shared/corpus`` beside the checkout
CORPUS = Path(os.environ.get("TRACEIDX_CORPUS") or ROOT.parent / "shared" / "corpus")


#: whether the shared corpus is here (corpus-wide tests skip without it; tests over every trace at
#: hand then demand corpus-sized counts)
WITH_CORPUS = CORPUS.is_dir()

#: the committed trace fixtures (always present)
FIXTURES = ROOT / "tests" / "fixtures"
#: small hand-made traces and inputs of single tests (always present)
DATA = FIXTURES / "data"
#: the golden cases: inputs and their expected projections (``golden/<runtime>/cases.json``)
GOLDEN = FIXTURES / "golden"


def fixture_path(*parts: str) -> Path:
    """A path inside the committed fixtures (``tests/fixtures``); it must exist."""
    path = FIXTURES.joinpath(*parts)
    assert path.exists(), f"missing committed fixture: {path}"
    return path


def generated(runtime: str) -> Path:
    """A runtime's folder of the generated set (`runtime`: claude, codex, pi, dsh) with its
    ground truth (``manifest.json``): the shared corpus's whole set when it is present, else the
    committed copies of a few of its traces with the ground truth of just those."""
    return (CORPUS if WITH_CORPUS else FIXTURES) / "generated" / runtime


def corpus_path(*parts: str) -> Path:
    """A path inside the shared corpus; skips the test when the corpus is absent."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"corpus not available: {path}")
    return path


def traceidx_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300, umask: int | None = None
) -> subprocess.CompletedProcess[str]:
    """The `traceidx` command as a user runs it (a child process), with extra environment
    variables and a umask if given."""

    def preexec() -> None:
        if umask is not None:
            os.umask(umask)

    return subprocess.run(
        [sys.executable, "-m", "traceidx.cli.main", *args],
        capture_output=True,
        text=True,
        # the width a table fits is the test's to set (COLUMNS), not the terminal's it runs in
        env={**{k: v for k, v in os.environ.items() if k != "COLUMNS"}, **(env or {})},
        timeout=timeout,
        preexec_fn=preexec,
        check=False,
    )


def s3_bucket(env: dict[str, str], name: str) -> None:
    """Create a bucket on the `s3` fixture's server."""
    import boto3

    boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"]).create_bucket(Bucket=name)
