"""A build command converts rows to Arrow without importing pandas, and pandas still works."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.files import fixture_path

SCRIPT = """
import json, sys
from traceidx.cli.main import main
code = main(["build", sys.argv[1], "--dataset", sys.argv[2], "--jobs", "2", "--format", "json"])
before = "pandas" in sys.modules
import pyarrow as pa
frame = pa.table({"a": [1, None]}).to_pandas()
print(json.dumps({"code": code, "pandas_during_build": before, "rows": len(frame),
                  "back": pa.array(frame["a"]).null_count}))
"""


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas not installed")
def test_a_build_command_leaves_pandas_unimported_and_usable(tmp_path: Path) -> None:
    traces = fixture_path("generated", "claude")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(traces), str(tmp_path / "ds")],
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["code"] == 0
    assert found["pandas_during_build"] is False  # neither the build process nor its workers
    assert found["rows"] == 2 and found["back"] == 1  # pyarrow imports it once asked for it
